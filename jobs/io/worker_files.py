"""Commit lines the reader has checked, landed by the reader itself (the embedded lake).

The commit-event reader pre-parses and checks nearly every line in Arrow
(:mod:`pipelines.ingest.commit_preparse`). On the embedded lake (a local Delta table, a local
master) it also writes those lines' bronze rows to Parquet from the Python worker, and
sends Spark only the other lines: Spark does not convert, parse, cache or rewrite rows whose
every value is already known. The files are written into a staging directory of
bronze/offset_commits, partitioned by ``commit_date`` as Spark's writer would, and are
committed to the table in the same Delta transaction as the rows Spark lands
(:meth:`jobs.io.lake.Lake.append`'s ``files``).

Each file holds the lines of one landed file, one date and one batch of lines, and is named
by them: a task that runs again (a retry, a recomputed cache) writes the same files under
the same names. Each file's footer says whose lines it holds (``FILE_METADATA_KEY``), so the
ingest's per-file accounting adds them from the footers, without reading a row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.tables import TableSpec

FILE_METADATA_KEY = b"offsetlake.source_file"


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


def write_part(
    directory: str, spec: TableSpec, rows: pa.Table, name: str, metadata: dict[bytes, bytes] | None = None
) -> None:
    """Write ``rows`` (of one value of ``spec``'s partition column, which they hold) as the
    Parquet file ``name`` in its partition's directory under ``directory``, as Spark's writer
    would lay it out, with ``metadata`` in its footer. A file is there whole or not at all, and
    writing it again (a retried task) replaces it.

    A dictionary-encoded text column (the replay's queue and file text: pipelines.replay.kernel.Names)
    is written as text, each of the file's values once: its dictionary's other values are left out,
    and so is Arrow's schema, which would have Arrow's readers read the column back as a dictionary."""
    (partition,) = spec.partition_by
    target_dir = Path(directory) / f"{partition}={rows.column(partition)[0].as_py().isoformat()}"
    target_dir.mkdir(parents=True, exist_ok=True)
    data = rows.drop_columns([partition])
    if metadata:
        data = data.replace_schema_metadata(metadata)
    encoded = [pa.types.is_dictionary(t) for t in data.schema.types]
    if any(encoded):
        data = pa.table(
            [_own_values(c) if e else c for c, e in zip(data.columns, encoded, strict=True)],
            schema=data.schema,
        )
    target = target_dir / f"{name}.parquet"
    written = target.with_suffix(f".{os.getpid()}.tmp")
    with pq.ParquetWriter(
        written,
        data.schema,
        compression="zstd",
        use_dictionary=[c for c in data.column_names if c not in spec.high_cardinality],
        write_statistics=True,
        store_schema=not any(encoded),
    ) as writer:
        writer.write_table(data)
        if metadata:  # in the footer itself too: without Arrow's schema, the schema's metadata is not written
            writer.add_key_value_metadata(metadata)
    written.replace(target)


def _own_values(column: pa.ChunkedArray) -> pa.DictionaryArray:
    """A dictionary-encoded column (its chunks of one dictionary, as the replay's are) with only the
    dictionary values its rows use; a row whose value is null has a null index (Parquet's writer
    takes no null in a dictionary)."""
    column = column.combine_chunks()
    if not len(column.dictionary):  # every row null
        return column
    indices = column.indices
    codes = pc.fill_null(indices, 0).to_numpy(zero_copy_only=False)
    valid = pc.is_valid(indices).to_numpy(zero_copy_only=False)
    valid &= pc.is_valid(column.dictionary).to_numpy(zero_copy_only=False)[codes]
    used = np.zeros(len(column.dictionary), bool)
    used[codes[valid]] = True
    renumbered = (np.cumsum(used) - 1)[codes]
    return pa.DictionaryArray.from_arrays(
        pa.array(renumbered, column.type.index_type, mask=~valid), column.dictionary.filter(pa.array(used))
    )


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
        count = FileCount(meta.num_rows, 0, _utc(low), _utc(high))
        counts[source_file] = counts[source_file].plus(count) if source_file in counts else count
    return counts


def _utc(value: datetime | None) -> datetime | None:
    """A Parquet statistic of a UTC timestamp column (pyarrow gives it with its zone) as an aware instant."""
    return None if value is None else value.astimezone(UTC)
