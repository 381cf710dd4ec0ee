"""SQL over the lake: every table registered under its name, answered in-process or by Spark.

Each table is registered as ``<layer>_<table>`` (``silver_offset_regressions``), the one name
both engines accept; the in-process engine also takes ``<layer>.<table>``. Tables a run has
not written yet are not registered, so a query naming one fails with the list of those that
exist.

- :func:`open_lake_sql` (DataFusion, through ``deltalake``'s ``QueryBuilder``): no JVM; what
  ``offsetlake sql`` and the report use.
- :func:`open_spark_sql`: the same names as Spark temporary views, for cluster users.

    queries = open_lake_sql("/data/offsetlake")
    queries.run("SELECT consumer_group, count(*) FROM silver_offset_regressions GROUP BY 1")  # a pyarrow Table
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from jobs.io.engines import LakeError
from jobs.io.lake import Lake, lake_root
from schemas.tables import ALL_TABLES, QUALITY_TABLES, TableSpec

# what an analyst may query: the run's tables and the audit's
QUERYABLE_TABLES: tuple[TableSpec, ...] = (*ALL_TABLES, *QUALITY_TABLES)


class QueryError(ValueError):
    """A query the engine cannot answer (an unknown table, bad SQL); the message says why."""


def sql_name(spec: TableSpec) -> str:
    """The name a table is registered under in every engine: ``<layer>_<table>``."""
    return f"{spec.layer}_{spec.name}"


@dataclass(frozen=True)
class TableInfo:
    """One table of the lake as ``offsetlake tables`` lists it (rows and version None: not written yet)."""

    spec: TableSpec
    rows: int | None
    version: int | None

    @property
    def sql_name(self) -> str:
        return sql_name(self.spec)


def _delta_table(root: str, spec: TableSpec) -> DeltaTable | None:
    location = f"{root}/{spec.path}"
    return DeltaTable(location) if DeltaTable.is_deltatable(location) else None


def _check_lake(root: str) -> None:
    if "://" not in root and not Path(root).is_dir():
        raise LakeError(f"no lake at {root}: pass the --lake a run wrote (offsetlake run --lake ...)")


def describe_tables(root: str | Path) -> list[TableInfo]:
    """Every queryable table of the lake at ``root``, with its rows (from the Delta log's file
    statistics) and latest version."""
    root = lake_root(root)
    _check_lake(root)
    described = []
    for spec in QUERYABLE_TABLES:
        table = _delta_table(root, spec)
        if table is None:
            described.append(TableInfo(spec, None, None))
            continue
        actions = pa.table(table.get_add_actions(flatten=True))
        rows = sum(v for v in actions.column("num_records").to_pylist() if v is not None)
        described.append(TableInfo(spec, rows, table.version()))
    return described


def _plain_types(table: pa.Table) -> pa.Table:
    """String and binary views as plain strings and binaries, which every writer takes."""
    plain = {pa.types.is_string_view: pa.string(), pa.types.is_binary_view: pa.binary()}
    fields = []
    for field in table.schema:
        target = next((t for test, t in plain.items() if test(field.type)), field.type)
        fields.append(field.with_type(target))
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


@dataclass(frozen=True)
class LakeSql:
    """SQL over the registered tables of one lake; :meth:`run` answers with a pyarrow Table."""

    root: str
    engine: str
    tables: tuple[str, ...]
    _execute: Callable[[str], pa.Table]

    def run(self, sql: str) -> pa.Table:
        if not sql.strip():
            raise QueryError("the query is empty")
        return _plain_types(self._execute(sql))


def _as_of(table: DeltaTable, spec: TableSpec, version: int | datetime) -> DeltaTable | None:
    """``table`` as it was at ``version`` (a version number or an instant: Delta's time travel);
    None for a table created after that instant."""
    if isinstance(version, datetime):
        # delta-rs loads its first version for an instant before it: that table did not exist yet
        created = min(commit["timestamp"] for commit in table.history())
        if version.timestamp() * 1000 < created:
            return None
    try:
        table.load_as_version(version)
    except Exception as error:  # delta-rs raises one error type for every version it cannot load
        raise QueryError(f"{spec.path} has no version {version}: {error}") from error
    return table


def open_lake_sql(
    root: str | Path, as_of: datetime | None = None, versions: Mapping[TableSpec, int] | None = None
) -> LakeSql:
    """The lake's tables in DataFusion, in this process (no JVM): each as it is now, or as it
    was at the instant ``as_of``, or at the version ``versions`` gives for it (time travel)."""
    root = lake_root(root)
    _check_lake(root)
    builder = QueryBuilder()
    names: list[str] = []
    for layer in dict.fromkeys(spec.layer for spec in QUERYABLE_TABLES):
        builder.execute(f"CREATE SCHEMA IF NOT EXISTS {layer}").read_all()
    for spec in QUERYABLE_TABLES:
        table = _delta_table(root, spec)
        version = (versions or {}).get(spec, as_of)
        if table is not None and version is not None:
            table = _as_of(table, spec, version)
        if table is None:
            continue
        builder.register(sql_name(spec), table)
        builder.register(f"{spec.layer}.{spec.name}", table)
        names.append(sql_name(spec))

    def execute(sql: str) -> pa.Table:
        try:
            return pa.RecordBatchReader.from_stream(builder.execute(sql)).read_all()
        except Exception as error:  # DataFusion raises one DeltaError type for every SQL failure
            message = str(error).strip()
            hint = f"; {_hint(names, root)}" if "not found" in message else ""
            raise QueryError(f"{message}{hint}") from error

    return LakeSql(root, "datafusion", tuple(names), execute)


def _hint(names: list[str], root: str) -> str:
    listed = ", ".join(names) if names else "none yet (run the pipeline first)"
    return f"the tables of {root} are: {listed}"


def open_spark_sql(spark: SparkSession, root: str | Path, delta_engine: str = "auto") -> LakeSql:
    """The lake's tables as Spark temporary views under the same names (``<layer>_<table>``)."""
    lake = Lake(spark, root, delta_engine)  # type: ignore[arg-type]
    _check_lake(lake.root)
    names = []
    for spec in QUERYABLE_TABLES:
        if lake.exists(spec):
            lake.read(spec).createOrReplaceTempView(sql_name(spec))
            names.append(sql_name(spec))

    def execute(sql: str) -> pa.Table:
        try:
            return spark.sql(sql).toArrow()
        except PySparkException as error:
            message = str(error).strip().splitlines()[0]
            hint = f"; {_hint(names, lake.root)}" if "TABLE_OR_VIEW_NOT_FOUND" in message else ""
            raise QueryError(f"{message}{hint}") from error

    return LakeSql(lake.root, "spark", tuple(names), execute)
