"""What every Delta engine of the lake offers (:class:`DeltaEngine`), and the helpers they share.

jobs.io.lake picks the engine; nothing above the lake knows which one is in use.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from schemas.statistics import TableStatistics
from schemas.tables import TableSpec


class DeltaEngine(Protocol):
    """Table I/O on one Delta table at ``path`` (declared by ``spec``); the writes are atomic Delta commits."""

    def exists(self, path: str) -> bool: ...

    def read(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> DataFrame:
        """The table's rows; the engine may skip files that hold no row of ``[start, end)``."""
        ...

    def row_count(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> int: ...

    def distinct(
        self,
        path: str,
        spec: TableSpec,
        columns: tuple[str, ...],
        start: datetime | None,
        end: datetime | None,
    ) -> DataFrame:
        """The distinct rows of ``columns`` (no partition column) among the table's rows in ``[start, end)``."""
        ...

    def statistics(
        self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None
    ) -> TableStatistics | None:
        """The Delta log's statistics of the files a read of ``[start, end)`` takes, without a
        scan; None where the engine does not read them."""
        ...

    def version(self, path: str) -> int:
        """The table's latest Delta version."""
        ...

    def read_version(self, path: str, spec: TableSpec, version: int) -> DataFrame:
        """The table's rows as of ``version`` (Delta time travel); VersionUnavailable when its log
        or files are gone (cleaned up, vacuumed)."""
        ...

    def stored_columns(self, path: str) -> list[str]:
        """The columns the table's Delta log declares (a table an earlier version wrote may differ)."""
        ...

    def worker_dir(self, path: str, name: str) -> str | None:
        """A directory for worker files of the table (jobs.io.worker_files), or None where the engine takes none."""
        ...

    def append(
        self, path: str, spec: TableSpec, df: DataFrame, once_as: str | None, worker_files: str | None
    ) -> bool: ...

    def replace_range(
        self,
        path: str,
        spec: TableSpec,
        df: DataFrame | None,
        start: datetime,
        end: datetime,
        worker_files: str | None,
    ) -> None: ...

    def overwrite(self, path: str, spec: TableSpec, df: DataFrame) -> None: ...

    def merge(self, path: str, spec: TableSpec, df: DataFrame, keys: tuple[str, ...]) -> None: ...

    def merge_rows(self, path: str, spec: TableSpec, rows: list[tuple], keys: tuple[str, ...]) -> None:
        """``merge`` of rows the driver holds (tuples in ``spec``'s column order)."""
        ...

    def drop(self, path: str) -> None:
        """Remove the table, its log and its files."""
        ...

    def discard_unfinished_writes(self, root: str) -> None:
        """Remove what writes to the tables under ``root`` that never committed left behind (the
        caller holds the lake: no other write is under way)."""
        ...

    def maintain(
        self, path: str, spec: TableSpec, retention: timedelta, zorder_by: tuple[str, ...]
    ) -> TableMaintenance:
        """Compact small files (Z-ordered by ``zorder_by`` when given), checkpoint the log, clean
        up expired log files and vacuum files removed longer than ``retention`` ago."""
        ...


class LakeError(RuntimeError):
    """The lake cannot be used as asked; the message says what to fix."""


class VersionUnavailable(LakeError):
    """A table's earlier version can no longer be read: its log entries were cleaned up, or its
    files vacuumed."""


def refuse_vacuumed(path: str, version: int, gone: list[str]) -> None:
    """A VersionUnavailable when ``gone`` (files of ``version`` no longer there) holds any: Spark
    would find a vacuumed file missing only when it runs, so the engines look first."""
    if gone:
        raise VersionUnavailable(
            f"{path} version {version}: {len(gone)} of its files vacuumed ({gone[0]}, ...)"
        )


# Delta's own default (delta.deletedFileRetentionDuration, the check VACUUM enforces): far longer
# than any run (the DAG's execution_timeout is 3 hours), so a vacuum never removes a file a
# running reader was planned on, and every version younger than the retention stays readable.
MIN_RETENTION = timedelta(hours=168)


class RetentionTooShortError(LakeError):
    """A vacuum retention below :data:`MIN_RETENTION`."""


def check_retention(retention: timedelta) -> None:
    if retention < MIN_RETENTION:
        hours = MIN_RETENTION.total_seconds() / 3600
        raise RetentionTooShortError(
            f"a vacuum retention of {retention} is shorter than the safe minimum of {hours:.0f} hours "
            f"(PT{hours:.0f}H): a shorter one could remove files a running reader or a time travel "
            "inside the retention still needs; pass --retention PT168H or longer"
        )


@dataclass(frozen=True)
class TableMaintenance:
    """What a maintenance did to one table: active files and their bytes, the Delta log's size
    (None where the engine cannot see it), before and after."""

    table: str
    files_before: int
    files_after: int
    bytes_before: int
    bytes_after: int
    log_bytes_before: int | None
    log_bytes_after: int | None
    vacuumed_files: int
    zordered: bool = False


def conform(df: DataFrame, spec: TableSpec) -> DataFrame:
    """Select ``spec``'s columns in order and types; a missing column is an error."""
    missing = [c for c in spec.columns if c not in df.columns]
    if missing:
        raise LakeError(f"cannot write {spec.path}: columns {missing} are missing from the data")
    return df.select(*[F.col(f.name).cast(f.dataType).alias(f.name) for f in spec.schema.fields])


def require_event_time(spec: TableSpec) -> str:
    """``spec``'s event-time column: a table without one has no range to select."""
    if spec.event_time is None:
        raise LakeError(f"{spec.path} has no event time column to select a range on")
    return spec.event_time


def in_range(spec: TableSpec, start: datetime | None, end: datetime | None) -> Column:
    """Condition ``start <= event_time < end`` on ``spec`` (either bound optional)."""
    column = F.col(require_event_time(spec))
    condition = F.lit(True)
    if start is not None:
        condition = condition & (column >= F.lit(start))
    if end is not None:
        condition = condition & (column < F.lit(end))
    return condition


def rows_in_range(df: DataFrame, spec: TableSpec, start: datetime | None, end: datetime | None) -> DataFrame:
    """``df``'s rows with ``start <= event_time < end`` (every row when neither bound is given)."""
    return df if start is None and end is None else df.where(in_range(spec, start, end))
