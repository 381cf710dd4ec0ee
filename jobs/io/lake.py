"""Table I/O: the only code that knows which Delta Lake engine is in use.

Two engines give the same tables (``<root>/<layer>/<table>``, readable by any Delta reader):

- ``spark``: native Spark Delta (``delta-spark``), used when Delta's Spark extension is on
  the classpath (a cluster, Databricks, ``--packages``).
- ``delta-rs``: the embedded default. Spark still does all computing and writes the Parquet
  files from its executors; ``deltalake`` (delta-rs) commits those files to the Delta log,
  and reads go through the table's active files back into Spark. The driver holds no table
  data but the run's own records, which it builds (``merge_rows``), and the small
  dictionaries it reads from a table's files (``distinct``: a few batches at a time).

Before any session starts, :func:`rows_in_delta_logs` counts a job's rows from the tables' Delta logs
through delta-rs, whichever engine wrote them (any Delta reader can).

Write modes, all atomic Delta commits::

    lake.append(OFFSET_COMMITS, df)                       # add rows
    lake.append(OFFSET_COMMITS, df, once_as="batch-42")   # add rows at most once
    lake.append(OFFSET_COMMITS, df, worker_files=d)       # and the Parquet files of worker_dir()
    lake.replace_range(OFFSET_COMMITS, df, start, end)    # replaceWhere start <= event_time < end
    lake.overwrite(REPLAY_CHECKPOINTS, df)                # replace the whole table
    lake.merge(INGEST_RUNS, df)                           # upsert on the table's keys
    lake.merge_rows(INGEST_RUNS, rows)                    # the same, of the driver's own tuples

Maintenance (compaction, log checkpoint and clean-up, vacuum; the caller holds the lake's lock)::

    lake.maintain(OFFSET_COMMITS, retention=timedelta(days=7), zorder=True)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from jobs.io.engines import (
    DeltaEngine,
    LakeError,
    TableMaintenance,
    check_retention,
    conform,
    require_event_time,
    rows_in_range,
)
from jobs.io.engines.delta_rs import DeltaRsEngine, rows_in_log
from jobs.io.engines.native import NativeDeltaEngine
from jobs.runtime.session import native_delta_available
from schemas.statistics import TableStatistics
from schemas.tables import QUEUE_KEY, TableSpec

EngineName = Literal["auto", "spark", "delta-rs"]


def lake_root(root: str | Path) -> str:
    """The lake's root as every table path starts: a URI as given, a local path absolute."""
    return str(root) if "://" in str(root) else str(Path(root).resolve())


def rows_in_delta_logs(
    root: str | Path,
    read: Sequence[TableSpec],
    start: datetime | None,
    end: datetime | None,
    rewrites: Sequence[TableSpec] = (),
) -> int | None:
    """How many rows a job over ``[start, end)`` takes from the lake at ``root``: the rows of the
    files it reads of ``read``'s tables, and of the files a replace of the range rewrites of
    ``rewrites``' (those it drops whole it does not read). Told by the Delta logs alone, before
    any Spark session starts, whichever engine wrote them; None where a log cannot tell (see
    jobs.io.engines.delta_rs.rows_in_log)."""
    root = lake_root(root)
    taken = [(spec, False) for spec in read] + [(spec, True) for spec in rewrites]
    counts = [
        rows_in_log(f"{root}/{spec.path}", spec, start, end, rewritten=replaced) for spec, replaced in taken
    ]
    return None if None in counts else sum(counts)


class Lake:
    """A Delta lake rooted at one directory (or URI), written through one engine."""

    def __init__(self, spark: SparkSession, root: str | Path, engine: EngineName = "auto"):
        self.spark = spark
        self.root = lake_root(root)
        native = native_delta_available(spark)
        if engine == "spark" and not native:
            raise LakeError(
                "delta_engine 'spark' needs Delta's Spark extension on the classpath "
                "(spark-submit --packages io.delta:delta-spark_2.13:4.4.1, or a cluster that ships it); "
                "use delta_engine 'auto' to fall back to the embedded delta-rs engine"
            )
        self.engine_name = "spark" if engine == "spark" or (engine == "auto" and native) else "delta-rs"
        self._engine: DeltaEngine = (
            NativeDeltaEngine(spark) if self.engine_name == "spark" else DeltaRsEngine(spark)
        )
        self._requested_engine = engine

    def path(self, spec: TableSpec) -> str:
        return f"{self.root}/{spec.path}"

    def staging(self) -> Lake:
        """The lake where gold tables wait for their audit before being published."""
        return Lake(self.spark, f"{self.root}/_staging", self._requested_engine)

    def exists(self, spec: TableSpec) -> bool:
        return self._engine.exists(self.path(spec))

    def read(
        self, spec: TableSpec, *, start: datetime | None = None, end: datetime | None = None
    ) -> DataFrame:
        """Rows of ``spec`` (in ``[start, end)`` of its event time when given); empty if absent."""
        if not self.exists(spec):
            return self.spark.createDataFrame([], spec.schema)
        return rows_in_range(self._engine.read(self.path(spec), spec, start, end), spec, start, end)

    def distinct(
        self,
        spec: TableSpec,
        columns: Sequence[str],
        *,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> DataFrame:
        """The distinct rows of ``columns`` (none of them a partition column) among the rows
        :meth:`read` gives for the same range: a small dictionary of a large table. The embedded
        engine reads them from the files on the driver, without a Spark job; native Spark Delta
        computes ``read(...).select(...).distinct()``."""
        if partitioned := set(columns) & set(spec.partition_by):
            raise LakeError(
                f"{spec.path}: {sorted(partitioned)} are partition columns, which its files do not hold"
            )
        if not self.exists(spec):
            return self.spark.createDataFrame([], StructType([spec.schema[c] for c in columns]))
        return self._engine.distinct(self.path(spec), spec, tuple(columns), start, end)

    def version(self, spec: TableSpec) -> int | None:
        """The table's latest Delta version; None if absent."""
        return self._engine.version(self.path(spec)) if self.exists(spec) else None

    def read_version(self, spec: TableSpec, version: int) -> DataFrame:
        """Rows of ``spec`` as of its Delta ``version`` (a version :meth:`version` gave); a
        VersionUnavailable once that version's log or files are cleaned up (``maintain``)."""
        return self._engine.read_version(self.path(spec), spec, version)

    def row_count(
        self, spec: TableSpec, *, start: datetime | None = None, end: datetime | None = None
    ) -> int:
        """Rows in the table (in ``[start, end)`` of its event time when given), from the Delta
        log's file statistics where the engine has them and they settle it."""
        if start is not None or end is not None:
            require_event_time(spec)  # also where the engine would settle the count without a scan
        return self._engine.row_count(self.path(spec), spec, start, end) if self.exists(spec) else 0

    def statistics(
        self, spec: TableSpec, *, start: datetime | None = None, end: datetime | None = None
    ) -> TableStatistics | None:
        """What the Delta log's file statistics tell of the rows :meth:`read` gives for the same
        range (schemas.statistics), without a scan; None where the engine does not read them."""
        if not self.exists(spec):
            return TableStatistics(0, True)
        return self._engine.statistics(self.path(spec), spec, start, end)

    def worker_dir(self, spec: TableSpec, name: str) -> str | None:
        """A local directory where code outside Spark (a Python worker) may write Parquet files
        of ``spec`` for an append to take (``append``'s ``files``), or None where the lake cannot
        take such files (jobs.io.worker_files): native Spark Delta, or workers that do not
        share the driver's disk.

        The files hold ``spec``'s columns but its partition columns, in Hive-style partition
        directories (``commit_date=2026-11-21/...``), as Spark's writer leaves them.
        """
        if self.engine_name != "delta-rs" or not self.spark.sparkContext.master.startswith("local"):
            return None
        return self._engine.worker_dir(self.path(spec), name)

    def append(
        self, spec: TableSpec, df: DataFrame, *, once_as: str | None = None, worker_files: str | None = None
    ) -> bool:
        """Add ``df``'s rows (and the rows of the Parquet files under ``worker_files``, a directory
        from :meth:`worker_dir`, which the append empties). With ``once_as``, a Delta transaction
        identifier, the append happens at most once: a repeat (a re-run after a crash) is
        skipped. True if written."""
        return self._engine.append(self.path(spec), spec, conform(df, spec), once_as, worker_files)

    def replace_range(
        self,
        spec: TableSpec,
        df: DataFrame | None,
        start: datetime,
        end: datetime,
        *,
        worker_files: str | None = None,
    ) -> None:
        """Replace the rows with ``start <= event_time < end`` by ``df``'s and those of the
        Parquet files under ``worker_files`` (a directory from :meth:`worker_dir`, which the
        replace empties; ``df`` None: the files' rows alone). The new rows must lie in the range."""
        if not start < end:
            raise LakeError(f"empty range [{start}, {end}) for {spec.path}")
        rows = conform(df, spec) if df is not None else None
        self._engine.replace_range(self.path(spec), spec, rows, start, end, worker_files)

    def overwrite(self, spec: TableSpec, df: DataFrame) -> None:
        self._engine.overwrite(self.path(spec), spec, conform(df, spec))

    def stored_columns(self, spec: TableSpec) -> list[str]:
        """The columns the lake's table declares (none when absent): a table an earlier version
        wrote may lack what ``spec`` declares now (jobs.stages.upgrades)."""
        return self._engine.stored_columns(self.path(spec)) if self.exists(spec) else []

    def drop(self, spec: TableSpec) -> None:
        """Remove ``spec``'s table whole (an upgrade that changes what a table holds)."""
        if self.exists(spec):
            self._engine.drop(self.path(spec))

    def discard_unfinished_writes(self) -> None:
        """Remove what writes that never committed left behind (call it holding the lake's lock)."""
        self._engine.discard_unfinished_writes(self.root)
        self._engine.discard_unfinished_writes(self.staging().root)

    def merge(self, spec: TableSpec, df: DataFrame, keys: tuple[str, ...] | None = None) -> None:
        """Upsert: rows matching on ``keys`` (default ``spec.keys``) are updated, others inserted."""
        self._engine.merge(self.path(spec), spec, conform(df, spec), keys or spec.keys)

    def merge_rows(self, spec: TableSpec, rows: list[tuple], keys: tuple[str, ...] | None = None) -> None:
        """``merge`` of rows the driver holds (tuples in ``spec``'s column order): a run's own
        records, which the embedded engine commits without a Spark job."""
        self._engine.merge_rows(self.path(spec), spec, rows, keys or spec.keys)

    def maintain(
        self, spec: TableSpec, *, retention: timedelta, zorder: bool = False
    ) -> TableMaintenance | None:
        """Compact ``spec``'s small files, checkpoint and clean its log, vacuum what was removed
        more than ``retention`` ago (at least :data:`~jobs.io.engines.MIN_RETENTION`); None
        when the table does not exist. With ``zorder``, the compaction clusters rows by the
        queue key's columns the table holds (outside its partition columns), if any."""
        check_retention(retention)
        if not self.exists(spec):
            return None
        zorder_by = zorder_columns(spec) if zorder else ()
        return self._engine.maintain(self.path(spec), spec, retention, zorder_by)


def zorder_columns(spec: TableSpec) -> tuple[str, ...]:
    """The queue key's columns (schemas.tables.QUEUE_KEY) that ``spec`` holds and does not partition by."""
    return tuple(c for c in QUEUE_KEY if c in spec.columns and c not in spec.partition_by)
