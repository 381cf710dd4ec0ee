"""The Arrow pre-parse takes exactly the plain lines, with their fields as text, and checks the
lines that pass every check by its stricter rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa

from pipelines.ingest.commit_events import (
    CHECKED,
    COMMITTED_AT_NUMBER,
    PREPARSED,
    checked_value,
    preparsed_field,
)
from pipelines.ingest.commit_preparse import MIN_PIECE, PREPARSED_SCHEMA, preparse
from schemas.records import KNOWN_FIELDS

PLAIN = {
    "committed_at": "2021-06-03T16:00:00Z",
    "broker": "b",
    "topic": "t",
    "consumer_group": "g",
    "queue_id": 5,
    "offset": 7,
}
# Lines the strict path must read: each would be read differently, or not at all, by a plain JSON reader.
NOT_PLAIN = [
    '{"committed_at":"x","broker":"b","broker":"c"}',  # a field twice
    '{"committed_at":"x","committed_at":1}',  # a field twice, of two kinds
    '{"broker":"b","agent":"hook"}',  # a field the contract does not name (kept in extra_fields)
    '{"broker":"a\\"b"}',  # an escape
    '{"broker":"a\tb"}',  # a control character inside a string
    "\ufeff" + json.dumps(PLAIN),  # a byte-order mark
    '{"broker":"b"} x',  # trailing content
    '{"broker":"b"}{"broker":"c"}',  # two values on one line
    '{"queue_id":"5"}',
    '{"queue_id":5.0}',
    '{"offset":1e3}',
    '{"offset":01}',  # not an integer in JSON form
    '{"offset":99999999999999999999}',  # beyond a long
    '{"broker":true}',
    '{"broker":5}',
    '{"topic":{"a":1}}',
    '{"topic":["a"]}',
    '{"committed_at":1.5}',
    "[1]",
    "5",
    '"x"',
    "null",
    "",
    "   ",
    "not json",
    '{"broker":"b",}',
    "{'broker':'b'}",
    '{"offset":NaN}',
]


def one_by_one(lines: list[str | None]) -> list[dict | None]:
    """Each line pre-parsed alone: its fields' texts, or None when it takes the strict path."""
    out = []
    for line in lines:
        column = dict(
            zip(PREPARSED_SCHEMA.names, (c[0].as_py() for c in preparse(pa.array([line], pa.string()))))
        )
        fields = {f: column[preparsed_field(f)] for f in KNOWN_FIELDS}
        out.append({**fields, "number": column[COMMITTED_AT_NUMBER]} if column[PREPARSED] else None)
    return out


def test_plain_lines_are_pre_parsed_with_their_fields_as_text():
    lines = [
        json.dumps(PLAIN),
        json.dumps(
            {**PLAIN, "committed_at": 1622736000123, "client_host": "10.0.0.7:35394", "path": "update_offset"}
        ),
        ' { "broker" : null ,\t"offset" : -5 } ',
        "{}",
        json.dumps({**PLAIN, "topic": "%RETRY%订单"}, ensure_ascii=False),
    ]
    common = {"client_host": None, "path": None}
    assert one_by_one(lines) == [
        {**PLAIN, **common, "queue_id": "5", "offset": "7", "number": False},
        {
            **PLAIN,
            "committed_at": "1622736000123",
            "client_host": "10.0.0.7:35394",
            "path": "update_offset",
            "queue_id": "5",
            "offset": "7",
            "number": True,
        },
        {**dict.fromkeys(KNOWN_FIELDS), "offset": "-5", "number": False},
        {**dict.fromkeys(KNOWN_FIELDS), "number": False},
        {**PLAIN, **common, "topic": "%RETRY%订单", "queue_id": "5", "offset": "7", "number": False},
    ]


def test_every_other_line_takes_the_strict_path():
    assert one_by_one([*NOT_PLAIN, None]) == [None] * (len(NOT_PLAIN) + 1)


def test_a_refused_line_sends_only_its_small_piece_to_the_strict_path():
    lines = [json.dumps({**PLAIN, "offset": i}) for i in range(4000)]
    lines[1000] = NOT_PLAIN[0]
    column = dict(zip(PREPARSED_SCHEMA.names, preparse(pa.array(lines, pa.string()))))
    flags = column[PREPARSED].to_pylist()
    assert flags[1000] is False
    assert len(lines) - MIN_PIECE <= sum(flags) < len(lines)
    offsets = column[preparsed_field("offset")].to_pylist()
    assert all(offsets[i] == str(i) for i in range(len(lines)) if flags[i])


def checked_values(lines: list[str]) -> list[tuple | None]:
    """Each line's typed (committed_at, queue_id, offset) when the pre-parse checked it, else None."""
    column = dict(zip(PREPARSED_SCHEMA.names, preparse(pa.array(lines, pa.string()))))
    values = zip(*(column[checked_value(f)].to_pylist() for f in ("committed_at", "queue_id", "offset")))
    return [v if checked else None for checked, v in zip(column[CHECKED].to_pylist(), values)]


def test_lines_that_pass_every_check_are_checked_with_their_typed_values():
    def line(**fields) -> str:
        return json.dumps({**PLAIN, **fields})

    utc = UTC
    assert checked_values(
        [
            line(),
            line(
                committed_at="2024-02-29T23:59:59.123456Z",
                queue_id=65535,
                offset=2**53 - 1,
                path="update_offset",
            ),
            line(
                committed_at="2021-06-03T16:00:00.1Z",
                queue_id=0,
                offset=0,
                client_host="h",
                path="pull_piggyback",
            ),
            line(committed_at=1622736000123),
            line(committed_at="1622736000123"),
            line(committed_at=0),
            line(committed_at="0001-01-01T00:00:00Z"),
            line(topic=" orders"),
        ]
    ) == [
        (datetime(2021, 6, 3, 16, tzinfo=utc), 5, 7),
        (datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=utc), 65535, 2**53 - 1),
        (datetime(2021, 6, 3, 16, 0, 0, 100000, tzinfo=utc), 0, 0),
        (datetime(2021, 6, 3, 16, 0, 0, 123000, tzinfo=utc), 5, 7),
        (datetime(2021, 6, 3, 16, 0, 0, 123000, tzinfo=utc), 5, 7),
        (datetime(1970, 1, 1, tzinfo=utc), 5, 7),
        (datetime(1, 1, 1, tzinfo=utc), 5, 7),
        (datetime(2021, 6, 3, 16, tzinfo=utc), 5, 7),
    ]


# Pre-parsed lines left to Spark's checks: each fails a check, or is a form only Spark reads.
UNCHECKED = [
    {"committed_at": None},
    {"broker": None},
    {"topic": None},
    {"consumer_group": None},
    {"queue_id": None},
    {"offset": None},
    {"broker": ""},
    {"topic": "  "},
    {"client_host": " "},
    {"path": "rebalance"},
    {"path": ""},
    {"queue_id": -1},
    {"queue_id": 65536},
    {"offset": -1},
    {"offset": 2**53},
    {"committed_at": -1},
    {"committed_at": 253_402_300_800_000},
    {"committed_at": "1234567890123456"},
    {"committed_at": "yesterday"},
    {"committed_at": "2023-02-29T00:00:00Z"},
    {"committed_at": "2021-04-31T00:00:00Z"},
    {"committed_at": "2021-13-01T00:00:00Z"},
    {"committed_at": "2021-00-01T00:00:00Z"},
    {"committed_at": "2021-06-00T00:00:00Z"},
    {"committed_at": "2021-06-03T24:00:00Z"},
    {"committed_at": "2021-06-03T23:60:00Z"},
    {"committed_at": "2021-06-03T23:59:60Z"},
    {"committed_at": "0000-01-01T00:00:00Z"},
    {"committed_at": "2021-06-03T16:00:00.1234567Z"},
    {"committed_at": "2021-06-03T16:00:00+08:00"},
    {"committed_at": "2021-06-03T16:00:00"},
    {"committed_at": "2021-06-03 16:00:00Z"},
    {"committed_at": "2021-06-03T16:00:00.Z"},
]


def test_every_other_pre_parsed_line_is_left_to_the_checks():
    lines = [json.dumps({**PLAIN, **fields}) for fields in UNCHECKED]
    assert all(one_by_one(lines))  # all pre-parsed
    assert checked_values(lines) == [None] * len(lines)


def test_iso_instants_are_read_as_the_calendar_has_them():
    # every 1,000,003 minutes over four centuries (leap days, century years, 1600 and 2000) and each day of a leap February
    start = datetime(1600, 1, 1, tzinfo=UTC)
    instants = [
        start + timedelta(minutes=m, microseconds=m % 1_000_000) for m in range(0, 210_000_000, 1_000_003)
    ]
    instants += [datetime(2000, 2, day, 23, 59, 59, 999999, tzinfo=UTC) for day in range(1, 30)]
    texts = [t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") for t in instants]
    lines = [json.dumps({**PLAIN, "committed_at": t}) for t in texts]
    assert [v and v[0] for v in checked_values(lines)] == instants
    # a batch holding a date the calendar lacks is read field by field, to the same instants
    no_such_day = json.dumps({**PLAIN, "committed_at": "2023-02-29T00:00:00Z"})
    assert [v and v[0] for v in checked_values([*lines, no_such_day])] == [*instants, None]


def test_the_year_0_is_left_to_the_checks_in_a_batch_of_real_dates():
    lines = [
        json.dumps({**PLAIN, "committed_at": t})
        for t in ("0000-12-31T23:59:59.999999Z", "0001-01-01T00:00:00Z")
    ]
    assert checked_values(lines) == [None, (datetime(1, 1, 1, tzinfo=UTC), 5, 7)]
