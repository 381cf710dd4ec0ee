"""Commit lines the reader has checked, landed by the reader itself (the embedded lake).

The commit-event reader pre-parses and checks nearly every line in Arrow
(:mod:`pipelines.commit_preparse`). On the embedded lake (a local Delta table, a local
master) it also writes those lines' bronze rows to Parquet from the Python worker, and
sends Spark only the other lines: Spark does not convert, parse, cache or rewrite rows whose
every value is already known. The files are written into a staging directory of
bronze/offset_commits, partitioned by ``commit_date`` as Spark's writer would, and are
committed to the table in the same Delta transaction as the rows Spark lands
(:meth:`jobs.lake.Lake.append`'s ``files``).

Each file holds the lines of one landed file, one date and one batch of lines, and is named
by them: a task that runs again (a retry, a recomputed cache) writes the same files under
the same names. Each file's footer says whose lines it holds (``FILE_METADATA_KEY``), so the
ingest's per-file accounting adds them from the footers, without reading a row.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipelines.commit_events import CHECKED
from pipelines.commit_preparse import checked_commit_rows
from pipelines.quarantine import FILE_NUMBER
from schemas.tables import OFFSET_COMMITS, TableSpec

FILE_METADATA_KEY = b"offsetlake.source_file"


def utc(value: datetime | None) -> datetime | None:
    """An instant as an aware UTC datetime (a naive one, as PySpark collects timestamps, is local time)."""
    return None if value is None else value.astimezone(timezone.utc)


@dataclass(frozen=True)
class FileCount:
    """One landed file's accounting: records landed and quarantined, the landed event-time range."""

    records_landed: int
    records_quarantined: int
    event_min_at: datetime | None
    event_max_at: datetime | None

    def plus(self, other: FileCount) -> FileCount:
        def least(a, b):
            return b if a is None else a if b is None else min(a, b)

        def greatest(a, b):
            return b if a is None else a if b is None else max(a, b)

        return FileCount(
            self.records_landed + other.records_landed,
            self.records_quarantined + other.records_quarantined,
            least(self.event_min_at, other.event_min_at),
            greatest(self.event_max_at, other.event_max_at),
        )


@dataclass(frozen=True)
class ReaderLanding:
    """Where the reader writes the checked lines' rows (``directory``, local), for one ingest run."""

    directory: str
    run_id: str

    def land(self, batch: pa.RecordBatch, files: Mapping[int, tuple[str, str, str]]) -> pa.RecordBatch:
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
        write_part(self.directory, OFFSET_COMMITS, rows, f"part-{number:06d}-{first_line:012d}", {FILE_METADATA_KEY: source_file.encode()})


def write_part(directory: str, spec: TableSpec, rows: pa.Table, name: str, metadata: dict[bytes, bytes] | None = None) -> None:
    """Write ``rows`` (of one value of ``spec``'s partition column, which they hold) as the
    Parquet file ``name`` in its partition's directory under ``directory``, as Spark's writer
    would lay it out. A file is there whole or not at all, and writing it again (a retried
    task) replaces it."""
    (partition,) = spec.partition_by
    target_dir = Path(directory) / f"{partition}={rows.column(partition)[0].as_py().isoformat()}"
    target_dir.mkdir(parents=True, exist_ok=True)
    data = rows.drop_columns([partition])
    if metadata:
        data = data.replace_schema_metadata(metadata)
    target = target_dir / f"{name}.parquet"
    written = target.with_suffix(f".{os.getpid()}.tmp")
    pq.write_table(
        data,
        written,
        compression="zstd",
        use_dictionary=[c for c in data.column_names if c not in spec.high_cardinality],
        write_statistics=True,
    )
    written.replace(target)


def landed_counts(directory: str) -> dict[str, FileCount]:
    """Accounting of the rows the reader landed in ``directory``, per landed file, from the
    Parquet footers (row counts and the statistics of ``committed_at``)."""
    counts: dict[str, FileCount] = {}
    for path in sorted(Path(directory).rglob("*.parquet")):
        meta = pq.ParquetFile(path).metadata
        source_file = meta.metadata[FILE_METADATA_KEY].decode()
        at = meta.schema.to_arrow_schema().get_field_index("committed_at")
        low = high = None
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(at).statistics
            low = stats.min if low is None else min(low, stats.min)
            high = stats.max if high is None else max(high, stats.max)
        count = FileCount(meta.num_rows, 0, utc(low), utc(high))
        counts[source_file] = counts[source_file].plus(count) if source_file in counts else count
    return counts
