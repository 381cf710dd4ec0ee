"""Arrow pre-parse of commit-event lines of the plain shape, on the reader's batches.

Nearly every line a capture tool writes has one shape: a flat JSON object of the
contract's fields, strings without escapes, integers. For such lines, Arrow's JSON
reader gives every field in one vectorised pass on the executors, and
:mod:`pipelines.ingest.commit_events` checks and types those fields exactly as it does the ones
it reads with Spark's strict parse, which every other line takes.

A line is pre-parsed only when it is read exactly as the strict parse reads it:

- it matches ``PLAIN_LINE``: ``{`` members ``}`` where each member is a contract field
  with a value of its JSON type (a string without escapes or control characters, an
  integer in JSON form, or null; ``committed_at`` a string or an integer), with JSON
  spaces and tabs around the tokens; a line with any other field (kept in
  ``extra_fields``), an escape, a byte-order mark or another value type is not;
- Arrow reads it with the contract's types (a field given twice makes Arrow fail).

A pre-parsed line is also *checked* here when it passes every check of the record
contract, told by rules that accept a subset of what the Spark checks accept (required
fields present, strings not blank, ``queue_id`` and ``offset`` in range, ``path`` a known
value, ``committed_at`` epoch milliseconds in range or an ISO instant in ``Z`` with at most
microsecond digits, a real date and time). Such a line lands with the values computed here;
Spark checks every other line, so a rejection has one source of reasons.

Arrow fails a whole piece for one offending line: a failing piece is halved until the
offending lines are isolated in pieces of at most ``MIN_PIECE`` lines, which take the
strict path.

Gives the columns of ``PREPARSED_SCHEMA``: ``_pre`` (true for a pre-parsed line),
``_pre_<field>`` (the field's text, null when absent or null),
``_pre_committed_at_number`` (committed_at was a JSON integer), ``_pre_checked`` (true for
a checked line) and, for checked lines, the typed ``committed_at``, ``queue_id`` and
``offset`` (``_pre_<field>_value``).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType, TimestampType

from pipelines.ingest.commit_events import (
    CHECKED,
    COMMITTED_AT_NUMBER,
    NAME_WHITESPACE,
    PREPARSED,
    checked_value,
    preparsed_field,
)
from pipelines.ingest.quarantine import FILE_NUMBER
from schemas.keys import key_kind_of
from schemas.records import (
    COMMIT_FIELDS,
    EPOCH_MILLIS_DIGITS,
    INTEGER_FIELDS,
    KNOWN_FIELDS,
    MAX_EPOCH_MILLIS,
    RANGED_FIELDS,
    REQUIRED_FIELDS,
    STRING_FIELDS,
)
from schemas.tables import OFFSET_COMMITS

MIN_PIECE = 256  # a failing piece this small goes to the strict path whole
BLOCK_BYTES = 16 << 20  # Arrow's read block: a longer line fails and takes the strict path

_WS = r"[ \t]*"
_STRING = r'"[^"\\\x00-\x1f]*"'
_INTEGER = r"-?(?:0|[1-9][0-9]*)"


def _member(names: tuple[str, ...], *values: str) -> str:
    return f'{_WS}"(?:{"|".join(names)})"{_WS}:{_WS}(?:{"|".join((*values, "null"))}){_WS}'


_MEMBER = (
    "(?:"
    + "|".join(
        [
            _member(STRING_FIELDS, _STRING),
            _member(tuple(f for f in INTEGER_FIELDS if f != "committed_at"), _INTEGER),
            _member(("committed_at",), _STRING, _INTEGER),
        ]
    )
    + ")"
)
PLAIN_LINE = rf"^{_WS}\{{(?:{_MEMBER}(?:,{_MEMBER})*|{_WS})\}}{_WS}$"
_NUMBER_TIME = rf'"committed_at"{_WS}:{_WS}-?[0-9]'

# an ISO instant read here: UTC (Z), at most microsecond digits (any other form is Spark's to read)
_ISO_UTC = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$"
_NOT_BLANK = f"[^{re.escape(NAME_WHITESPACE)}]"
TYPED_FIELDS = {"committed_at": TimestampType(), "queue_id": LongType(), "offset": LongType()}

PREPARSED_SCHEMA = StructType(
    [StructField(PREPARSED, BooleanType(), False)]
    + [StructField(preparsed_field(f), StringType(), True) for f in KNOWN_FIELDS]
    + [StructField(COMMITTED_AT_NUMBER, BooleanType(), True), StructField(CHECKED, BooleanType(), False)]
    + [StructField(checked_value(f), kind, True) for f, kind in TYPED_FIELDS.items()]
)
_ARROW_TYPES = {f.name: f.type for f in to_arrow_schema(PREPARSED_SCHEMA, timezone="UTC")}


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


def _in_range(values: pa.Array, low: int, high_exclusive: int) -> pa.Array:
    return pc.and_(pc.greater_equal(values, low), pc.less(values, high_exclusive))


def _days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's ``days_from_civil``)."""
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    year_of_era = y - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
FIRST_YEAR_MICROS = -62_135_596_800_000_000  # 0001-01-01T00:00:00Z


def _iso_micros(texts: pa.Array) -> pa.Array:
    """UTC microseconds of ISO instants in ``Z`` (``_ISO_UTC``) that name a real date and time;
    null for every other text.

    Arrow's cast reads such a text as the calendar has it, and fails the whole batch on one
    that names no real date or time; a batch holding one is read by :func:`_calendar_micros`.
    The cast also reads the year 0, which the strict parse refuses.
    """
    micros = np.zeros(len(texts), np.int64)
    valid = np.zeros(len(texts), bool)
    rows = np.flatnonzero(
        pc.fill_null(pc.match_substring_regex(texts, _ISO_UTC), False).to_numpy(zero_copy_only=False)
    )
    if len(rows):
        iso = texts.take(pa.array(rows))
        try:
            read = pc.cast(iso, pa.timestamp("us", "UTC")).cast(pa.int64()).to_numpy()
            micros[rows], valid[rows] = read, read >= FIRST_YEAR_MICROS
        except pa.ArrowInvalid:
            micros[rows], valid[rows] = _calendar_micros(iso)
    return pa.array(micros, mask=~valid)


def _calendar_micros(iso: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """UTC microseconds of texts ``_ISO_UTC`` matched, and which of them name a real date and
    time (year 1 on), computed field by field."""

    def number(start: int, stop: int) -> np.ndarray:  # the regular expression made these digits
        return pc.cast(pc.utf8_slice_codeunits(iso, start, stop), pa.int64()).to_numpy()

    year, month, day = number(0, 4), number(5, 7), number(8, 10)
    hour, minute, second = number(11, 13), number(14, 16), number(17, 19)
    fraction = pc.utf8_rpad(pc.utf8_rtrim(pc.utf8_slice_codeunits(iso, 20, 27), "Z"), 6, "0")
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_days = _MONTH_DAYS[np.clip(month, 0, 12)] + ((month == 2) & leap)
    real = (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days)
    real &= (hour < 24) & (minute < 60) & (second < 60)
    seconds = _days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
    return seconds * 1_000_000 + pc.cast(fraction, pa.int64()).to_numpy(), real


def _committed_at_micros(times: pa.Array) -> pa.Array:
    """committed_at in UTC microseconds where the rules of the module docstring read it, else null."""
    if pa.types.is_integer(times.type):
        millis = times
    else:
        millis = pc.cast(
            pc.if_else(pc.match_substring_regex(times, EPOCH_MILLIS_DIGITS), times, None), pa.int64()
        )
    millis = pc.if_else(_in_range(millis, 0, MAX_EPOCH_MILLIS + 1), millis, None)
    micros = pc.multiply(millis, 1000)
    return micros if pa.types.is_integer(times.type) else pc.coalesce(micros, _iso_micros(times))


def _checked(table: pa.Table) -> tuple[pa.Array, dict[str, pa.Array]]:
    """Which lines of ``table`` (Arrow's reading) pass every check, and their typed values
    (null where a line is not checked)."""
    column = {f: table.column(f).combine_chunks() for f in KNOWN_FIELDS}
    # the checks of the record contract (schemas.records.COMMIT_FIELDS), by stricter rules for the time
    values = {"committed_at": _committed_at_micros(column["committed_at"])}
    values |= {
        f.name: pc.if_else(_in_range(column[f.name], f.low, f.high), column[f.name], None)
        for f in RANGED_FIELDS
    }
    passes = [pc.is_valid(values[f]) for f in TYPED_FIELDS]
    passes += [pc.is_valid(column[f]) for f in REQUIRED_FIELDS]
    passes += [
        pc.or_kleene(pc.is_null(column[f]), pc.match_substring_regex(column[f], _NOT_BLANK))
        for f in STRING_FIELDS
    ]
    passes += [
        pc.or_kleene(pc.is_null(column[f.name]), pc.is_in(column[f.name], pa.array(f.values)))
        for f in COMMIT_FIELDS
        if f.values
    ]
    checked = pc.fill_null(functools.reduce(pc.and_kleene, passes), False)
    values["committed_at"] = values["committed_at"].cast(_ARROW_TYPES[checked_value("committed_at")])
    return checked, {f: pc.if_else(checked, v, None) for f, v in values.items()}


def preparse(lines: pa.Array) -> list[pa.Array]:
    """``PREPARSED_SCHEMA`` columns for ``lines`` (strings, null for unreadable lines)."""
    n = len(lines)
    plain = pc.fill_null(pc.match_substring_regex(lines, PLAIN_LINE), False)
    number_time = pc.fill_null(pc.match_substring_regex(lines, _NUMBER_TIME), False)
    pieces: list = []
    for time_type, chosen in (
        (pa.string(), pc.and_(plain, pc.invert(number_time))),
        (pa.int64(), pc.and_(plain, number_time)),
    ):
        positions = np.flatnonzero(chosen.to_numpy(zero_copy_only=False))
        # nearly always every line is chosen: then the lines are read as they are, not copied
        _pieces(
            lines if len(positions) == n else lines.take(pa.array(positions)), positions, time_type, pieces
        )
    row_of_line = np.full(n, -1, dtype=np.int64)
    columns: dict[str, list[pa.Array]] = {name: [] for name in PREPARSED_SCHEMA.names[1:]}
    offset = 0
    for positions, table in pieces:
        row_of_line[positions] = np.arange(offset, offset + len(positions))
        offset += len(positions)
        for f in KNOWN_FIELDS:
            columns[preparsed_field(f)].append(table.column(f).combine_chunks().cast(pa.string()))
        number = pa.types.is_integer(table.schema.field("committed_at").type)
        columns[COMMITTED_AT_NUMBER].append(pa.array(np.full(len(positions), number)))
        checked, values = _checked(table)
        columns[CHECKED].append(checked)
        for f, value in values.items():
            columns[checked_value(f)].append(value)
    missing = row_of_line < 0
    take = pa.array(row_of_line, mask=missing)
    # one piece of every line, in order (the common case): its columns are already the lines'
    whole = len(pieces) == 1 and len(pieces[0][0]) == n

    def spread(name: str) -> pa.Array:
        parts = columns[name]
        if whole:
            return parts[0]
        return pa.concat_arrays(parts).take(take) if parts else pa.nulls(n, _ARROW_TYPES[name])

    out = {name: spread(name) for name in PREPARSED_SCHEMA.names[1:]}
    out[CHECKED] = pc.fill_null(out[CHECKED], False)  # a line not pre-parsed is not checked
    return [pa.array(~missing), *out.values()]


# bronze/offset_commits as Arrow gives it (Spark's timestamps are UTC instants)
COMMITS_ARROW_SCHEMA = to_arrow_schema(OFFSET_COMMITS.schema, timezone="UTC")
_MICROS_PER_DAY = 86_400_000_000


def checked_commit_rows(
    lines: pa.RecordBatch, files: dict[int, tuple[str, str, str]], run_id: str
) -> pa.Table:
    """bronze/offset_commits rows of checked lines, as the commit-event parse lands them.

    ``lines``: the reader's columns (``FILE_NUMBER``, ``line_no``, ...) and ``PREPARSED_SCHEMA``'s,
    every line checked; ``files``: each file number's ``(source_file, cluster, _file_hash)``;
    ``run_id``: the ingest run's id. A checked line is a flat object of the contract's fields,
    so it has no extra fields and no reported store offset.
    """
    n = lines.num_rows
    column = {name: lines.column(name) for name in lines.schema.names}
    numbers = column[FILE_NUMBER].to_numpy()
    known = sorted(set(numbers.tolist()))
    slot = pa.array(np.searchsorted(known, numbers))
    per_file = [pa.array([files[number][i] for number in known], pa.string()).take(slot) for i in range(3)]
    topic, group = column[preparsed_field("topic")], column[preparsed_field("consumer_group")]
    pairs = pc.binary_join_element_wise(topic, group, "\x00").dictionary_encode()
    kinds = pa.array(
        [key_kind_of(*pair.split("\x00", 1)) for pair in pairs.dictionary.to_pylist()], pa.string()
    )
    committed_at = column[checked_value("committed_at")]
    days = np.floor_divide(committed_at.cast(pa.int64()).to_numpy(), _MICROS_PER_DAY).astype(np.int32)
    values = {
        "cluster": per_file[1],
        "broker": column[preparsed_field("broker")],
        "committed_at": committed_at,
        "client_host": column[preparsed_field("client_host")],
        "topic": topic,
        "consumer_group": group,
        "key_kind": kinds.take(pairs.indices),
        "queue_id": column[checked_value("queue_id")].cast(pa.int32()),
        "offset": column[checked_value("offset")],
        "evidence": pa.repeat(pa.scalar("commit_log"), n),
        "commit_path": column[preparsed_field("path")],
        "reported_store_offset": pa.nulls(n, pa.int64()),
        "extra_fields": pa.nulls(n, pa.string()),
        "source_file": per_file[0],
        "line_no": column["line_no"],
        "_file_hash": per_file[2],
        "_ingest_run_id": pa.repeat(pa.scalar(run_id), n),
        "commit_date": pa.array(days, pa.date32()),
    }
    return pa.Table.from_arrays(
        [values[f.name].cast(f.type) for f in COMMITS_ARROW_SCHEMA], schema=COMMITS_ARROW_SCHEMA
    )
