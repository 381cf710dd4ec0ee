"""Row-for-row comparison of the lake's Delta tables with the DuckDB reference tables.

Each lake table is read with delta-rs (``deltalake``, as a pyarrow dataset) into the same
DuckDB connection and compared with its ``ref_*`` table by ``EXCEPT ALL`` both ways over
the compared columns: duplicates count, so a row twice in one and once in the other is a
difference. Timestamps are compared as UTC instants, doubles exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import DeltaTable
from pyspark.sql.types import TimestampType

from jobs.tools.bench.oracle.reference import REFERENCE_TABLES
from schemas.tables import ALL_TABLES, REJECTED_INPUTS, TableSpec

SAMPLE_ROWS = 5
# the audit's expectation figures, compared beside the tables (jobs.tools.bench.oracle.quality)
CHECKS_COMPARED = "quality/check_results (expectations)"
# Columns of the lake table the reference does not derive, and why.
NOT_COMPARED = {
    "_ingest_run_id": "identifies the run, not the data",
    "extra_fields": "the simulator writes no fields beyond the contract",
    "commit_date": "bronze partition column, derived from committed_at",
    "snapshot_date": "bronze partition column, derived from snapshot_at",
    "observed_date": "bronze partition column, derived from observed_at",
    "reset_date": "bronze partition column, derived from reset_at",
    "inflight": "admin-tool detail not used downstream",
    "client_ip": "admin-tool detail not used downstream",
    "last_consumed_at": "admin-tool detail not used downstream",
    "is_name_truncated": "admin-tool detail not used downstream",
}
_SPECS = {spec.path: spec for spec in ALL_TABLES}


@dataclass
class TableComparison:
    """One lake table against its reference: row counts and the rows found on one side only."""

    table: str
    lake_rows: int
    reference_rows: int
    only_in_lake: int
    only_in_reference: int
    columns: list[str] = field(default_factory=list)
    lake_samples: list[tuple] = field(default_factory=list)
    reference_samples: list[tuple] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return self.only_in_lake == 0 and self.only_in_reference == 0


def compared_columns(spec: TableSpec) -> list[str]:
    """The columns compared: all of a silver or gold table, a bronze table's less ``NOT_COMPARED``."""
    if spec.layer in ("silver", "gold"):
        return list(spec.columns)
    return [c for c in spec.columns if c not in NOT_COMPARED]


def lake_relation_name(spec: TableSpec) -> str:
    return "lake_" + spec.path.replace("/", "_")


def register_lake_table(con: duckdb.DuckDBPyConnection, lake: Path, spec: TableSpec) -> str:
    """Expose ``<lake>/<spec.path>`` to DuckDB (an empty table of its schema when absent); returns its name."""
    name = lake_relation_name(spec)
    path = lake / spec.path
    if DeltaTable.is_deltatable(str(path)):
        con.register(name, DeltaTable(str(path)).to_pyarrow_dataset())
    else:
        con.register(name, pa.table({f.name: pa.array([], f.type) for f in spec.arrow_schema}))
    return name


def _select(spec: TableSpec, columns: list[str], relation: str) -> str:
    timestamps = {f.name for f in spec.schema.fields if isinstance(f.dataType, TimestampType)}
    items = [f'CAST("{c}" AS TIMESTAMP) AS "{c}"' if c in timestamps else f'"{c}"' for c in columns]
    return f"SELECT {', '.join(items)} FROM {relation}"


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return con.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0]


def compare_table(con: duckdb.DuckDBPyConnection, lake: Path, table: str, reference: str) -> TableComparison:
    """Compare ``<lake>/<table>`` with the DuckDB table ``reference`` (see the module docstring)."""
    spec = _SPECS[table]
    columns = compared_columns(spec)
    lake_side = _select(spec, columns, register_lake_table(con, lake, spec))
    reference_side = _select(spec, columns, reference)
    lake_only = f"{lake_side} EXCEPT ALL {reference_side}"
    reference_only = f"{reference_side} EXCEPT ALL {lake_side}"
    order = ", ".join(str(i + 1) for i in range(len(columns)))
    result = TableComparison(
        table=table,
        lake_rows=_count(con, lake_side),
        reference_rows=_count(con, reference_side),
        only_in_lake=_count(con, lake_only),
        only_in_reference=_count(con, reference_only),
        columns=columns,
    )
    if not result.agrees:
        result.lake_samples = con.execute(f"{lake_only} ORDER BY {order} LIMIT {SAMPLE_ROWS}").fetchall()
        result.reference_samples = con.execute(
            f"{reference_only} ORDER BY {order} LIMIT {SAMPLE_ROWS}"
        ).fetchall()
    return result


def compare_lake(con: duckdb.DuckDBPyConnection, lake: Path) -> list[TableComparison]:
    """Every reference table against the lake, plus the lake's quarantine (the reference rejects nothing)."""
    results = [compare_table(con, lake, table, reference) for table, reference in REFERENCE_TABLES.items()]
    rejected = _count(con, f"SELECT * FROM {register_lake_table(con, lake, REJECTED_INPUTS)}")
    results.append(TableComparison(REJECTED_INPUTS.path, rejected, 0, rejected, 0, ["(row count only)"]))
    return results


def describe_mismatches(results: list[TableComparison]) -> list[str]:
    """Lines telling which tables differ and showing their first differing rows."""
    lines = []
    for r in results:
        if r.agrees:
            continue
        lines.append(
            f"MISMATCH {r.table}: lake {r.lake_rows:,} rows, DuckDB {r.reference_rows:,} rows; "
            f"{r.only_in_lake:,} only in the lake, {r.only_in_reference:,} only in DuckDB"
        )
        lines.append("  columns: " + ", ".join(r.columns))
        lines += [f"  lake only:   {row}" for row in r.lake_samples]
        lines += [f"  DuckDB only: {row}" for row in r.reference_samples]
    return lines
