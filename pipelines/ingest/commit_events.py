"""Parse canonical commit events (JSON lines) into ``bronze/offset_commits`` rows.

The line format is the contract documented by :class:`schemas.records.CommitEvent`:
one JSON object per line with ``committed_at``, ``broker``, ``topic``,
``consumer_group``, ``queue_id``, ``offset`` and optional ``client_host`` and ``path``.

What a record is: every line that is not blank. Blank lines (empty, or whitespace
only, as a trailing newline or a hand-edited file leaves them) carry nothing and are
**not records**: neither landed nor rejected. Every other line is one record that
either lands or is rejected with the first reason that applies: the reader's
``read_error``, ``not valid JSON``, ``duplicate field``, ``not a JSON object``,
``missing field X`` (absent or null), ``mistyped field X``, ``blank field X``,
``queue_id not an integer in [0, 65535]``, ``offset not an integer in [0, 2^53)``,
``unparseable committed_at``, ``unknown path value``.

Lines of the plain shape may arrive pre-parsed by the reader
(:mod:`pipelines.ingest.commit_preparse`: ``PREPARSED`` true and each field's text); their
fields go through the same checks, and are read exactly as the strict parse reads them.
The reader also marks the pre-parsed lines that pass every check by its stricter rules
(``CHECKED``, with their typed time, queue and offset): those land as they are, unchecked
here, and arrive without their text (``line`` null: no rejection can need it).

A line must be exactly one strict JSON value (RFC 8259: no trailing content, no
single quotes or NaN, no duplicate names at any depth). Fields are read with
``from_json`` and the explicit schema ``map<string, variant>``: a field that is absent
is told apart from one of the wrong JSON type (``schema_of_variant``), and fields the
contract does not name are kept, with their JSON types, as one JSON object string in
``extra_fields`` (null when there are none).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.ingest.quarantine import Parsed, first_failure, in_calendar, split_valid
from pipelines.keys import key_kind
from schemas.records import (
    COMMIT_FIELDS,
    EPOCH_MILLIS_DIGITS,
    INTEGER_FIELDS,
    ISO_INSTANT_TEXT,
    KNOWN_FIELDS,
    MAX_EPOCH_MILLIS,
    RANGED_FIELDS,
)
from schemas.tables import OFFSET_COMMITS

COMMIT_COLUMNS = [c for c in OFFSET_COMMITS.columns if c not in ("_ingest_run_id", "commit_date")]
JSON_OPTIONS = {"allowSingleQuotes": "false", "allowNonNumericNumbers": "false"}
_INTEGER_TYPE = r"^(TINYINT|SMALLINT|INT|BIGINT|DECIMAL\(\d+,0\))$"
PREPARSED = "_pre"  # true for a line the reader pre-parsed (see pipelines.ingest.commit_preparse)
COMMITTED_AT_NUMBER = "_pre_committed_at_number"  # a pre-parsed committed_at was a JSON integer
CHECKED = "_pre_checked"  # a pre-parsed line that passed every check there: it lands with its typed values
WHITESPACE = " \t\n\x0b\f\r"  # what a regular expression's \s matches: a blank line is no record
# Unicode's White_Space characters, what the record contract's \S (schemas.records) refuses alone:
# a name of no-break spaces is as blank as one of spaces
NAME_WHITESPACE = (
    WHITESPACE
    + "\x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)


def preparsed_field(field: str) -> str:
    """Column of a pre-parsed field's text."""
    return f"_pre_{field}"


def checked_value(field: str) -> str:
    """Column of a checked line's typed committed_at, queue_id or offset."""
    return f"_pre_{field}_value"


def is_blank(text: Column, whitespace: str = WHITESPACE) -> Column:
    """True for an empty text or one of ``whitespace`` only (null stays null).

    Only a text whose first character is whitespace is trimmed: Spark's trim of a set of
    characters walks the whole text (and allocates two arrays as long as it) even when its
    last character is not one of them.
    """
    starts_blank = F.substring(text, 1, 1).isin(*whitespace)
    return (text == "") | (starts_blank & (F.btrim(text, F.lit(whitespace)) == ""))


def integer_in_range(value: Column, low: int, high_exclusive: int) -> Column:
    """``value`` (an integer) as a long when it lies in ``[low, high_exclusive)``, else null."""
    return F.when((value >= F.lit(low)) & (value < F.lit(high_exclusive)), value.cast("long"))


def _json_kind(value: Column) -> Column:
    """JSON kind of a variant: string, number, integer, boolean, object, array or null."""
    schema = F.schema_of_variant(value)
    return (
        F.when(value.isNull(), F.lit("null"))
        .when(schema == "VOID", F.lit("null"))
        .when(schema == "STRING", F.lit("string"))
        .when(schema == "BOOLEAN", F.lit("boolean"))
        .when(schema.startswith("OBJECT"), F.lit("object"))
        .when(schema.startswith("ARRAY"), F.lit("array"))
        .when(schema.rlike(_INTEGER_TYPE), F.lit("integer"))
        .otherwise(F.lit("number"))
    )


def _preparsed_kind(field: str) -> Column:
    """JSON kind of a pre-parsed field (the pre-parse admits only the contract's types)."""
    text = F.col(preparsed_field(field))
    if field == "committed_at":
        present = F.when(F.col(COMMITTED_AT_NUMBER), F.lit("integer")).otherwise(F.lit("string"))
    else:
        present = F.lit("integer" if field in INTEGER_FIELDS else "string")
    return F.when(text.isNull(), F.lit("null")).otherwise(present)


def _unknown(key: Column, _value: Column) -> Column:
    return ~key.isin(*KNOWN_FIELDS)


def _checked(df: DataFrame) -> Column:
    """True for the lines the reader checked (see the module docstring)."""
    return F.col(CHECKED) if CHECKED in df.columns else F.lit(False)


def _with_fields(df: DataFrame) -> DataFrame:
    """Add ``_strict``/``_json`` (the parsed line), ``extra_fields`` and per known field
    ``_k_<f>`` (JSON kind), ``_s_<f>`` (as text) and, for ``committed_at``, ``queue_id`` and
    ``offset``, ``_d_<f>`` (as an integer); a byte-order mark opening the file is ignored.

    A pre-parsed line gives its fields as they are; any other line is parsed once: a line
    the strict parse accepts has its object read from that parse; only lines it refuses are
    parsed again, leniently, to tell the reason apart.

    Spark compiles a projection into the surrounding code only when none of its expressions
    is interpreted; the lenient parse (``from_json`` to a map of variants) and the filter of
    extra fields (a lambda) are, so both are computed in one projection: every other one
    stays compiled, and rows are copied out of the compiled code once, not once per such step.
    """
    pre = F.col(PREPARSED) if PREPARSED in df.columns else F.lit(False)
    text = F.when(F.col("line_no") == 1, F.regexp_replace("line", "^\ufeff", "")).otherwise(F.col("line"))
    strict = F.col("_strict")
    out = (
        df.withColumn("_pre", pre)
        .withColumn("_text", text)
        .withColumn(
            # Strict parse (no trailing content, no duplicate names at any depth); the line is
            # wrapped in [] so that content after the first value is a syntax error.
            "_strict",
            F.when(~F.col("_pre"), F.try_parse_json(F.concat(F.lit("["), F.col("_text"), F.lit("]")))),
        )
    )
    lenient = F.from_json(F.col("_text"), "map<string, variant>", JSON_OPTIONS)
    parsed = (
        F.when(F.col("_pre"), F.lit(None))
        .when(strict.isNotNull(), F.try_variant_get(strict, "$[0]", "map<string, variant>"))
        .otherwise(lenient)
    )
    out = out.withColumns(
        {
            "_json": parsed,
            # the strict parse orders an object's names; extra fields keep the line's order
            "extra_fields": F.when(
                ~F.col("_pre") & (F.size(F.map_filter(parsed, _unknown)) > 0),
                F.to_json(F.map_filter(lenient, _unknown)),
            ),
        }
    )
    for field in KNOWN_FIELDS:
        value = F.try_element_at(F.col("_json"), F.lit(field))
        kind, as_text = _json_kind(value), F.try_variant_get(value, "$", "string")
        if PREPARSED in df.columns:
            kind = F.when(F.col("_pre"), _preparsed_kind(field)).otherwise(kind)
            as_text = F.when(F.col("_pre"), F.col(preparsed_field(field))).otherwise(as_text)
        out = out.withColumns({f"_k_{field}": kind, f"_s_{field}": as_text})
        if field in INTEGER_FIELDS:
            # from the number's text: a long holds every value the range checks accept, a
            # larger one reads as null (reading the variant as a long directly is much slower)
            # (not for a checked line: its value is typed already, and Spark computes a column
            # for every row, before any expression that would use it only for some)
            integer = ~_checked(df) & (F.col(f"_k_{field}") == "integer")
            out = out.withColumn(f"_d_{field}", F.when(integer, F.col(f"_s_{field}").try_cast("long")))
    return out


def _committed_at(kind: Column, text: Column, number: Column) -> Column:
    """UTC time of an ISO-8601 instant (Z or offset) or of epoch milliseconds (number or digits)."""
    millis = F.when(kind == "integer", number).when(
        (kind == "string") & text.rlike(EPOCH_MILLIS_DIGITS), text.try_cast("long")
    )
    from_millis = F.timestamp_millis(integer_in_range(millis, 0, MAX_EPOCH_MILLIS + 1))
    from_iso = F.when(
        (kind == "string") & text.rlike(ISO_INSTANT_TEXT), in_calendar(text.try_cast("timestamp"))
    )
    return F.when(millis.isNotNull(), from_millis).otherwise(from_iso)


def _field_checks() -> list[tuple[Column, str]]:
    """Each contract field's presence and JSON type (schemas.records.COMMIT_FIELDS), in its order."""
    checks: list[tuple[Column, str]] = []
    for field in COMMIT_FIELDS:
        kind = F.col(f"_k_{field.name}")
        if field.required:
            checks.append((kind != "null", f"missing field {field.name}"))
        present = kind != "null"
        if field.kind == "string":
            checks.append((~present | (kind == "string"), f"mistyped field {field.name}: expected a string"))
            checks.append(
                (
                    ~present | ~is_blank(F.col(f"_s_{field.name}"), NAME_WHITESPACE),
                    f"blank field {field.name}",
                )
            )
        elif field.kind == "integer":
            checks.append(
                (kind.isin("integer", "number"), f"mistyped field {field.name}: expected an integer")
            )
        else:
            expected = f"mistyped field {field.name}: expected a string or a number"
            checks.append((kind.isin("integer", "number", "string"), expected))
    return checks


def _value_checks() -> list[tuple[Column, str]]:
    """Each contract field's value: integers in range, then the time, then the known texts."""
    ranged = [(F.col(f.name).isNotNull(), f.invalid) for f in RANGED_FIELDS]
    times = [(F.col(f.name).isNotNull(), f.invalid) for f in COMMIT_FIELDS if f.kind == "time"]
    texts = [
        ((F.col(f"_k_{f.name}") == "null") | F.col(f"_s_{f.name}").isin(*f.values), f.invalid)
        for f in COMMIT_FIELDS
        if f.values
    ]
    return [*ranged, *times, *texts]


def _reason(checked: Column) -> Column:
    keys = F.map_keys(F.col("_json"))
    values_on_line = F.size(F.try_variant_get(F.col("_strict"), "$", "array<variant>"))
    pre = F.col("_pre")  # a pre-parsed line is one JSON object without duplicate names
    parse_checks = [
        (pre | F.col("_strict").isNotNull() | F.col("_json").isNotNull(), "not valid JSON"),
        (
            pre | F.col("_strict").isNotNull() | (F.size(keys) == F.size(F.array_distinct(keys))),
            "duplicate field",
        ),
        (pre | F.col("_strict").isNotNull(), "not valid JSON"),
        (pre | (values_on_line == 1), "not valid JSON"),
        (pre | F.col("_json").isNotNull(), "not a JSON object"),
    ]
    failure = first_failure(*parse_checks, *_field_checks(), *_value_checks())
    return F.coalesce(F.col("read_error"), F.when(~checked, failure))


def parse_commit_events(lines: DataFrame, files: DataFrame | None = None) -> Parsed:
    """Parse a commit-event lines DataFrame into ``offset_commits`` rows and rejections.

    Needs the reader's lines columns; produces ``Parsed(landed=COMMIT_COLUMNS,
    rejected=REJECTED_COLUMNS)`` with ``evidence='commit_log'``, ``commit_path`` from
    ``path`` and ``key_kind`` from :func:`pipelines.keys.key_kind`. Blank lines are dropped
    as non-records (see the module docstring).

    With ``files``, the lines carry their file's number (``FILE_NUMBER``) in place of the
    file's columns (``source_file``, ``cluster``, ``_file_hash``), which ``files`` holds by
    number: the parse carries the number, and its outputs join the columns back (see
    :func:`pipelines.ingest.quarantine.split_valid`).
    """
    records = lines.where(
        F.col("read_error").isNotNull() | ~F.coalesce(is_blank(F.col("line")), F.lit(False))
    )
    # a line the reader checked lands with its typed values; Spark's checks are for the others
    checked = _checked(lines)

    def unless_checked(field: str, value: Column) -> Column:
        return (
            F.when(checked, F.col(checked_value(field))).otherwise(value)
            if CHECKED in lines.columns
            else value
        )

    typed = (
        _with_fields(records)
        .withColumns(
            {
                "committed_at": unless_checked(
                    "committed_at",
                    _committed_at(
                        F.col("_k_committed_at"), F.col("_s_committed_at"), F.col("_d_committed_at")
                    ),
                ),
                "broker": F.col("_s_broker"),
                "client_host": F.col("_s_client_host"),
                "topic": F.col("_s_topic"),
                "consumer_group": F.col("_s_consumer_group"),
                **{
                    f.name: unless_checked(
                        f.name,
                        F.when(
                            F.col(f"_k_{f.name}") == "integer",
                            integer_in_range(F.col(f"_d_{f.name}"), f.low, f.high),
                        ),
                    )
                    for f in RANGED_FIELDS
                },
                "evidence": F.lit("commit_log"),
                "commit_path": F.col("_s_path"),
                "reported_store_offset": F.lit(None).cast("long"),
            }
        )
        .withColumn("queue_id", F.col("queue_id").cast("int"))
        .withColumn("key_kind", key_kind(F.col("topic"), F.col("consumer_group")))
    )
    return split_valid(typed, _reason(checked), F.col("line"), COMMIT_COLUMNS, files)
