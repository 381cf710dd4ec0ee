"""Embedded Delta engine: Spark writes the Parquet files, delta-rs commits them.

A write goes in three steps, none of which brings table data to the driver:

1. Spark writes Parquet (Hive-style partition directories) into a private directory of
   the table, from its executors (an append may also take files that Python workers wrote
   there: see :meth:`DeltaRsEngine.worker_dir`).
2. The files are moved into the table directory; their footers (metadata only) give the
   Delta statistics (row count, min/max, null count) used for file skipping.
3. One delta-rs transaction adds them (and, for a replace, removes the files they supersede).

Reads list the active files from the Delta log, skip those whose statistics cannot match
the requested range, and hand the rest to Spark's Parquet reader.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
from deltalake import CommitProperties, DeltaTable, Schema, Transaction
from deltalake.transaction import AddAction, RemoveAction
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, IntegerType, LongType, StructField, StructType, TimestampType

from jobs.io.engines import (
    LakeError,
    TableMaintenance,
    VersionUnavailable,
    check_retention,
    refuse_vacuumed,
    require_event_time,
    rows_in_range,
)
from schemas.instants import parse_utc, utc
from schemas.statistics import ColumnStatistics, TableStatistics
from schemas.tables import TableSpec

log = logging.getLogger(__name__)

WRITES_DIR = "_offsetlake_writes"
# Delta's default delta.logRetentionDuration: log files older than this go at a log clean-up
DEFAULT_LOG_RETENTION = timedelta(days=30)
_INTERVAL_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
_STAT_TYPES = (IntegerType, LongType, DateType, TimestampType)


def _local_path(path: str) -> Path:
    if "://" in path and not path.startswith("file://"):
        raise LakeError(
            f"the embedded delta-rs engine writes local lakes only, not {path}; on object storage run with "
            "Delta's Spark extension (delta_engine = 'spark')"
        )
    return Path(path.removeprefix("file://"))


def _stat_value(value, is_max: bool):
    """Delta statistics JSON value; timestamps at millisecond precision, max rounded up."""
    if isinstance(value, datetime):
        value = value if value.tzinfo else value.replace(tzinfo=UTC)
        floored = value.replace(microsecond=value.microsecond // 1000 * 1000)
        if is_max and floored != value:
            floored += timedelta(milliseconds=1)
        return floored.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if isinstance(value, date):
        return value.isoformat()
    return value


def _latest(recorded_max: datetime) -> datetime:
    """A bound past every event time of a file whose recorded maximum is ``recorded_max``: Delta's
    timestamp statistics are milliseconds, and some writers round the maximum down (the embedded
    one, up), so a row may lie up to a millisecond after it."""
    return recorded_max + timedelta(milliseconds=1)


def file_stats(file: Path, spec: TableSpec) -> str:
    """Delta ``stats`` JSON for one Parquet file, from its footer. A column some row group has no
    statistics for gets none in the file's: a partial null count or range would let a reader skip
    the file for rows it holds."""
    meta = pq.ParquetFile(file).metadata
    stat_columns = {f.name for f in spec.schema.fields if isinstance(f.dataType, _STAT_TYPES)}
    mins: dict[str, object] = {}
    maxs: dict[str, object] = {}
    nulls: dict[str, int] = {}
    no_nulls: set[str] = set()  # columns some row group counts no nulls of
    no_range: set[str] = set()  # columns some row group holds values of but no range
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for c in range(group.num_columns):
            column = group.column(c)
            name = column.path_in_schema
            stats = column.statistics
            if stats is None or not stats.has_null_count:
                no_nulls.add(name)
                no_range.add(name)
                continue
            nulls[name] = nulls.get(name, 0) + stats.null_count
            if name not in stat_columns:
                continue
            if stats.has_min_max:
                mins[name] = stats.min if name not in mins else min(mins[name], stats.min)
                maxs[name] = stats.max if name not in maxs else max(maxs[name], stats.max)
            elif stats.null_count < group.num_rows:
                no_range.add(name)
    return json.dumps(
        {
            "numRecords": meta.num_rows,
            "minValues": {k: _stat_value(v, False) for k, v in mins.items() if k not in no_range},
            "maxValues": {k: _stat_value(v, True) for k, v in maxs.items() if k not in no_range},
            "nullCount": {k: v for k, v in nulls.items() if k not in no_nulls},
        }
    )


def _statistics_kind(field, spec: TableSpec) -> str:
    """What the log's statistics tell of a column (see _column_statistics)."""
    if field.name in spec.partition_by:
        return "partition"
    return "ranged" if isinstance(field.dataType, _STAT_TYPES) else "nulls"


def _column_statistics(action: dict, name: str, rows: int, kind: str) -> ColumnStatistics | None:
    """One file's statistics of column ``name`` (``kind``: "partition" for its value, "ranged" for
    its nulls and range, else its nulls alone); None when the file records none. Only integers,
    dates and timestamps get a range: a text's statistics may be cut short, and a float's leave
    NaN out, which Spark orders above every number. A timestamp's upper bound is :func:`_latest`
    of its statistic (writers round its minimum down)."""
    if kind == "partition":
        if f"partition.{name}" not in action:  # the table is not partitioned by it
            return None
        value = action[f"partition.{name}"]
        return ColumnStatistics(rows) if value is None else ColumnStatistics(0, value, value)
    nulls = action.get(f"null_count.{name}")
    if nulls is None:
        return None
    low, high = action.get(f"min.{name}"), action.get(f"max.{name}")
    if kind != "ranged" or (nulls < rows and (low is None or high is None)):
        return ColumnStatistics(nulls)  # the nulls alone
    if isinstance(high, datetime):
        low, high = utc(low), _latest(utc(high))
    return ColumnStatistics(nulls, low, high)


def _summed(files: list[tuple[int, ColumnStatistics]]) -> ColumnStatistics:
    """A column over several files (each with its rows): their nulls summed, their ranges joined;
    no range when one file holding values records none."""
    nulls = sum(found.nulls for _, found in files)
    valued = [found for rows, found in files if found.nulls < rows]
    if not valued or any(found.low is None or found.high is None for found in valued):
        return ColumnStatistics(nulls)
    return ColumnStatistics(nulls, min(found.low for found in valued), max(found.high for found in valued))


def _partition_values(relative: Path) -> dict[str, str | None]:
    values: dict[str, str | None] = {}
    for part in relative.parts[:-1]:
        key, _, value = part.partition("=")
        value = unquote(value)
        values[unquote(key)] = None if value == "__HIVE_DEFAULT_PARTITION__" else value
    return values


def _partition_text(value) -> str | None:
    return None if value is None else value.isoformat() if isinstance(value, date) else str(value)


# distinct_rows folds its batches' distinct rows into one table every this many batches, so that
# what it holds stays about one batch's distinct rows times this, whatever the table's size
_FOLD_EVERY = 32


def distinct_rows(
    files: list[Path], spec: TableSpec, columns: tuple[str, ...], start: datetime | None, end: datetime | None
) -> pa.Table:
    """The distinct rows of ``columns`` among the rows of ``files`` (Parquet files of ``spec``) in
    ``[start, end)`` of its event time, as Spark's ``distinct`` of the same read gives them (a null
    is a value too). Read batch by batch, each batch's distinct rows kept: the driver holds a few
    batches, not the table. Text is read as dictionaries, so it is compared by index, not decoded."""
    # nullable whatever the table declares: a file an earlier version wrote may lack a column, which
    # reads as nulls there, as Spark's reader gives it
    wanted = pa.schema([spec.arrow_schema.field(c).with_nullable(True) for c in columns])
    if not files:
        return wanted.empty_table()
    text = [f.name for f in wanted if pa.types.is_string(f.type)]
    as_read = [f.with_type(pa.dictionary(pa.int32(), pa.string())) if f.name in text else f for f in wanted]
    condition = None
    if start is not None or end is not None:
        event = spec.arrow_schema.field(require_event_time(spec))
        if event.name not in columns:
            as_read.append(event)
        column = pads.field(event.name)
        bounds = [column >= pa.scalar(utc(start), event.type)] if start is not None else []
        bounds += [column < pa.scalar(utc(end), event.type)] if end is not None else []
        condition = bounds[0] if len(bounds) == 1 else bounds[0] & bounds[1]
    dataset = pads.dataset(
        [str(f) for f in files],
        schema=pa.schema(as_read),
        format=pads.ParquetFileFormat(read_options=pads.ParquetReadOptions(dictionary_columns=text)),
    )
    names = list(columns)

    def folded(tables: list[pa.Table]) -> pa.Table:
        return pa.concat_tables(tables).group_by(names, use_threads=False).aggregate([]).select(names)

    held: list[pa.Table] = []
    for batch in dataset.to_batches(columns=names, filter=condition):
        held.append(folded([pa.Table.from_batches([batch])]).cast(wanted))
        if len(held) >= _FOLD_EVERY:
            held = [folded(held)]
    return folded(held) if held else wanted.empty_table()


def log_retention(configuration: dict[str, str]) -> timedelta:
    """The table's ``delta.logRetentionDuration`` (``interval 30 days``), Delta's default when absent."""
    words = configuration.get("delta.logRetentionDuration", "").split()
    if len(words) == 3 and words[0].lower() == "interval" and words[1].isdigit():
        unit = _INTERVAL_UNITS.get(words[2].lower().removesuffix("s"))
        if unit is not None:
            return timedelta(seconds=int(words[1]) * unit)
    return DEFAULT_LOG_RETENTION


def log_bytes(local: Path) -> int:
    """Bytes of a table's Delta log (commits and checkpoints)."""
    return sum(f.stat().st_size for f in (local / "_delta_log").rglob("*") if f.is_file())


def _parse_stat(value) -> datetime | None:
    """An event-time statistic of the Delta log (a datetime in UTC, or its ISO text) as an aware instant."""
    if value is None:
        return None
    return utc(value) if isinstance(value, datetime) else parse_utc(str(value))


def _with_new_columns(table: DeltaTable, spec: TableSpec) -> DeltaTable:
    """``table`` with the columns ``spec`` declares and a lake written by an earlier version lacks,
    added as nullable (a commit's files carry them, but only the table's schema makes them visible
    to readers); the rows written before hold null there."""
    stored = {f.name for f in table.schema().fields}
    new = [f for f in spec.arrow_schema if f.name not in stored]
    if new:
        log.info("%s: adding the columns %s to the stored table", spec.path, [f.name for f in new])
        added = Schema.from_arrow(pa.schema([f.with_nullable(True) for f in new])).fields
        table.alter.add_columns(added)
    return table


def _described(table: DeltaTable, spec: TableSpec) -> DeltaTable:
    """``table`` whose Delta description says the grain and keys ``spec`` declares: a lake
    written by an earlier version keeps the description of its keys then, until a write
    brings it up to date."""
    if table.metadata().description != spec.description:
        log.info("%s: the table's description brought up to date: %s", spec.path, spec.description)
        table.alter.set_table_description(spec.description)
    return table


class DeltaRsEngine:
    def __init__(self, spark: SparkSession):
        self.spark = spark

    # -- table and file listing ---------------------------------------------------------
    def exists(self, path: str) -> bool:
        return DeltaTable.is_deltatable(str(_local_path(path)))

    def _table(self, path: str, spec: TableSpec) -> DeltaTable:
        local = _local_path(path)
        if DeltaTable.is_deltatable(str(local)):
            return _described(_with_new_columns(DeltaTable(str(local)), spec), spec)
        local.mkdir(parents=True, exist_ok=True)
        return DeltaTable.create(
            str(local),
            schema=spec.arrow_schema,
            partition_by=list(spec.partition_by) or None,
            name=spec.name,
            description=spec.description,
        )

    @staticmethod
    def _active_files(table: DeltaTable, spec: TableSpec) -> list[dict]:
        """Active files with path, size, partition values and event-time range (None if unknown)."""
        actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
        files = []
        for action in actions:
            event = spec.event_time
            files.append(
                {
                    "path": action["path"],
                    "size": action.get("size_bytes"),
                    "partition_values": {
                        p: _partition_text(action.get(f"partition.{p}")) for p in spec.partition_by
                    },
                    "min": _parse_stat(action.get(f"min.{event}")) if event else None,
                    "max": _parse_stat(action.get(f"max.{event}")) if event else None,
                    "rows": action.get("num_records"),
                    "null_times": action.get(f"null_count.{event}") if event else None,
                    "action": action,
                }
            )
        return files

    @staticmethod
    def _overlaps(file: dict, start: datetime | None, end: datetime | None) -> bool:
        if file["min"] is None or file["max"] is None:
            return True
        return not (
            (start is not None and _latest(file["max"]) <= utc(start))
            or (end is not None and file["min"] >= utc(end))
        )

    @classmethod
    def _taken(cls, files: list[dict], start: datetime | None, end: datetime | None) -> list[dict]:
        """The files of ``files`` a read of ``[start, end)`` takes."""
        return [f for f in files if cls._overlaps(f, start, end)]

    @classmethod
    def _rewritten(cls, touched: list[dict], start: datetime | None, end: datetime | None) -> list[dict]:
        """Of ``touched`` (the files a read of ``[start, end)`` takes), those a replace of the range
        rewrites without its rows (:meth:`replace_range`): the others lie wholly inside it by their
        statistics, and it drops them whole, unread."""
        return [f for f in touched if not cls._within(f, start, end)]

    @staticmethod
    def _within(file: dict, start: datetime | None, end: datetime | None) -> bool:
        """True when every row of ``file`` lies in ``[start, end)`` by its event-time statistics
        (a row without an event time lies in no range; its last row may lie past the recorded
        maximum: :func:`_latest`)."""
        if start is None and end is None:
            return True
        if file["min"] is None or file["max"] is None or file.get("null_times") != 0:
            return False
        return (start is None or file["min"] >= utc(start)) and (
            end is None or _latest(file["max"]) <= utc(end)
        )

    def row_count(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> int:
        """Rows (in ``[start, end)`` when given): the Delta log's row count of each file that
        its statistics put wholly inside the range, a scan of the others that overlap it."""
        rows, scanned = 0, []
        for file in self._active_files(DeltaTable(str(_local_path(path))), spec):
            if not self._overlaps(file, start, end):
                continue
            if file["rows"] is not None and self._within(file, start, end):
                rows += file["rows"]
            else:
                scanned.append(file)
        if scanned:
            rows += rows_in_range(self._read_files(path, spec, scanned), spec, start, end).count()
        return rows

    def distinct(
        self,
        path: str,
        spec: TableSpec,
        columns: tuple[str, ...],
        start: datetime | None,
        end: datetime | None,
    ) -> DataFrame:
        """The distinct rows of ``columns`` among the rows a read of ``[start, end)`` gives, read from
        the files on the driver (:func:`distinct_rows`): a small dictionary of a large table, without
        a Spark job of a task a file (docs/experiments.md, "The replay's queues read on the driver")."""
        local = _local_path(path)
        files = self._taken(self._active_files(DeltaTable(str(local)), spec), start, end)
        found = distinct_rows([local / unquote(f["path"]) for f in files], spec, columns, start, end)
        # nullable, as Spark's reader of the files gives every column (read)
        fields = [StructField(c, spec.schema[c].dataType, True) for c in columns]
        return self.spark.createDataFrame(found, StructType(fields))

    def statistics(
        self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None
    ) -> TableStatistics | None:
        """The log's statistics of the files a read of ``[start, end)`` takes; None when one of
        them records no row count."""
        files = self._taken(self._active_files(DeltaTable(str(_local_path(path))), spec), start, end)
        if any(f["rows"] is None for f in files):
            return None
        files = [f for f in files if f["rows"]]  # a file of no rows records no column statistics
        columns = {}
        for field in spec.schema.fields:
            name, kind = field.name, _statistics_kind(field, spec)
            found = [_column_statistics(f["action"], name, f["rows"], kind) for f in files]
            if all(c is not None for c in found):
                columns[name] = _summed([(f["rows"], c) for f, c in zip(files, found, strict=True)])
        return TableStatistics(
            sum(f["rows"] for f in files), all(self._within(f, start, end) for f in files), columns
        )

    def _read_files(self, path: str, spec: TableSpec, files: list[dict]) -> DataFrame:
        if not files:
            return self.spark.createDataFrame([], spec.schema)
        uris = [f"{path}/{unquote(f['path'])}" for f in files]
        return (
            self.spark.read.schema(spec.schema).option("basePath", path).parquet(*uris).select(*spec.columns)
        )

    def read(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> DataFrame:
        table = DeltaTable(str(_local_path(path)))
        return self._read_files(path, spec, self._taken(self._active_files(table, spec), start, end))

    def version(self, path: str) -> int:
        return DeltaTable(str(_local_path(path))).version()

    def read_version(self, path: str, spec: TableSpec, version: int) -> DataFrame:
        local = _local_path(path)
        try:
            files = self._active_files(DeltaTable(str(local), version=version), spec)
        except Exception as error:  # delta-rs raises its own errors for a version it cannot load
            raise VersionUnavailable(f"{path} version {version}: {error}") from error
        refuse_vacuumed(
            path, version, [f["path"] for f in files if not (local / unquote(f["path"])).is_file()]
        )
        return self._read_files(path, spec, files)

    # -- writing --------------------------------------------------------------------------
    def _write_files(self, path: str, spec: TableSpec, df: DataFrame) -> list[AddAction]:
        """Spark writes ``df`` as Parquet; the files move into the table; their AddActions."""
        local = _local_path(path)
        staging = local / WRITES_DIR / uuid.uuid4().hex
        writer = df.write.mode("errorifexists")
        if spec.partition_by:
            writer = writer.partitionBy(*spec.partition_by)
        for column in spec.high_cardinality:
            writer = writer.option(f"parquet.enable.dictionary#{column}", "false")
        writer.parquet(str(staging))
        return self._adopt(local, spec, staging)

    def _adopt(self, local: Path, spec: TableSpec, staging: Path, prefix: str = "") -> list[AddAction]:
        """Move the Parquet files under ``staging`` (Hive-style partition directories) into the
        table at ``local``, their names prefixed with ``prefix``; their AddActions."""
        actions = []
        now_ms = int(time.time() * 1000)
        for file in sorted(staging.rglob("*.parquet")):
            relative = file.relative_to(staging)
            relative = relative.with_name(prefix + relative.name)
            target = local / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            file.rename(target)
            actions.append(
                AddAction(
                    path=relative.as_posix(),
                    size=target.stat().st_size,
                    partition_values=_partition_values(relative),
                    modification_time=now_ms,
                    data_change=True,
                    stats=file_stats(target, spec),
                )
            )
        shutil.rmtree(staging, ignore_errors=True)
        return actions

    def _staged(self, path: str, spec: TableSpec, worker_files: str | None) -> list[AddAction]:
        """The Parquet files written outside Spark under ``worker_files`` (see :meth:`worker_dir`),
        moved into the table under unique names; their AddActions."""
        if worker_files is None or not Path(worker_files).is_dir():
            return []
        return self._adopt(_local_path(path), spec, Path(worker_files), prefix=f"{uuid.uuid4().hex}-")

    @staticmethod
    def _removes(files: list[dict]) -> list[RemoveAction]:
        now_ms = int(time.time() * 1000)
        return [
            RemoveAction(
                path=f["path"],
                data_change=True,
                deletion_timestamp=now_ms,
                size=f["size"],
                partition_values=f["partition_values"],
            )
            for f in files
        ]

    def _commit(self, table: DeltaTable, spec: TableSpec, actions: list, once_as: str | None = None) -> None:
        if actions or once_as:
            properties = (
                CommitProperties(app_transactions=[Transaction(app_id=once_as, version=1)])
                if once_as
                else None
            )
            table.create_write_transaction(
                actions,
                mode="append",
                schema=table.schema(),
                partition_by=list(spec.partition_by),
                commit_properties=properties,
            )

    def stored_columns(self, path: str) -> list[str]:
        return [f.name for f in DeltaTable(str(_local_path(path))).schema().fields]

    def worker_dir(self, path: str, name: str) -> str:
        """An empty local directory of the table's where files written outside Spark wait for
        an append to take them (whatever an earlier, interrupted write left there is removed)."""
        directory = _local_path(path) / WRITES_DIR / name
        shutil.rmtree(directory, ignore_errors=True)
        return str(directory)

    def append(
        self,
        path: str,
        spec: TableSpec,
        df: DataFrame,
        once_as: str | None = None,
        worker_files: str | None = None,
    ) -> bool:
        """Append ``df`` and the Parquet files under ``worker_files`` (see :meth:`worker_dir`), in one commit."""
        table = self._table(path, spec)
        try:
            if once_as and table.transaction_version(once_as) is not None:
                return False
            adds = self._write_files(path, spec, df) + self._staged(path, spec, worker_files)
            self._commit(table, spec, adds, once_as)
            return True
        finally:
            if worker_files is not None:
                shutil.rmtree(worker_files, ignore_errors=True)

    def replace_range(
        self,
        path: str,
        spec: TableSpec,
        df: DataFrame | None,
        start: datetime,
        end: datetime,
        worker_files: str | None = None,
    ) -> None:
        """Copy-on-write replaceWhere: files wholly inside the range are dropped, files that
        straddle its edges are rewritten without the range's rows, ``df`` (if any) and the
        Parquet files under ``worker_files`` (see :meth:`worker_dir`) are added, in one commit."""
        try:
            table = self._table(path, spec)
            touched = self._taken(self._active_files(table, spec), start, end)
            # a file is dropped whole only when its statistics prove every row inside the range
            straddling = self._rewritten(touched, start, end)
            new_rows = df
            if straddling:
                column = F.col(spec.event_time)
                kept = self._read_files(path, spec, straddling).where(
                    (column < F.lit(start)) | (column >= F.lit(end))
                )
                new_rows = kept if df is None else df.unionByName(kept)
            adds = (self._write_files(path, spec, new_rows) if new_rows is not None else []) + self._staged(
                path, spec, worker_files
            )
            self._commit(table, spec, [*self._removes(touched), *adds])
        finally:
            if worker_files is not None:
                shutil.rmtree(worker_files, ignore_errors=True)

    def overwrite(self, path: str, spec: TableSpec, df: DataFrame) -> None:
        table = self._table(path, spec)
        current = self._active_files(table, spec)
        adds = self._write_files(path, spec, df)
        self._commit(table, spec, [*self._removes(current), *adds])

    def merge(self, path: str, spec: TableSpec, df: DataFrame, keys: tuple[str, ...]) -> None:
        """delta-rs MERGE, its source streamed from Parquet files Spark wrote."""
        if not self.exists(path):
            self.append(path, spec, df)
            return
        staging = _local_path(path) / WRITES_DIR / f"merge-{uuid.uuid4().hex}"
        df.write.mode("errorifexists").parquet(str(staging))
        try:
            source = pads.dataset(str(staging), format="parquet", schema=spec.arrow_schema)
            # the table with the columns spec declares: a merge adds no column to the stored table itself
            self._merge(self._table(path, spec), source.scanner().to_reader(), keys)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def merge_rows(self, path: str, spec: TableSpec, rows: list[tuple], keys: tuple[str, ...]) -> None:
        """delta-rs MERGE of rows the driver holds, without a Spark job: a run's own records."""
        source = pa.Table.from_pylist(
            [dict(zip(spec.columns, row, strict=True)) for row in rows], schema=spec.arrow_schema
        )
        self._merge(self._table(path, spec), source, keys)

    @staticmethod
    def _merge(table: DeltaTable, source, keys: tuple[str, ...]) -> None:
        condition = " AND ".join(f't."{k}" = s."{k}"' for k in keys)
        (
            table.merge(source=source, predicate=condition, source_alias="s", target_alias="t")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )

    def discard_unfinished_writes(self, root: str) -> None:
        """Remove every table's private write directory (Spark's staged files, worker files) that a
        run stopped before its commit left; files already moved into a table but never committed
        are not in its log, so no reader sees them (a VACUUM removes them)."""
        for leftover in _local_path(root).glob(f"*/*/{WRITES_DIR}"):
            shutil.rmtree(leftover, ignore_errors=True)

    def drop(self, path: str) -> None:
        shutil.rmtree(_local_path(path))

    def maintain(
        self, path: str, spec: TableSpec, retention: timedelta, zorder_by: tuple[str, ...]
    ) -> TableMaintenance:
        """delta-rs's own operations, in order: ``optimize.compact`` (or ``optimize.z_order``), a
        checkpoint, ``cleanup_metadata`` and a full ``vacuum``.

        The compaction commits with ``dataChange=false``: readers and once-only appends see the
        same rows, and the versions before it stay readable (time travel) until the vacuum's
        retention has passed. The log's clean-up removes only log files older than the table's
        log retention (30 days by default) that the new checkpoint covers; when ``retention``
        is longer than that, the log is kept whole so that time travel reaches as far back as
        the vacuum keeps files for.
        """
        check_retention(retention)
        local = _local_path(path)
        table = DeltaTable(str(local))
        before = self._active_files(table, spec)
        log_before = log_bytes(local)
        if zorder_by:
            table.optimize.z_order(list(zorder_by))
        else:
            table.optimize.compact()
        table = DeltaTable(str(local))
        table.create_checkpoint()
        if retention <= log_retention(table.metadata().configuration):
            table.cleanup_metadata()
        vacuumed = table.vacuum(
            retention_hours=int(retention.total_seconds() // 3600),
            dry_run=False,
            enforce_retention_duration=True,
            full=True,
        )
        after = self._active_files(DeltaTable(str(local)), spec)
        return TableMaintenance(
            table=spec.path,
            files_before=len(before),
            files_after=len(after),
            bytes_before=sum(f["size"] or 0 for f in before),
            bytes_after=sum(f["size"] or 0 for f in after),
            log_bytes_before=log_before,
            log_bytes_after=log_bytes(local),
            vacuumed_files=len(vacuumed),
            zordered=bool(zorder_by),
        )


def rows_in_log(
    path: str, spec: TableSpec, start: datetime | None, end: datetime | None, *, rewritten: bool = False
) -> int | None:
    """How many rows the files of the table at ``path`` hold that a read of ``[start, end)`` takes
    (``rewritten``: that a replace of it rewrites), from its Delta log alone, no Spark, no scan: 0 for
    a table not written yet. None where the log cannot tell: a table off this machine, a file that
    records no row count, a log delta-rs cannot read (the caller's estimate then goes without it)."""
    try:
        local = _local_path(path)
        if not DeltaTable.is_deltatable(str(local)):
            return 0
        files = DeltaRsEngine._taken(DeltaRsEngine._active_files(DeltaTable(str(local)), spec), start, end)
    except LakeError:
        return None
    except Exception as error:  # the count only advises: nothing it meets (delta-rs's errors, a
        # statistic it cannot parse) may fail the run, which meets a log it cannot read on its own
        log.warning("the rows of %s are not counted: %s", path, str(error).partition("\n")[0])
        return None
    if rewritten:
        files = DeltaRsEngine._rewritten(files, start, end)
    rows = [f["rows"] for f in files]
    return None if None in rows else sum(rows)
