"""The audit's data-quality figures computed again by DuckDB: each table suite of
``schemas.quality`` rendered as SQL over the ``ref_*`` tables, for the lake's last audited interval.

The suites are declared once (``schemas.quality.SUITES``); the audit renders them as Spark
columns (``pipelines.expectations``), this module as DuckDB predicates with the same semantics:
a null passes every kind but ``not_null``; ``between`` is inclusive unless ``strict_max``;
``pair_at_least`` ignores a row where either value is missing; uniqueness counts the rows whose
key another row shares (a single column's nulls, or an all-null key, not compared). Each
check's rows checked and failing rows (the most of any of its columns) are then compared with
the lake's ``quality/check_results``, so a suite that measures the wrong rows, or a predicate
that counts differently, disagrees.

What each suite sees, as the audit (``jobs.quality.suites.audited_frame``): bronze and silver
rows whose event time lies in the interval; a gold table's rows from the start its
``event_time_in_interval`` expectation allows (what the marts stage rebuilt for the interval).
Tables without a reference (``REFERENCE_TABLES``) are not compared, nor a check on a column the
reference does not derive (``NOT_COMPARED``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import DeltaTable

from jobs.quality.suites import interval_params
from jobs.tools.bench.compare import CHECKS_COMPARED, TableComparison
from jobs.tools.bench.oracle.reference import REFERENCE_TABLES
from jobs.tools.bench.oracle.sql_text import literal
from schemas.config import Settings
from schemas.instants import utc
from schemas.quality import SUITES, Expectation, Param, TableSuite, resolve
from schemas.tables import QUALITY_CHECK_RESULTS

CHECKS_TABLE = "ref_check_results"
COMPARED = ("check_name", "rows_checked", "failing_rows", "is_success")


def _literal(value: object) -> str:
    if isinstance(value, datetime):
        return f"TIMESTAMP '{utc(value).replace(tzinfo=None).isoformat(sep=' ')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, str):
        return literal(value)
    return repr(int(value)) if isinstance(value, bool | int) else repr(value)


def predicates(expectation: Expectation, params: Mapping[Param, object], column) -> list[str]:
    """SQL true where a row breaks ``expectation`` (one per column or pair; none for ``unique``).
    ``column(name)`` renders a column of the table."""
    columns = expectation.columns
    if expectation.kind == "not_null":
        return [f"{column(c)} IS NULL" for c in columns]
    if expectation.kind == "between":
        low, high = resolve(expectation.min_value, params), resolve(expectation.max_value, params)
        found = []
        for c in columns:
            parts = [f"{column(c)} < {_literal(low)}"] if low is not None else []
            if high is not None:
                parts.append(f"{column(c)} {'>=' if expectation.strict_max else '>'} {_literal(high)}")
            found.append(f"coalesce({' OR '.join(parts) or 'false'}, false)")
        return found
    if expectation.kind == "in_set":
        values = ", ".join(_literal(v) for v in expectation.values)
        return [f"coalesce(NOT ({column(c)} IN ({values})), false)" for c in columns]
    if expectation.kind == "pair_at_least":
        first, second = (column(c) for c in columns)
        return [f"coalesce(NOT ({first} {'>' if expectation.strict_max else '>='} {second}), false)"]
    if expectation.kind == "unique":
        return []
    raise ValueError(f"unknown expectation kind {expectation.kind!r}")


def _duplicated_rows(con, relation: str, expectation: Expectation, column) -> int:
    keys = [column(c) for c in expectation.columns]
    joined = " AND " if len(keys) == 1 else " OR "  # as the audit: one column's nulls, or an all-null key
    compared = joined.join(f"{k} IS NOT NULL" for k in keys)
    sql = (
        f"SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {relation} WHERE {compared} "
        f"GROUP BY {', '.join(keys)} HAVING count(*) > 1)"
    )
    return con.execute(sql).fetchall()[0][0]


def _since(suite: TableSuite, params: Mapping[Param, object]) -> object:
    """Where the suite's rows begin: its ``event_time_in_interval`` lower bound (gold), else the interval's start."""
    for expectation in suite.expectations:
        if expectation.name == "event_time_in_interval":
            return resolve(expectation.min_value, params)
    return params[Param.INTERVAL_START]


def suite_figures(
    con, suite: TableSuite, params: Mapping[Param, object]
) -> list[tuple[str, int, int]] | None:
    """(check name, rows checked, failing rows) of each comparable check of ``suite``; None without a reference."""
    spec = suite.table
    reference = REFERENCE_TABLES.get(spec.path)
    if reference is None or spec.event_time is None:
        return None
    present = {row[0] for row in con.execute(f"DESCRIBE {reference}").fetchall()}

    def column(name: str) -> str:
        if name in present:
            return f'"{name}"'
        if name in spec.partition_by:  # the lake derives its partition column from the event time
            return f'CAST("{spec.event_time}" AS DATE)'
        raise KeyError(name)

    event = column(spec.event_time)
    relation = (
        f"(SELECT * FROM {reference} WHERE {event} >= {_literal(_since(suite, params))} "
        f"AND {event} < {_literal(params[Param.INTERVAL_END])})"
    )
    rows = con.execute(f"SELECT count(*) FROM {relation}").fetchall()[0][0]
    figures = []
    for expectation in suite.expectations:
        try:
            if expectation.kind == "unique":
                failing = _duplicated_rows(con, relation, expectation, column) if rows else 0
            else:
                found = predicates(expectation, params, column)
                sums = ", ".join(f"coalesce(sum(CAST({p} AS BIGINT)), 0)" for p in found)
                failing = max(con.execute(f"SELECT {sums} FROM {relation}").fetchall()[0]) if rows else 0
        except KeyError:
            continue  # a column the reference does not derive
        figures.append((suite.check_name(expectation), rows, failing))
    return figures


def last_audit(lake: Path) -> tuple[datetime, datetime] | None:
    """The interval of the lake's last audit, or None when it has none."""
    path = lake / QUALITY_CHECK_RESULTS.path
    if not DeltaTable.is_deltatable(str(path)):
        return None
    intervals = DeltaTable(str(path)).to_pyarrow_table(columns=["interval_start", "interval_end"])
    if not intervals.num_rows:
        return None
    pairs = sorted(
        set(zip(*(intervals.column(c).to_pylist() for c in ("interval_start", "interval_end")), strict=True))
    )
    return pairs[-1]


def compute_checks(
    con: duckdb.DuckDBPyConnection, lake: Path, settings: Settings
) -> tuple[datetime, datetime] | None:
    """``ref_check_results`` for the lake's last audited interval; that interval, or None when the lake has no audit."""
    audited = last_audit(lake)
    figures = []
    if audited is not None:
        start, end = (utc(t) for t in audited)
        params = interval_params(
            settings.quality, start, end, settings.replay.throughput_window, settings.status.window
        )
        figures = [figure for suite in SUITES for figure in suite_figures(con, suite, params) or []]
    names, rows, failing = (
        (list(column) for column in zip(*figures, strict=True)) if figures else ([], [], [])
    )
    checks = pa.table(
        {"check_name": pa.array(names, pa.string()), "rows_checked": pa.array(rows, pa.int64()),
         "failing_rows": pa.array(failing, pa.int64()), "is_success": pa.array([n == 0 for n in failing], pa.bool_())}
    )  # fmt: skip
    con.register("_checks", checks)
    con.execute(f"CREATE OR REPLACE TABLE {CHECKS_TABLE} AS SELECT * FROM _checks").fetchall()
    con.unregister("_checks")
    return audited


def compare_checks(con: duckdb.DuckDBPyConnection, lake: Path, settings: Settings) -> TableComparison:
    """The lake's expectation results of its last audit against ``ref_check_results``, row for row."""
    name = CHECKS_COMPARED
    audited = compute_checks(con, lake, settings)
    if audited is None:
        return TableComparison(name, 0, 0, 0, 0, list(COMPARED))
    start, _ = audited
    # a table, not a dataset: DuckDB's filters pushed into delta-rs's dataset missed its rows
    results = DeltaTable(str(lake / QUALITY_CHECK_RESULTS.path)).to_pyarrow_table(
        columns=[*COMPARED, "check_kind", "interval_start"]
    )
    con.register("lake_quality_check_results", results)
    columns = ", ".join(COMPARED)
    lake_side = (
        f"SELECT {columns} FROM lake_quality_check_results WHERE check_kind = 'expectation' "
        f"AND interval_start = {_literal(utc(start))} AND check_name IN (SELECT check_name FROM {CHECKS_TABLE})"
    )
    reference_side = f"SELECT {columns} FROM {CHECKS_TABLE}"

    def count(sql: str) -> int:
        return con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0]

    result = TableComparison(
        name,
        lake_rows=count(lake_side),
        reference_rows=count(reference_side),
        only_in_lake=count(f"{lake_side} EXCEPT ALL {reference_side}"),
        only_in_reference=count(f"{reference_side} EXCEPT ALL {lake_side}"),
        columns=list(COMPARED),
    )
    if not result.agrees:
        result.lake_samples = con.execute(
            f"{lake_side} EXCEPT ALL {reference_side} ORDER BY 1 LIMIT 5"
        ).fetchall()
        result.reference_samples = con.execute(
            f"{reference_side} EXCEPT ALL {lake_side} ORDER BY 1 LIMIT 5"
        ).fetchall()
    return result
