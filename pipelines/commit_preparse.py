"""Arrow pre-parse of commit-event lines of the plain shape, on the reader's batches.

Nearly every line a capture tool writes has one shape: a flat JSON object of the
contract's fields, strings without escapes, integers. For such lines, Arrow's JSON
reader gives every field in one vectorised pass on the executors, and
:mod:`pipelines.commit_events` checks and types those fields exactly as it does the ones
it reads with Spark's strict parse, which every other line takes.

A line is pre-parsed only when it is read exactly as the strict parse reads it:

- it matches ``PLAIN_LINE``: ``{`` members ``}`` where each member is a contract field
  with a value of its JSON type (a string without escapes or control characters, an
  integer in JSON form, or null; ``committed_at`` a string or an integer), with JSON
  spaces and tabs around the tokens; a line with any other field (kept in
  ``extra_fields``), an escape, a byte-order mark or another value type is not;
- Arrow reads it with the contract's types (a field given twice makes Arrow fail).

Arrow fails a whole piece for one offending line: a failing piece is halved until the
offending lines are isolated in pieces of at most ``MIN_PIECE`` lines, which take the
strict path.

Gives the columns of ``PREPARSED_SCHEMA``: ``_pre`` (true for a pre-parsed line),
``_pre_<field>`` (the field's text, null when absent or null) and
``_pre_committed_at_number`` (committed_at was a JSON integer).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from pipelines.commit_events import (
    COMMITTED_AT_NUMBER,
    INTEGER_FIELDS,
    KNOWN_FIELDS,
    PREPARSED,
    STRING_FIELDS,
    preparsed_field,
)

MIN_PIECE = 256  # a failing piece this small goes to the strict path whole
BLOCK_BYTES = 16 << 20  # Arrow's read block: a longer line fails and takes the strict path

_WS = r"[ \t]*"
_STRING = r'"[^"\\\x00-\x1f]*"'
_INTEGER = r"-?(?:0|[1-9][0-9]*)"


def _member(names: tuple[str, ...], *values: str) -> str:
    return f'{_WS}"(?:{"|".join(names)})"{_WS}:{_WS}(?:{"|".join((*values, "null"))}){_WS}'


_MEMBER = "(?:" + "|".join(
    [
        _member(STRING_FIELDS, _STRING),
        _member(tuple(f for f in INTEGER_FIELDS if f != "committed_at"), _INTEGER),
        _member(("committed_at",), _STRING, _INTEGER),
    ]
) + ")"
PLAIN_LINE = rf"^{_WS}\{{(?:{_MEMBER}(?:,{_MEMBER})*|{_WS})\}}{_WS}$"
_NUMBER_TIME = rf'"committed_at"{_WS}:{_WS}-?[0-9]'

PREPARSED_SCHEMA = StructType(
    [StructField(PREPARSED, BooleanType(), False)]
    + [StructField(preparsed_field(f), StringType(), True) for f in KNOWN_FIELDS]
    + [StructField(COMMITTED_AT_NUMBER, BooleanType(), True)]
)


def _arrow_schema(time_type: pa.DataType) -> pa.Schema:
    def type_of(f: str) -> pa.DataType:
        return time_type if f == "committed_at" else pa.int64() if f in INTEGER_FIELDS else pa.string()

    return pa.schema([(f, type_of(f)) for f in KNOWN_FIELDS])


_OPTIONS = {
    time_type: pj.ParseOptions(explicit_schema=_arrow_schema(time_type), unexpected_field_behavior="error")
    for time_type in (pa.string(), pa.int64())
}


def _read(lines: pa.Array, time_type: pa.DataType) -> pa.Table | None:
    """Arrow's reading of ``lines`` (one JSON object each), or None when it refuses them."""
    joined = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n")[0]
    try:
        table = pj.read_json(
            pa.BufferReader(joined.as_buffer()),
            read_options=pj.ReadOptions(use_threads=False, block_size=BLOCK_BYTES),
            parse_options=_OPTIONS[time_type],
        )
    except pa.ArrowInvalid:
        return None
    return table if table.num_rows == len(lines) else None


def _pieces(lines: pa.Array, positions: np.ndarray, time_type: pa.DataType, out: list) -> None:
    """Append ``(positions, table)`` for every piece Arrow reads; halve the pieces it refuses."""
    if len(lines) == 0:
        return
    table = _read(lines, time_type)
    if table is not None:
        out.append((positions, table))
    elif len(lines) > MIN_PIECE:
        half = len(lines) // 2
        _pieces(lines.slice(0, half), positions[:half], time_type, out)
        _pieces(lines.slice(half), positions[half:], time_type, out)


def preparse(lines: pa.Array) -> list[pa.Array]:
    """``PREPARSED_SCHEMA`` columns for ``lines`` (strings, null for unreadable lines)."""
    n = len(lines)
    plain = pc.fill_null(pc.match_substring_regex(lines, PLAIN_LINE), False)
    number_time = pc.fill_null(pc.match_substring_regex(lines, _NUMBER_TIME), False)
    pieces: list = []
    for time_type, chosen in ((pa.string(), pc.and_(plain, pc.invert(number_time))), (pa.int64(), pc.and_(plain, number_time))):
        positions = np.flatnonzero(chosen.to_numpy(zero_copy_only=False))
        _pieces(lines.take(pa.array(positions)), positions, time_type, pieces)
    row_of_line = np.full(n, -1, dtype=np.int64)
    columns: dict[str, list[pa.Array]] = {f: [] for f in KNOWN_FIELDS}
    is_number: list[pa.Array] = []
    offset = 0
    for positions, table in pieces:
        row_of_line[positions] = np.arange(offset, offset + len(positions))
        offset += len(positions)
        for f in KNOWN_FIELDS:
            columns[f].append(table.column(f).combine_chunks().cast(pa.string()))
        number = pa.types.is_integer(table.schema.field("committed_at").type)
        is_number.append(pa.array(np.full(len(positions), number)))
    missing = row_of_line < 0
    take = pa.array(row_of_line, mask=missing)

    def spread(parts: list[pa.Array], kind: pa.DataType) -> pa.Array:
        return pa.concat_arrays(parts).take(take) if parts else pa.nulls(n, kind)

    return [
        pa.array(~missing),
        *[spread(columns[f], pa.string()) for f in KNOWN_FIELDS],
        spread(is_number, pa.bool_()),
    ]
