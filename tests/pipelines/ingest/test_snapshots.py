"""pipelines.ingest.snapshots on small inline documents (the reader's output shape, built in memory)."""

from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.sql import functions as F

from pipelines.ingest import snapshots
from pipelines.ingest.snapshots import (
    explode_delay_offsets,
    explode_snapshots,
    records_per_file,
    select_snapshot_documents,
)
from tests.frames import assert_cached_parse_gives_the_same

AT = datetime(2024, 5, 1, 12, 0)
LATER = datetime(2024, 5, 1, 12, 5)
_ROW = (
    "source_file string, cluster string, broker string, snapshot_at timestamp, snapshot_source string, "
    "document_kind string, _file_hash string, file_size long, json_values int, offset_text string, "
    "lmq_text string, corrupt_hex string"
)


def doc(
    name: str,
    offsets: str | None = None,
    lmq: str | None = None,
    *,
    kind: str = "consumer_offsets",
    source: str = "main",
    broker: str = "broker-a",
    at: datetime = AT,
    file_hash: str | None = None,
    size: int | None = 100,
    values: int = 1,
    corrupt: bytes | None = None,
) -> tuple:
    return (
        f"/landing/{name}",
        "prod",
        broker,
        at,
        source,
        kind,
        file_hash or f"hash-{name}",
        size,
        values,
        offsets,
        lmq,
        corrupt.hex() if corrupt is not None else None,
    )


def documents(spark, *rows: tuple):
    """The columns of jobs.io.snapshot_files.DOCUMENT_COLUMNS, tables parsed like the reader does."""
    options = {"allowUnquotedFieldNames": "true"}
    return spark.createDataFrame(list(rows), _ROW).select(
        "source_file",
        "cluster",
        "broker",
        "snapshot_at",
        "snapshot_source",
        "document_kind",
        "_file_hash",
        "file_size",
        "json_values",
        F.from_json("offset_text", "map<string,variant>", options).alias("offset_table"),
        F.from_json("lmq_text", "map<string,variant>", options).alias("lmq_offset_table"),
        F.unhex("corrupt_hex").cast("string").alias("corrupt_record"),
    )


def landed_rows(parsed) -> list[dict]:
    return sorted((r.asDict() for r in parsed.landed.collect()), key=lambda r: sorted(map(str, r.items())))


def rejected_rows(parsed) -> list[tuple]:
    return sorted(
        (
            (r.source_file, r.line_no, r.reason, r.raw, r.cluster, r._file_hash)
            for r in parsed.rejected.collect()
        ),
        key=str,
    )


def snapshot_row(
    topic, group, kind, queue_id, offset, *, source="main", name="a.json", broker="broker-a", at=AT
):
    return {
        "cluster": "prod",
        "broker": broker,
        "snapshot_at": at,
        "topic": topic,
        "consumer_group": group,
        "key_kind": kind,
        "queue_id": queue_id,
        "offset": offset,
        "snapshot_source": source,
        "client_id": None,
        "source_file": f"/landing/{name}",
        "line_no": None,
        "_file_hash": f"hash-{name}",
    }


def test_every_key_kind_lands_one_row_per_queue(spark):
    table = (
        '{"TopicTest@g":{6:2,0:6,1:5},"%RETRY%g@g":{0:0},"%RETRY%g_TopicTest@g":{1:3},"%DLQ%g@g":{0:2},'
        '"OFFSET_MOVED_EVENT@__MONITOR_CONSUMER":{0:8},"rmq_sys_REVIVE_LOG_DefaultCluster@CID_RMQ_SYS_REVIVE_GROUP":{3:12},'
        '"TopicTest@push_test@broadcast":{0:100831},"TopicRead3@g":{1:5},"T@g":{65535:9007199254740991}}'
    )
    parsed = explode_snapshots(documents(spark, doc("a.json", table)))
    assert landed_rows(parsed) == sorted(
        [
            snapshot_row("TopicTest", "g", "normal", 6, 2),
            snapshot_row("TopicTest", "g", "normal", 0, 6),
            snapshot_row("TopicTest", "g", "normal", 1, 5),
            snapshot_row("%RETRY%g", "g", "retry", 0, 0),
            snapshot_row("%RETRY%g_TopicTest", "g", "pop_retry", 1, 3),
            snapshot_row("%DLQ%g", "g", "dlq", 0, 2),
            snapshot_row("OFFSET_MOVED_EVENT", "__MONITOR_CONSUMER", "system", 0, 8),
            snapshot_row("rmq_sys_REVIVE_LOG_DefaultCluster", "CID_RMQ_SYS_REVIVE_GROUP", "system", 3, 12),
            snapshot_row("TopicTest", "push_test@broadcast", "broadcast", 0, 100831),
            snapshot_row("TopicRead3", "g", "normal", 1, 5),
            snapshot_row("T", "g", "normal", 65535, 9007199254740991),
        ],
        key=lambda r: sorted(map(str, r.items())),
    )
    assert parsed.rejected.collect() == []
    assert parsed.landed.columns == list(snapshots.SNAPSHOT_COLUMNS)


def test_a_bad_entry_is_rejected_alone_with_its_raw_text(spark):
    table = (
        '{"T@g":{0:"abc",1:7,2:-1,3:1.5,4:null,70000:1,a:2,5:9007199254740992},"NoSeparator":{0:1},'
        '"@g":{0:1},"T@":{0:1},"Q@g":[1],"N@g":null}'
    )
    parsed = explode_snapshots(documents(spark, doc("a.json", table)))
    assert landed_rows(parsed) == [snapshot_row("T", "g", "normal", 1, 7)]
    row = ("/landing/a.json", None)
    assert rejected_rows(parsed) == sorted(
        [
            (*row, "offset is a JSON string, not an integer", '"T@g":{0:"abc"}', "prod", "hash-a.json"),
            (*row, "offset is negative", '"T@g":{2:-1}', "prod", "hash-a.json"),
            (*row, "offset is not an integer", '"T@g":{3:1.5}', "prod", "hash-a.json"),
            (*row, "offset is null", '"T@g":{4:null}', "prod", "hash-a.json"),
            (*row, "queue id is not an integer in [0, 65536)", '"T@g":{70000:1}', "prod", "hash-a.json"),
            (*row, "queue id is not an integer in [0, 65536)", '"T@g":{a:2}', "prod", "hash-a.json"),
            (*row, "offset is not below 2^53", '"T@g":{5:9007199254740992}', "prod", "hash-a.json"),
            (*row, "key has no '@' between topic and group", '"NoSeparator":{"0":1}', "prod", "hash-a.json"),
            (*row, "key has an empty topic", '"@g":{"0":1}', "prod", "hash-a.json"),
            (*row, "key has an empty group", '"T@":{"0":1}', "prod", "hash-a.json"),
            (*row, "queue map is not a JSON object", '"Q@g":[1]', "prod", "hash-a.json"),
            (*row, "queue map is null", '"N@g":null', "prod", "hash-a.json"),
        ],
        key=str,
    )


def test_whole_documents_are_rejected_with_a_precise_reason(spark):
    parsed = explode_snapshots(
        documents(
            spark,
            doc("gone.json", size=None, values=0),
            doc("empty.json", size=0, values=0),
            doc("blank.json", size=3, values=0),
            doc("binary.bin", corrupt=b"\x00\x00\x01\x9e{"),
            doc("latin1.json", corrupt=b'{"offsetTable":{"T\xe9@g":{0:1}}}'),
            doc("cut.json", corrupt=b'{\n\t"offsetTable":{\n\t\t"T@g":{0:25'),
            doc("array.json", '{"T@g":{0:1}}', values=2),
            doc("topics.json", None),
            doc("empty-table.json", "{}"),
        )
    )
    assert parsed.landed.collect() == []
    assert [
        (r.source_file.removeprefix("/landing/"), r.reason, r.raw)
        for r in parsed.rejected.orderBy("source_file").collect()
    ] == [
        ("array.json", "several JSON objects in a top-level array; a snapshot is one JSON object", None),
        ("binary.bin", "binary content (NUL bytes), not a JSON document", "\x00\x00\x01\ufffd{"),
        (
            "blank.json",
            "no JSON object in the file: blank text, an empty array, or unreadable (e.g. a corrupt gzip stream)",
            None,
        ),
        ("cut.json", snapshots.MALFORMED_JSON, '{\n\t"offsetTable":{\n\t\t"T@g":{0:25'),
        ("empty.json", "empty file (0 bytes)", None),
        ("gone.json", "file missing at read time", None),
        ("latin1.json", "not valid UTF-8 text", '{"offsetTable":{"T\ufffd@g":{0:1}}}'),
        ("topics.json", "no offsetTable (or lmqOffsetTable) object in the document", None),
    ]


def test_a_queue_id_twice_in_one_map_rejects_that_queue_and_the_rest_of_its_document_lands(spark):
    # the reader's variant parse refuses such a document whole, and hands over its text
    text = (
        b'{"offsetTable":{"T@g":{0:1,1:4,0:2},"U@g":{0:5},"N@g":null},"lmqOffsetTable":{"%LMQ%q@%LMQ%q":8}}'
    )
    # beside a queue map that is not an object, or a table that is not one, the maps cannot be read
    # as maps (only in part): the file stays refused
    both_text = b'{"offsetTable":{"T@g":{0:1,0:2},"Q@g":[1]}}'
    lmq_text = b'{"offsetTable":{"T@g":{0:1,0:2}},"lmqOffsetTable":[1]}'
    rows = documents(
        spark,
        doc("a.json", corrupt=text),
        doc("cut.json", corrupt=b'{"offsetTable":{"T@g":{0:1,0:2'),
        doc("both.json", corrupt=both_text),
        doc("lmq-table.json", corrupt=lmq_text),
        doc("lmqConsumerOffset.json", corrupt=b'{"offsetTable":{"V@g":{3:1,3:2,4:6}}}', kind="lmq"),
    )
    parsed = explode_snapshots(rows)
    assert landed_rows(parsed) == sorted(
        [
            snapshot_row("T", "g", "normal", 1, 4),
            snapshot_row("U", "g", "normal", 0, 5),
            snapshot_row("%LMQ%q", "%LMQ%q", "normal", 0, 8),
            snapshot_row("V", "g", "normal", 4, 6, source="lmq", name="lmqConsumerOffset.json"),
        ],
        key=lambda r: sorted(map(str, r.items())),
    )
    repeated = "queue id occurs more than once in the key's queue map"
    a, cut, both = ("/landing/a.json", None), ("/landing/cut.json", None), ("/landing/both.json", None)
    assert rejected_rows(parsed) == sorted(
        [
            (*a, repeated, '"T@g":{0:1}', "prod", "hash-a.json"),
            (*a, repeated, '"T@g":{0:2}', "prod", "hash-a.json"),
            (*a, "queue map is null", '"N@g":null', "prod", "hash-a.json"),
            (*both, snapshots.MALFORMED_JSON, both_text.decode(), "prod", "hash-both.json"),
            (*cut, snapshots.MALFORMED_JSON, '{"offsetTable":{"T@g":{0:1,0:2', "prod", "hash-cut.json"),
            (
                "/landing/lmq-table.json",
                None,
                snapshots.MALFORMED_JSON,
                lmq_text.decode(),
                "prod",
                "hash-lmq-table.json",
            ),
            (
                "/landing/lmqConsumerOffset.json",
                None,
                repeated,
                '"V@g":{3:1}',
                "prod",
                "hash-lmqConsumerOffset.json",
            ),
            (
                "/landing/lmqConsumerOffset.json",
                None,
                repeated,
                '"V@g":{3:2}',
                "prod",
                "hash-lmqConsumerOffset.json",
            ),
        ],
        key=str,
    )
    status = {r.source_file: r.document_status for r in snapshots.snapshot_files(rows).collect()}
    assert status == {
        "/landing/a.json": None,
        "/landing/cut.json": snapshots.MALFORMED_JSON,
        "/landing/both.json": snapshots.MALFORMED_JSON,
        "/landing/lmq-table.json": snapshots.MALFORMED_JSON,
        "/landing/lmqConsumerOffset.json": None,
    }


def test_rejected_text_is_capped(spark, monkeypatch):
    monkeypatch.setattr(snapshots, "RAW_TEXT_LIMIT", 8)
    parsed = explode_snapshots(documents(spark, doc("cut.json", corrupt=b'{"offsetTable":{"T@g":{0:25')))
    assert [r.raw for r in parsed.rejected.collect()] == ['{"offset']


def test_lmq_tables_land_with_queue_zero_under_their_file(spark):
    parsed = explode_snapshots(
        documents(
            spark,
            doc("lmqConsumerOffset.json", '{"T@g":{0:3}}', '{"%LMQ%q@%LMQ%q":12}', kind="lmq"),
            doc("lmqConsumerOffset.json.bak", "{}", '{"%LMQ%q@%LMQ%q":11}', kind="lmq", source="bak"),
            doc("consumerOffset.json", '{"T@g":{0:2}}', '{"%LMQ%r@%LMQ%r":"x"}'),
        )
    )
    assert landed_rows(parsed) == sorted(
        [
            snapshot_row("T", "g", "normal", 0, 3, source="lmq", name="lmqConsumerOffset.json"),
            snapshot_row("%LMQ%q", "%LMQ%q", "normal", 0, 12, source="lmq", name="lmqConsumerOffset.json"),
            snapshot_row(
                "%LMQ%q", "%LMQ%q", "normal", 0, 11, source="lmq_bak", name="lmqConsumerOffset.json.bak"
            ),
            snapshot_row("T", "g", "normal", 0, 2, name="consumerOffset.json"),
        ],
        key=lambda r: sorted(map(str, r.items())),
    )
    assert rejected_rows(parsed) == [
        (
            "/landing/consumerOffset.json",
            None,
            "offset is a JSON string, not an integer",
            '"%LMQ%r@%LMQ%r":"x"',
            "prod",
            "hash-consumerOffset.json",
        ),
    ]


def test_delay_offsets_have_their_own_table(spark):
    docs = documents(
        spark,
        doc("delayOffset.json", "{3:46,18:74,0:1}", kind="delay_offsets"),
        doc("delayOffset.json.bak", None, kind="delay_offsets", source="bak", size=0, values=0),
        doc("consumerOffset.json", '{"T@g":{0:2}}'),
    )
    delay = explode_delay_offsets(docs)
    common = {
        "cluster": "prod",
        "broker": "broker-a",
        "snapshot_at": AT,
        "snapshot_source": "main",
        "source_file": "/landing/delayOffset.json",
        "line_no": None,
        "_file_hash": "hash-delayOffset.json",
    }
    assert sorted((r.asDict() for r in delay.landed.collect()), key=lambda r: r["delay_level"]) == [
        {**common, "delay_level": 3, "offset": 46},
        {**common, "delay_level": 18, "offset": 74},
    ]
    assert delay.landed.columns == snapshots.DELAY_COLUMNS
    assert rejected_rows(delay) == sorted(
        [
            (
                "/landing/delayOffset.json",
                None,
                "delay level is not an integer in [1, 65536)",
                "0:1",
                "prod",
                "hash-delayOffset.json",
            ),
            (
                "/landing/delayOffset.json.bak",
                None,
                "empty file (0 bytes)",
                None,
                "prod",
                "hash-delayOffset.json.bak",
            ),
        ],
        key=str,
    )
    assert [r.source_file for r in explode_snapshots(docs).landed.collect()] == [
        "/landing/consumerOffset.json"
    ]


def test_bak_rule(spark):
    docs = documents(
        spark,
        # broker-a: the .bak is byte-identical to its main file: a duplicate
        doc("a/consumerOffset.json", '{"T@g":{0:5}}', file_hash="h1"),
        doc("a/consumerOffset.json.bak", '{"T@g":{0:5}}', source="bak", file_hash="h1"),
        # broker-b, same bytes as broker-a: its own snapshot; its .bak is older
        doc("b/consumerOffset.json", '{"T@g":{0:5}}', broker="broker-b", file_hash="h1"),
        doc("b/consumerOffset.json.bak", '{"T@g":{0:4}}', broker="broker-b", source="bak", file_hash="h0"),
        # broker-a five minutes later: empty main file, the .bak is the fallback
        doc("a2/consumerOffset.json", None, at=LATER, size=0, values=0, file_hash="e"),
        doc("a2/consumerOffset.json.bak", '{"T@g":{0:6}}', at=LATER, source="bak", file_hash="h2"),
        # broker-c: no main file at all; corrupt main on broker-d
        doc("c/consumerOffset.json.bak", '{"T@g":{0:1}}', broker="broker-c", source="bak", file_hash="h3"),
        doc("d/consumerOffset.json", None, broker="broker-d", corrupt=b"{", file_hash="h4"),
        doc("d/consumerOffset.json.bak", '{"T@g":{0:2}}', broker="broker-d", source="bak", file_hash="h5"),
        # both empty, so byte-identical: the .bak adds nothing
        doc("e/consumerOffset.json", None, broker="broker-e", size=0, values=0, file_hash="e"),
        doc(
            "e/consumerOffset.json.bak",
            None,
            broker="broker-e",
            source="bak",
            size=0,
            values=0,
            file_hash="e",
        ),
        # the main file of lmqConsumerOffset.json does not stand for consumerOffset.json's .bak
        doc("f/lmqConsumerOffset.json", "{}", broker="broker-f", kind="lmq", file_hash="h6"),
        doc("f/consumerOffset.json.bak", '{"T@g":{0:3}}', broker="broker-f", source="bak", file_hash="h6"),
    )
    selection = select_snapshot_documents(docs)
    assert sorted(
        (r.source_file.removeprefix("/landing/"), r.selection, r.is_replayed)
        for r in selection.files.collect()
    ) == [
        ("a/consumerOffset.json", "main", True),
        ("a/consumerOffset.json.bak", "bak_duplicate", False),
        ("a2/consumerOffset.json", "main", True),
        ("a2/consumerOffset.json.bak", "bak_fallback", True),
        ("b/consumerOffset.json", "main", True),
        ("b/consumerOffset.json.bak", "bak_older", False),
        ("c/consumerOffset.json.bak", "bak_fallback", True),
        ("d/consumerOffset.json", "main", True),
        ("d/consumerOffset.json.bak", "bak_fallback", True),
        ("e/consumerOffset.json", "main", True),
        ("e/consumerOffset.json.bak", "bak_duplicate", False),
        ("f/consumerOffset.json.bak", "bak_fallback", True),
        ("f/lmqConsumerOffset.json", "main", True),
    ]
    assert selection.ingest.columns == docs.columns
    assert sorted(tuple(r) for r in selection.skipped.collect()) == [
        (
            "/landing/a/consumerOffset.json.bak",
            "h1",
            "duplicate",
            "byte-identical to /landing/a/consumerOffset.json",
        ),
        (
            "/landing/e/consumerOffset.json.bak",
            "e",
            "duplicate",
            "byte-identical to /landing/e/consumerOffset.json",
        ),
    ]
    landed = explode_snapshots(selection.ingest).landed
    assert sorted((r.broker, r.snapshot_at, r.snapshot_source, r.offset) for r in landed.collect()) == [
        ("broker-a", AT, "main", 5),
        ("broker-a", LATER, "bak", 6),
        ("broker-b", AT, "bak", 4),
        ("broker-b", AT, "main", 5),
        ("broker-c", AT, "bak", 1),
        ("broker-d", AT, "bak", 2),
        ("broker-f", AT, "bak", 3),
    ]


def test_records_per_file_counts_every_file(spark):
    docs = documents(
        spark,
        doc("a.json", '{"T@g":{0:1,1:"x",2:3},"bad":{0:1,1:2}}'),
        doc("empty-table.json", "{}"),
        doc("cut.json", corrupt=b"{"),
    )
    counts = records_per_file(docs, explode_snapshots(docs))
    assert sorted(tuple(r) for r in counts.collect()) == [
        ("/landing/a.json", "hash-a.json", 4, 2, 2),
        ("/landing/cut.json", "hash-cut.json", 1, 0, 1),
        ("/landing/empty-table.json", "hash-empty-table.json", 0, 0, 0),
    ]
    assert counts.columns == [
        "source_file",
        "_file_hash",
        "records_read",
        "records_landed",
        "records_quarantined",
    ]


def test_a_key_with_an_empty_queue_map_is_no_record_and_a_cached_parse_gives_the_same(spark):
    # the variant parse and, for a queue id twice, the parse of the text again
    again = b'{"offsetTable":{"T@g":{0:1,0:2},"E@g":{}}}'
    docs = documents(
        spark,
        doc("a.json", '{"T@g":{0:1,1:"x"},"E@g":{},"bad":{0:1,1:2}}', '{"%LMQ%q@%LMQ%q":8,"x":1}'),
        doc("again.json", corrupt=again),
        doc("cut.json", corrupt=b"{"),
    )
    parsed = explode_snapshots(docs)
    assert sorted(tuple(r) for r in records_per_file(docs, parsed).collect()) == [
        ("/landing/a.json", "hash-a.json", 5, 2, 3),
        ("/landing/again.json", "hash-again.json", 2, 0, 2),
        ("/landing/cut.json", "hash-cut.json", 1, 0, 1),
    ]
    assert_cached_parse_gives_the_same(parsed, "snapshot_at")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("007", "queue id is not an integer in [0, 65536)"),
        ("65536", "queue id is not an integer in [0, 65536)"),
    ],
)
def test_queue_ids_are_canonical_integers(spark, text, reason):
    parsed = explode_snapshots(documents(spark, doc("a.json", '{"T@g":{%s:1,0:0}}' % text)))
    assert [(r.reason, r.raw) for r in parsed.rejected.collect()] == [(reason, '"T@g":{%s:1}' % text)]


def test_a_healthy_main_file_keeps_its_bak_out_even_when_empty_or_every_entry_is_rejected(spark):
    docs = documents(
        spark,
        # an empty table is a healthy snapshot: nobody had committed yet
        doc("a/consumerOffset.json", "{}", file_hash="m1"),
        doc("a/consumerOffset.json.bak", '{"T@g":{0:5}}', source="bak", file_hash="b1"),
        # every entry rejected (a string offset), the document itself healthy
        doc("b/consumerOffset.json", '{"T@g":{0:"x"}}', broker="broker-b", file_hash="m2"),
        doc("b/consumerOffset.json.bak", '{"T@g":{0:4}}', broker="broker-b", source="bak", file_hash="b2"),
    )
    selection = select_snapshot_documents(docs)
    assert sorted(
        (r.broker, r.snapshot_source, r.selection, r.is_replayed) for r in selection.files.collect()
    ) == [
        ("broker-a", "bak", "bak_older", False),
        ("broker-a", "main", "main", True),
        ("broker-b", "bak", "bak_older", False),
        ("broker-b", "main", "main", True),
    ]


def test_a_bak_that_landed_alone_stands_in_until_its_main_file_lands(spark):
    bak = documents(spark, doc("a/consumerOffset.json.bak", '{"T@g":{0:4}}', source="bak", file_hash="b1"))
    first = select_snapshot_documents(bak)
    assert [(r.selection, r.is_replayed) for r in first.files.collect()] == [("bak_fallback", True)]
    stored = spark.createDataFrame(first.files.collect(), first.files.schema)
    main = documents(spark, doc("a/consumerOffset.json", '{"T@g":{0:5}}', file_hash="m1"))
    later = select_snapshot_documents(main, earlier=stored)
    # the decision for the .bak is stored again, now that a healthy main file landed
    assert sorted((r.snapshot_source, r.selection, r.is_replayed) for r in later.files.collect()) == [
        ("bak", "bak_older", False),
        ("main", "main", True),
    ]
    assert [r.source_file for r in later.ingest.collect()] == ["/landing/a/consumerOffset.json"]


def test_a_snapshot_path_landed_again_with_other_content_supersedes_its_earlier_version(spark):
    first = select_snapshot_documents(
        documents(
            spark,
            doc("a/consumerOffset.json", '{"T@g":{0:5}}', file_hash="m1"),
            doc("a/consumerOffset.json.bak", '{"T@g":{0:4}}', source="bak", file_hash="b1"),
        )
    )
    stored = spark.createDataFrame(first.files.collect(), first.files.schema)
    rewritten = documents(spark, doc("a/consumerOffset.json", '{"T@g":{0:6}}', file_hash="m2"))
    second = select_snapshot_documents(rewritten, earlier=stored)
    decided = sorted((r._file_hash, r.selection, r.is_replayed) for r in second.files.collect())
    assert decided == [("b1", "bak_older", False), ("m1", "superseded", False), ("m2", "main", True)]
    assert [r._file_hash for r in second.ingest.collect()] == ["m2"]
    # the .bak landing again supersedes its own earlier version, and the main file's earlier
    # version stays superseded (as stored), not main again
    stored = spark.createDataFrame(second.files.collect(), first.files.schema)  # every file of the snapshot
    bak = documents(spark, doc("a/consumerOffset.json.bak", '{"T@g":{0:5}}', source="bak", file_hash="b2"))
    third = select_snapshot_documents(bak, earlier=stored)
    decided = sorted((r._file_hash, r.selection, r.is_replayed) for r in third.files.collect())
    assert decided == [
        ("b1", "superseded", False),
        ("b2", "bak_older", False),
        ("m1", "superseded", False),
        ("m2", "main", True),
    ]
