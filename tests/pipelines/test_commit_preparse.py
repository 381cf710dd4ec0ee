"""The Arrow pre-parse takes exactly the plain lines, with their fields as text."""

from __future__ import annotations

import json

import pyarrow as pa

from pipelines.commit_events import KNOWN_FIELDS
from pipelines.commit_preparse import MIN_PIECE, preparse

PLAIN = {"committed_at": "2021-06-03T16:00:00Z", "broker": "b", "topic": "t", "consumer_group": "g", "queue_id": 5, "offset": 7}
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
    '{"queue_id":"5"}', '{"queue_id":5.0}', '{"offset":1e3}', '{"offset":01}',  # not an integer in JSON form
    '{"offset":99999999999999999999}',  # beyond a long
    '{"broker":true}', '{"broker":5}', '{"topic":{"a":1}}', '{"topic":["a"]}', '{"committed_at":1.5}',
    "[1]", "5", '"x"', "null", "", "   ", "not json", '{"broker":"b",}', "{'broker':'b'}", '{"offset":NaN}',
]


def one_by_one(lines: list[str | None]) -> list[dict | None]:
    """Each line pre-parsed alone: its fields' texts, or None when it takes the strict path."""
    out = []
    for line in lines:
        pre, *fields, number = (c[0].as_py() for c in preparse(pa.array([line], pa.string())))
        out.append({**dict(zip(KNOWN_FIELDS, fields)), "number": number} if pre else None)
    return out


def test_plain_lines_are_pre_parsed_with_their_fields_as_text():
    lines = [
        json.dumps(PLAIN),
        json.dumps({**PLAIN, "committed_at": 1622736000123, "client_host": "10.0.0.7:35394", "path": "update_offset"}),
        ' { "broker" : null ,\t"offset" : -5 } ',
        "{}",
        json.dumps({**PLAIN, "topic": "%RETRY%订单"}, ensure_ascii=False),
    ]
    common = {"client_host": None, "path": None}
    assert one_by_one(lines) == [
        {**PLAIN, **common, "queue_id": "5", "offset": "7", "number": False},
        {**PLAIN, "committed_at": "1622736000123", "client_host": "10.0.0.7:35394", "path": "update_offset",
         "queue_id": "5", "offset": "7", "number": True},
        {**{f: None for f in KNOWN_FIELDS}, "offset": "-5", "number": False},
        {**{f: None for f in KNOWN_FIELDS}, "number": False},
        {**PLAIN, **common, "topic": "%RETRY%订单", "queue_id": "5", "offset": "7", "number": False},
    ]


def test_every_other_line_takes_the_strict_path():
    assert one_by_one([*NOT_PLAIN, None]) == [None] * (len(NOT_PLAIN) + 1)


def test_a_refused_line_sends_only_its_small_piece_to_the_strict_path():
    lines = [json.dumps({**PLAIN, "offset": i}) for i in range(4000)]
    lines[1000] = NOT_PLAIN[0]
    pre, *fields, _ = preparse(pa.array(lines, pa.string()))
    flags = pre.to_pylist()
    assert flags[1000] is False
    assert len(lines) - MIN_PIECE <= sum(flags) < len(lines)
    offsets = fields[KNOWN_FIELDS.index("offset")].to_pylist()
    assert all(offsets[i] == str(i) for i in range(len(lines)) if flags[i])
