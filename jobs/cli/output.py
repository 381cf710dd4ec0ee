"""A query's result on the terminal (aligned columns) or in a file: CSV, JSON lines, Parquet."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from schemas.instants import iso_z

FORMATS = ("table", "csv", "json", "parquet")


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return iso_z(value)
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def render_aligned(rows: Sequence[Mapping[str, object]], columns: Sequence[str]) -> str:
    """Columns padded to their widest value, numbers to the right; the row count last.

    consumer_group   messages
    ---------------  --------
    order-service     142,529
    (1 row)
    """
    cells = [[_text(row[c]) for c in columns] for row in rows]
    numeric = [
        all(isinstance(row[c], int | float | Decimal) or row[c] is None for row in rows) and bool(rows)
        for c in columns
    ]
    widths = [max([len(c), *(len(line[i]) for line in cells)]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        padded = (v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric))
        return "  ".join(padded).rstrip()

    body = [line(columns), line(["-" * w for w in widths]), *(line(c) for c in cells)]
    body.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(body)


def _json_value(value: object) -> object:
    if isinstance(value, datetime):
        return iso_z(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def write_result(table: pa.Table, fmt: str, out: Path | None) -> None:
    """``table`` as ``fmt`` to ``out`` (a file, replaced) or to standard output."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    if fmt == "table":
        text = render_aligned(table.to_pylist(), table.column_names) + "\n"
    elif fmt == "json":
        text = "".join(
            json.dumps({k: _json_value(v) for k, v in row.items()}, ensure_ascii=False) + "\n"
            for row in table.to_pylist()
        )
    else:
        target = pa.BufferOutputStream()
        if fmt == "csv":
            pacsv.write_csv(table, target)
        else:
            pq.write_table(table, target)
        data = target.getvalue().to_pybytes()
        if out is not None:
            out.write_bytes(data)
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        return
    if out is not None:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
