"""Broadcast clients' offsets.json: the tokenizer without Spark, then explode_client_offsets."""

from __future__ import annotations

import gzip
from datetime import datetime

import pytest
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType, TimestampType

from pipelines.ingest.client_offsets import (
    ClientOffsetsFormatError,
    ClientQueueOffset,
    explode_client_offsets,
    parse_client_offsets,
    parse_client_offsets_bytes,
)

EXCERPT = "excerpts/client_offsets.json__LocalFileOffsetStore__YunaiV-Blog.json"


def _queue(broker: str, queue_id: int, topic: str, offset: int, indent: str = "\t\t") -> str:
    return (
        f'{{\n{indent}\t"brokerName":"{broker}",\n{indent}\t"queueId":{queue_id},\n'
        f'{indent}\t"topic":"{topic}"\n{indent}}}:{offset}'
    )


def test_real_excerpt(real_samples):
    text = (real_samples / EXCERPT).read_text(encoding="utf-8")
    assert parse_client_offsets(text) == [
        ClientQueueOffset("broker-a", "TopicTest", 3, 1470),
        ClientQueueOffset("broker-a", "TopicTest", 2, 1471),
        ClientQueueOffset("broker-a", "TopicTest", 1, 1470),
        ClientQueueOffset("broker-a", "TopicTest", 0, 1470),
    ]


@pytest.mark.parametrize(
    "text",
    [
        '{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:5,{"brokerName":"c","queueId":0,"topic":"%RETRY%g"}:0}}',
        '\ufeff{\r\n\t"offsetTable":{'
        + _queue("b", 1, "T", 5)
        + ","
        + _queue("c", 0, "%RETRY%g", 0)
        + "\r\n\t}\r\n}",
        # unknown fields, in the document and in a key, are tolerated
        '{"dataVersion":{"counter":3,"flags":[1,true,null,-2.5e3]},"offsetTable":{'
        '{"brokerName":"b","queueId":1,"topic":"T","extra":"x"}:5,{"topic":"%RETRY%g","queueId":0,"brokerName":"c"}:0}}',
        # a queue listed twice keeps its last offset, in its first place
        '{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:4,{"brokerName":"c","queueId":0,'
        '"topic":"%RETRY%g"}:0,{"brokerName":"b","queueId":1,"topic":"T"}:5}}',
    ],
)
def test_layouts_and_tolerated_extras(text):
    assert parse_client_offsets(text) == [
        ClientQueueOffset("b", "T", 1, 5),
        ClientQueueOffset("c", "%RETRY%g", 0, 0),
    ]


def test_values_are_returned_as_written_for_per_entry_checks():
    text = '{"offsetTable":{{"brokerName":"","queueId":70000,"topic":"T"}:-1,{"brokerName":"b","queueId":0,"topic":"T"}:99999999999999999999}}'
    assert parse_client_offsets(text) == [
        ClientQueueOffset("", "T", 70000, -1),
        ClientQueueOffset("b", "T", 0, 99999999999999999999),
    ]
    assert parse_client_offsets('{"offsetTable":{}}') == []


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("", "expected '{' opening the document", 1, 1),
        ("[1]", "expected '{' opening the document", 1, 1),
        ("{", "unexpected end of text", 1, 2),
        (
            '{\n\t"offsetTable":{{\n\t\t"brokerName":"b",\n\t\t"queueId":3',
            "expected '}' or ',' after a member, found end of text",
            4,
            14,
        ),
        (
            '{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:"1470"}}',
            "offset of T/b/1 is not an integer",
            1,
            60,
        ),
        (
            '{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:1.5}}',
            "offset of T/b/1 is not an integer",
            1,
            60,
        ),
        ('{"offsetTable":{"b,T,1":5}}', "offsetTable key is not a MessageQueue object", 1, 17),
        (
            '{"offsetTable":{{"brokerName":"b","topic":"T"}:5}}',
            "MessageQueue key needs string brokerName and topic and an integer queueId",
            1,
            17,
        ),
        (
            '{"offsetTable":{{"brokerName":"b","queueId":"1","topic":"T"}:5}}',
            "MessageQueue key needs string brokerName and topic and an integer queueId",
            1,
            17,
        ),
        (
            '{"offsetTable":{{"brokerName":"b","queueId":true,"topic":"T"}:5}}',
            "MessageQueue key needs string brokerName and topic and an integer queueId",
            1,
            17,
        ),
        ('{"offsetTable":[]}', "no offsetTable object in the document", 1, 1),
        ('{"table":{}}', "no offsetTable object in the document", 1, 1),
        ('{"offsetTable":{}} {}', "unexpected text after the document", 1, 20),
        ('{"offsetTable":{},}', "expected a key", 1, 19),
        ('{"offsetTable" {}}', "expected ':' after a key, found '{'", 1, 16),
        ('{"a":tru}', "expected a JSON value", 1, 6),
        ('{"a":01}', "expected '}' or ',' after a member, found '1'", 1, 7),
        ('{"a":"x\\q"}', "bad string: Invalid \\escape", 1, 8),
        ('{"a":"open', "bad string: Unterminated string starting at", 1, 6),
        ('{"a":' + "[" * 70 + "]" * 70 + "}", "nested deeper than 64 levels", 1, 69),
        ("{" * 5000, "nested deeper than 64 levels", 1, 65),
        (
            '{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:' + "9" * 5000 + "}}",
            "a number of 5000 characters",
            1,
            60,
        ),
    ],
)
def test_malformed_text_raises_with_its_position(text, message, line, column):
    with pytest.raises(ClientOffsetsFormatError) as raised:
        parse_client_offsets(text)
    assert str(raised.value) == f"{message} at line {line}, column {column}"
    assert (raised.value.line, raised.value.column) == (line, column)


@pytest.mark.parametrize(
    ("content", "failure", "entries"),
    [
        (None, "file missing or unreadable at read time", []),
        (b"", "empty file (0 bytes)", []),
        (b" \n\t", "blank file: no JSON document", []),
        (
            b'{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T\xff"}:5}}',
            "not valid UTF-8 text (byte 56)",
            [],
        ),
        (
            gzip.compress(b'{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:5}}'),
            None,
            [ClientQueueOffset("b", "T", 1, 5)],
        ),
        (
            gzip.compress(b'{"offsetTable":{}}')[:12],
            "corrupt gzip stream: Compressed file ended before the end-of-stream marker was reached",
            [],
        ),
        (b'{"offsetTable":{', "malformed offsets.json: unexpected end of text at line 1, column 17", []),
    ],
)
def test_file_bytes(content, failure, entries):
    assert parse_client_offsets_bytes(content) == (failure, entries)


FILES = StructType(
    [
        StructField("source_file", StringType(), False),
        StructField("cluster", StringType(), False),
        StructField("snapshot_at", TimestampType(), False),
        StructField("_file_hash", StringType(), False),
        StructField("file_size", LongType(), True),
        StructField("content", BinaryType(), True),
    ]
)
AT = datetime(2024, 5, 1, 12, 0)
ROOT = "/landing/client_offsets/prod/2024-05-01T12:00:00Z"


def _doc(*entries: tuple[str, int, str, int]) -> bytes:
    body = ",".join(_queue(b, q, t, o) for b, q, t, o in entries)
    return ('{\n\t"offsetTable":{' + body + "\n\t}\n}").encode()


def _file(path: str, content: bytes | None, file_hash: str, size: int | None = -1) -> tuple:
    return (f"{ROOT}/{path}", "prod", AT, file_hash, len(content or b"") if size == -1 else size, content)


def test_main_file_then_bak_fallback_and_per_entry_rejections(spark):
    good = _doc(("broker-a", 0, "T", 10), ("broker-b", 1, "T", 11))
    files = spark.createDataFrame(
        [
            _file("1.1.1.1@DEFAULT/g1/offsets.json", good, "h-same"),
            _file("1.1.1.1@DEFAULT/g1/offsets.json.bak", good, "h-same"),
            _file("2.2.2.2@DEFAULT/g2/offsets.json", good, "h2"),
            _file("2.2.2.2@DEFAULT/g2/offsets.json.bak", _doc(("broker-a", 0, "T", 9)), "h2-old"),
            _file("3.3.3.3@DEFAULT/g3/offsets.json", b'{"offsetTable":{', "h3-bad"),
            _file("3.3.3.3@DEFAULT/g3/offsets.json.bak", _doc(("broker-a", 0, "T", 7)), "h3"),
            _file("4.4.4.4@DEFAULT/g4/offsets.json", None, "h4-empty"),
            _file("4.4.4.4@DEFAULT/g4/offsets.json.bak", _doc(("broker-a", 2, "%RETRY%g4", 0)), "h4"),
            _file("5.5.5.5@DEFAULT/g5/offsets.json.bak", _doc(("broker-a", 0, "T", 5)), "h5"),
            _file("6.6.6.6@DEFAULT/g6/offsets.json", None, "h6-gone", size=None),
            _file("6.6.6.6@DEFAULT/g6/offsets.json.bak", _doc(("broker-c", 0, "T", 6)), "h6"),
            _file(
                "7.7.7.7@DEFAULT/g7/offsets.json",
                _doc(
                    ("broker-a", 70000, "T", 1),
                    ("broker-a", 1, "T", -1),
                    ("", 2, "T", 3),
                    ("broker-a", 3, "", 4),
                    ("broker-a", 4, "T", 1 << 53),
                    ("broker-a", 5, "T", 8),
                ),
                "h7",
            ),
            _file("flat/offsets.json", good, "h8"),
        ],
        FILES,
    )
    result = explode_client_offsets(files)
    landed = sorted(
        (
            r.source_file.removeprefix(ROOT + "/"),
            r.client_id,
            r.consumer_group,
            r.broker,
            r.topic,
            r.key_kind,
            r.queue_id,
            r.offset,
        )
        for r in result.parsed.landed.collect()
    )
    assert landed == [
        ("1.1.1.1@DEFAULT/g1/offsets.json", "1.1.1.1@DEFAULT", "g1", "broker-a", "T", "normal", 0, 10),
        ("1.1.1.1@DEFAULT/g1/offsets.json", "1.1.1.1@DEFAULT", "g1", "broker-b", "T", "normal", 1, 11),
        ("2.2.2.2@DEFAULT/g2/offsets.json", "2.2.2.2@DEFAULT", "g2", "broker-a", "T", "normal", 0, 10),
        ("2.2.2.2@DEFAULT/g2/offsets.json", "2.2.2.2@DEFAULT", "g2", "broker-b", "T", "normal", 1, 11),
        ("3.3.3.3@DEFAULT/g3/offsets.json.bak", "3.3.3.3@DEFAULT", "g3", "broker-a", "T", "normal", 0, 7),
        (
            "4.4.4.4@DEFAULT/g4/offsets.json.bak",
            "4.4.4.4@DEFAULT",
            "g4",
            "broker-a",
            "%RETRY%g4",
            "retry",
            2,
            0,
        ),
        ("5.5.5.5@DEFAULT/g5/offsets.json.bak", "5.5.5.5@DEFAULT", "g5", "broker-a", "T", "normal", 0, 5),
        ("6.6.6.6@DEFAULT/g6/offsets.json.bak", "6.6.6.6@DEFAULT", "g6", "broker-c", "T", "normal", 0, 6),
        ("7.7.7.7@DEFAULT/g7/offsets.json", "7.7.7.7@DEFAULT", "g7", "broker-a", "T", "normal", 5, 8),
    ]
    fixed = {(r.cluster, r.snapshot_at, r.snapshot_source, r.line_no) for r in result.parsed.landed.collect()}
    assert fixed == {("prod", AT, "client_offsets", None)}
    rejected = sorted(
        (r.source_file.removeprefix(ROOT + "/"), r.line_no, r.reason, r.raw, r.cluster, r._file_hash)
        for r in result.parsed.rejected.collect()
    )
    g7 = "7.7.7.7@DEFAULT/g7/offsets.json"
    assert rejected == sorted(
        [
            (
                "3.3.3.3@DEFAULT/g3/offsets.json",
                None,
                "malformed offsets.json: unexpected end of text at line 1, column 17",
                '{"offsetTable":{',
                "prod",
                "h3-bad",
            ),
            ("4.4.4.4@DEFAULT/g4/offsets.json", None, "empty file (0 bytes)", None, "prod", "h4-empty"),
            (
                "6.6.6.6@DEFAULT/g6/offsets.json",
                None,
                "file missing or unreadable at read time",
                None,
                "prod",
                "h6-gone",
            ),
            (
                g7,
                None,
                "queue id is not an integer in [0, 65536)",
                '{"brokerName":"broker-a","queueId":70000,"topic":"T"}:1',
                "prod",
                "h7",
            ),
            (
                g7,
                None,
                "offset is negative",
                '{"brokerName":"broker-a","queueId":1,"topic":"T"}:-1',
                "prod",
                "h7",
            ),
            (
                g7,
                None,
                "MessageQueue brokerName is empty",
                '{"brokerName":"","queueId":2,"topic":"T"}:3',
                "prod",
                "h7",
            ),
            (
                g7,
                None,
                "MessageQueue topic is empty",
                '{"brokerName":"broker-a","queueId":3,"topic":""}:4',
                "prod",
                "h7",
            ),
            (
                g7,
                None,
                "offset is not below 2^53",
                '{"brokerName":"broker-a","queueId":4,"topic":"T"}:9007199254740992',
                "prod",
                "h7",
            ),
            (
                "flat/offsets.json",
                None,
                "path does not end in <clientIP>@<instanceName>/<group>/offsets.json[.bak]",
                _doc(("broker-a", 0, "T", 10), ("broker-b", 1, "T", 11)).decode(),
                "prod",
                "h8",
            ),
        ]
    )
    skipped = sorted(
        (r.source_file.removeprefix(ROOT + "/"), r._file_hash, r.status, r.status_reason)
        for r in result.skipped.collect()
    )
    assert skipped == [
        ("1.1.1.1@DEFAULT/g1/offsets.json.bak", "h-same", "duplicate", "byte-identical to offsets.json"),
        (
            "2.2.2.2@DEFAULT/g2/offsets.json.bak",
            "h2-old",
            "skipped",
            "offsets.json parsed; the .bak holds its previous write",
        ),
    ]
