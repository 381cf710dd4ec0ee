"""Native Spark Delta engine (``delta-spark``): used when Delta's Spark extension is loaded."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from deltalake import DeltaTable as RsTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.io.engines import (
    LakeError,
    TableMaintenance,
    VersionUnavailable,
    check_retention,
    refuse_vacuumed,
    rows_in_range,
)
from schemas.tables import TableSpec


def _literal(value: datetime) -> str:
    return f"TIMESTAMP '{value.isoformat(sep=' ')}'"


def _with_missing_columns(df: DataFrame, spec: TableSpec) -> DataFrame:
    """A column a table written by an earlier version lacks reads as null, as on the embedded lake."""
    missing = {f.name: F.lit(None).cast(f.dataType) for f in spec.schema.fields if f.name not in df.columns}
    return df.withColumns(missing) if missing else df


def _no_worker_files(worker_files: str | None) -> None:
    if worker_files is not None:
        raise LakeError("native Spark Delta takes no worker files (its worker_dir is None)")


class NativeDeltaEngine:
    def __init__(self, spark: SparkSession):
        self.spark = spark

    def exists(self, path: str) -> bool:
        from delta.tables import DeltaTable  # delta-spark is optional (the native-delta extra)

        return DeltaTable.isDeltaTable(self.spark, path)

    def read(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> DataFrame:
        # Delta's own data skipping prunes files for the range filter the caller applies.
        return _with_missing_columns(self.spark.read.format("delta").load(path), spec)

    def row_count(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> int:
        return rows_in_range(self.spark.read.format("delta").load(path), spec, start, end).count()

    def distinct(
        self,
        path: str,
        spec: TableSpec,
        columns: tuple[str, ...],
        start: datetime | None,
        end: datetime | None,
    ) -> DataFrame:
        return rows_in_range(self.read(path, spec, start, end), spec, start, end).select(*columns).distinct()

    def statistics(self, path: str, spec: TableSpec, start: datetime | None, end: datetime | None) -> None:
        return None  # Spark's Delta reader keeps its files' statistics to itself

    def version(self, path: str) -> int:
        from delta.tables import DeltaTable  # delta-spark is optional (the native-delta extra)

        return DeltaTable.forPath(self.spark, path).history(1).select("version").first()[0]

    def read_version(self, path: str, spec: TableSpec, version: int) -> DataFrame:
        try:
            df = self.spark.read.format("delta").option("versionAsOf", version).load(path)
        except Exception as error:  # Delta's VersionNotFound, or a log cleaned up past the version
            raise VersionUnavailable(f"{path} version {version}: {error}") from error
        jvm, conf = self.spark._jvm, self.spark._jsc.hadoopConfiguration()
        paths = [jvm.org.apache.hadoop.fs.Path(uri) for uri in df.inputFiles()]
        refuse_vacuumed(path, version, [p.toString() for p in paths if not p.getFileSystem(conf).exists(p)])
        return _with_missing_columns(df, spec)

    def _writer(self, df: DataFrame, spec: TableSpec, mode: str):
        # columns a table written by an earlier version lacks join its schema
        writer = df.write.format("delta").mode(mode).option("mergeSchema", "true")
        if spec.partition_by:
            writer = writer.partitionBy(*spec.partition_by)
        return writer.option("description", spec.description)

    def stored_columns(self, path: str) -> list[str]:
        return self.spark.read.format("delta").load(path).columns

    def worker_dir(self, path: str, name: str) -> None:
        """None: Spark writes every file of a native Delta table."""
        return None

    def append(
        self,
        path: str,
        spec: TableSpec,
        df: DataFrame,
        once_as: str | None = None,
        worker_files: str | None = None,
    ) -> bool:
        _no_worker_files(worker_files)
        writer = self._writer(df, spec, "append")
        if once_as:
            if self._committed(path, once_as):
                return False
            # Delta skips a write whose (txnAppId, txnVersion) it has already committed.
            writer = writer.option("txnAppId", once_as).option("txnVersion", 1)
        writer.save(path)
        return True

    def _committed(self, path: str, app_id: str) -> bool:
        if not self.exists(path):
            return False
        if "://" not in path or path.startswith("file://"):
            return RsTable(path.removeprefix("file://")).transaction_version(app_id) is not None
        return False

    def replace_range(
        self,
        path: str,
        spec: TableSpec,
        df: DataFrame | None,
        start: datetime,
        end: datetime,
        worker_files: str | None = None,
    ) -> None:
        _no_worker_files(worker_files)
        if df is None:
            raise LakeError(f"a replace of {path} needs the new rows")
        predicate = f"{spec.event_time} >= {_literal(start)} AND {spec.event_time} < {_literal(end)}"
        self._writer(df, spec, "overwrite").option("replaceWhere", predicate).save(path)

    def overwrite(self, path: str, spec: TableSpec, df: DataFrame) -> None:
        self._writer(df, spec, "overwrite").save(path)

    def merge(self, path: str, spec: TableSpec, df: DataFrame, keys: tuple[str, ...]) -> None:
        from delta.tables import DeltaTable  # delta-spark is optional (the native-delta extra)

        if not self.exists(path):
            self.append(path, spec, df)
            return
        condition = " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in keys)
        (
            DeltaTable.forPath(self.spark, path)
            .alias("t")
            .merge(df.alias("s"), condition)
            .withSchemaEvolution()  # columns a table written by an earlier version lacks join its schema
            .whenMatchedUpdateAll()
            .whenNotMatchedInsertAll()
            .execute()
        )

    def merge_rows(self, path: str, spec: TableSpec, rows: list[tuple], keys: tuple[str, ...]) -> None:
        self.merge(path, spec, self.spark.createDataFrame(rows, spec.schema), keys)

    def discard_unfinished_writes(self, root: str) -> None:
        """Nothing: Spark writes a native Delta table's files itself, and Delta ignores the
        files of a write that never committed until a VACUUM removes them."""

    def drop(self, path: str) -> None:
        """Through the session's Hadoop file system (the lake may be on object storage)."""
        jvm = self.spark.sparkContext._jvm  # type: ignore[union-attr]
        target = jvm.org.apache.hadoop.fs.Path(path)
        target.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()).delete(target, True)  # type: ignore[union-attr]

    def _detail(self, path: str) -> tuple[int, int]:
        detail = self.spark.sql(f"DESCRIBE DETAIL delta.`{path}`").first()
        return int(detail["numFiles"]), int(detail["sizeInBytes"])

    @staticmethod
    def _log_bytes(path: str) -> int | None:
        """The log's size where the table is on this machine's disk (None on object storage)."""
        if "://" in path and not path.startswith("file://"):
            return None
        log = Path(path.removeprefix("file://")) / "_delta_log"
        return sum(f.stat().st_size for f in log.rglob("*") if f.is_file())

    def maintain(
        self, path: str, spec: TableSpec, retention: timedelta, zorder_by: tuple[str, ...]
    ) -> TableMaintenance:
        """Delta's SQL: ``OPTIMIZE`` (``ZORDER BY`` when asked) and ``VACUUM ... RETAIN n HOURS``.
        Native Delta writes the log's checkpoints itself (every ``delta.checkpointInterval``
        commits, 10 by default) and removes expired log files when it does."""
        check_retention(retention)
        target = f"delta.`{path}`"
        files_before, bytes_before = self._detail(path)
        log_before = self._log_bytes(path)
        zorder = f" ZORDER BY ({', '.join(f'`{c}`' for c in zorder_by)})" if zorder_by else ""
        self.spark.sql(f"OPTIMIZE {target}{zorder}")
        hours = int(retention.total_seconds() // 3600)
        vacuumed = self.spark.sql(f"VACUUM {target} RETAIN {hours} HOURS DRY RUN").count()
        self.spark.sql(f"VACUUM {target} RETAIN {hours} HOURS")
        files_after, bytes_after = self._detail(path)
        return TableMaintenance(
            table=spec.path,
            files_before=files_before,
            files_after=files_after,
            bytes_before=bytes_before,
            bytes_after=bytes_after,
            log_bytes_before=log_before,
            log_bytes_after=self._log_bytes(path),
            vacuumed_files=vacuumed,
            zordered=bool(zorder_by),
        )
