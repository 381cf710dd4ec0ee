"""Compare two lakes table by table, row for row: ``python -m jobs.tools.lake_compare LAKE_A LAKE_B``.

Every Delta table found under either root (``<layer>/<table>``) is read with delta-rs, the
columns that say *when* or *by which run* a row was written are left out (they differ between
two runs that wrote the same rows), and the rest is compared as a multiset of rows. Prints one
line per table and exits 1 when any table differs (or exists in one lake only).

Used to show that a change of the code leaves every table as it was, and that a lake a crash
interrupted ends up equal to one that never crashed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

# columns that record the run or the moment a row was written, not what the row says
RUN_COLUMNS = frozenset(
    {
        "_ingest_run_id",
        "run_id",
        "ingested_at",
        "rejected_at",
        "finished_at",
        "planned_at",
        "planned_version",
        "published_at",
        "replayed_at",
        "file_mtime_ns",
        "batch_id",
    }
)


@dataclass(frozen=True)
class TableComparison:
    path: str
    rows_a: int | None  # None: the table is not in that lake
    rows_b: int | None
    only_in_a: int = 0  # rows (with multiplicity) the other lake lacks
    only_in_b: int = 0
    sample: tuple = ()

    @property
    def agrees(self) -> bool:
        return (
            self.rows_a is not None and self.rows_b is not None and not self.only_in_a and not self.only_in_b
        )

    def line(self) -> str:
        if self.rows_a is None or self.rows_b is None:
            where = "A" if self.rows_b is None else "B"
            return f"  DIFFERS  {self.path:<34} only in lake {where}"
        if self.agrees:
            return f"  same     {self.path:<34} {self.rows_a:>12,} rows"
        return (
            f"  DIFFERS  {self.path:<34} {self.rows_a:>12,} / {self.rows_b:,} rows: {self.only_in_a:,} only in A, "
            f"{self.only_in_b:,} only in B; e.g. {self.sample[:1]}"
        )


def delta_tables(root: Path) -> list[str]:
    """``<layer>/<table>`` of every Delta table under ``root`` (staging and reports left out)."""
    return sorted(
        log.parent.relative_to(root).as_posix()
        for log in root.glob("*/*/_delta_log")
        if not log.parent.parent.name.startswith("_")
    )


def _rows(table: pa.Table, ignore: frozenset[str]) -> Counter:
    kept = [c for c in table.column_names if c not in ignore]
    columns = [table.column(c).to_pylist() for c in sorted(kept)]
    return Counter(zip(*columns)) if columns else Counter()


def _latest(table: pa.Table, column: str) -> pa.Table:
    """The rows of ``table`` whose ``column`` holds its greatest value, without that column."""
    if table.num_rows == 0:
        return table.drop_columns([column])
    return table.filter(pc.equal(table.column(column), pc.max(table.column(column)))).drop_columns([column])


def compare_table(
    a: Path, b: Path, path: str, ignore: frozenset[str] = RUN_COLUMNS, latest_of: str | None = None
) -> TableComparison:
    """``path`` in both lakes, row for row (``latest_of``: only the rows of the greatest value of that
    column in each lake, e.g. the last replay checkpoint, whose time differs between runs)."""
    tables = [
        DeltaTable(str(root / path)).to_pyarrow_table() if (root / path / "_delta_log").is_dir() else None
        for root in (a, b)
    ]
    if latest_of is not None:
        tables = [None if t is None else _latest(t, latest_of) for t in tables]
    if tables[0] is None or tables[1] is None:
        return TableComparison(
            path,
            None if tables[0] is None else tables[0].num_rows,
            None if tables[1] is None else tables[1].num_rows,
        )
    rows_a, rows_b = (_rows(t, ignore) for t in tables)
    only_a, only_b = rows_a - rows_b, rows_b - rows_a
    sample = tuple(list(only_a)[:2]) + tuple(list(only_b)[:2])
    return TableComparison(
        path, tables[0].num_rows, tables[1].num_rows, sum(only_a.values()), sum(only_b.values()), sample
    )


def compare_lakes(a: Path, b: Path, ignore: frozenset[str] = RUN_COLUMNS) -> list[TableComparison]:
    """One comparison per table found in either lake."""
    paths = sorted(set(delta_tables(a)) | set(delta_tables(b)))
    return [compare_table(a, b, path, ignore) for path in paths]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobs.tools.lake_compare", description=__doc__.splitlines()[0]
    )
    parser.add_argument("lake_a", type=Path)
    parser.add_argument("lake_b", type=Path)
    parser.add_argument(
        "--ignore", action="append", default=[], help="another column to leave out (repeatable)"
    )
    parser.add_argument("--tables", nargs="*", help="compare only these <layer>/<table> paths")
    args = parser.parse_args(argv)
    ignore = RUN_COLUMNS | set(args.ignore)
    paths = args.tables or sorted(set(delta_tables(args.lake_a)) | set(delta_tables(args.lake_b)))
    results = [compare_table(args.lake_a, args.lake_b, path, ignore) for path in paths]
    for result in results:
        print(result.line())
    differing = [r for r in results if not r.agrees]
    total = sum(r.rows_a or 0 for r in results)
    print(f"{len(results) - len(differing)} of {len(results)} tables agree ({total:,} rows in lake A)")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
