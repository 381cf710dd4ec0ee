"""Commit lines the reader has checked, written to bronze/offset_commits by the reader itself.

The commit-event reader pre-parses and checks nearly every line in Arrow
(:mod:`pipelines.ingest.commit_preparse`). On the embedded lake it also writes those lines'
bronze rows as worker files (:mod:`jobs.io.worker_files`) and sends Spark only the other
lines: Spark does not convert, parse, cache or rewrite rows whose every value is already
known. Each file holds the lines of one landed file, one date and one batch of lines, and is
named by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jobs.io.worker_files import FILE_METADATA_KEY, write_part
from pipelines.ingest.commit_events import CHECKED
from pipelines.ingest.commit_preparse import checked_commit_rows
from pipelines.ingest.quarantine import FILE_NUMBER
from schemas.tables import OFFSET_COMMITS


@dataclass(frozen=True)
class CheckedCommitWriter:
    """Where the reader writes the checked lines' rows (``directory``, a worker directory), for one ingest run."""

    directory: str
    run_id: str

    def write(self, batch: pa.RecordBatch, files: Mapping[int, tuple[str, str, str]]) -> pa.RecordBatch:
        """Write ``batch``'s checked lines as bronze rows; return its other lines.

        ``files``: each file number's ``(source_file, cluster, _file_hash)``.
        """
        checked = batch.column(CHECKED)
        if not pc.any(checked).as_py():
            return batch
        rows = checked_commit_rows(batch.filter(checked), files, self.run_id)
        numbers = batch.column(FILE_NUMBER).filter(checked).to_numpy()
        dates = rows.column("commit_date").cast(pa.int32()).to_numpy()
        lines = rows.column("line_no").to_numpy()
        # one file per (landed file, date): the batch's rows are in file order
        group = np.flatnonzero((np.diff(numbers) != 0) | (np.diff(dates) != 0)) + 1
        for start, stop in zip(np.r_[0, group], np.r_[group, len(numbers)]):
            part = rows.slice(start, stop - start)
            self._write(part, files[int(numbers[start])][0], int(lines[start]), int(numbers[start]))
        return batch.filter(pc.invert(checked))

    def _write(self, rows: pa.Table, source_file: str, first_line: int, number: int) -> None:
        write_part(
            self.directory,
            OFFSET_COMMITS,
            rows,
            f"part-{number:06d}-{first_line:012d}",
            {FILE_METADATA_KEY: source_file.encode()},
        )
