"""Real and broken files through the real Spark read (jobs.io.snapshot_files + pipelines)."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

from jobs.io.snapshot_files import (
    SnapshotFile,
    WholeFile,
    _file_system_key,
    read_snapshot_documents,
    read_whole_files,
)
from pipelines.ingest.client_offsets import explode_client_offsets
from pipelines.ingest.snapshots import (
    explode_delay_offsets,
    explode_snapshots,
    records_per_file,
    select_snapshot_documents,
)

UTC = UTC
AT = datetime(2019, 3, 13, 8, 0, tzinfo=UTC)
BROKEN = Path(__file__).resolve().parents[2] / "fixtures" / "broken" / "snapshots"

GXSTAX_0313 = {
    "%RETRY%please_rename_unique_group_name@please_rename_unique_group_name": {0: 0},
    "TopicTest@please_rename_unique_group_name_4": {0: 543, 1: 543, 2: 543, 3: 543},
    "%RETRY%please_rename_unique_group_name_4@please_rename_unique_group_name_4": {0: 0},
    "TopicTest@please_rename_unique_group_name": {0: 793, 1: 793, 2: 793, 3: 793},
}
SUPER_GOLDEN = {
    "TopicTest@please_rename_unique_group_name_4": {0: 250, 1: 250, 2: 251, 3: 250},
    "%RETRY%please_rename_unique_group_name_4@please_rename_unique_group_name_4": {0: 0},
}
V3_BAK = {
    "GAME_MATCH_MSG_NOTIFY@GAME_MATCH_MSG_NOTIFY_CG": {6: 2, 5: 2, 7: 2, 0: 6, 2: 5, 1: 5, 3: 5, 4: 3},
    "ACC_TOPIC_CALLBACK_BYAPP@ACC_CG_CALLBACK_CONSUMERBYAPP": {0: 12, 2: 12, 1: 12, 3: 12},
    "GAME_MATCH_MSG_NOTIFY@gm-service-batch_cg": {6: 2, 5: 2, 7: 2, 0: 6, 2: 4, 1: 5, 3: 4, 4: 2},
    "%RETRY%gm-service-online@gm-service-online": {0: 16},
    "MQTT_CUSTOM_UP_EVENT@gm-service-online": {
        6: 673,
        5: 673,
        7: 673,
        0: 675,
        2: 675,
        1: 675,
        3: 673,
        4: 673,
    },
    "ACC_TOPIC_TRANSLOG_22@ACC_CG_TRANSLOG_REQUEST22": {0: 1, 2: 0, 1: 1, 3: 0},
    "%RETRY%ACC_CG_CALLBACK_CONSUMERGAME@ACC_CG_CALLBACK_CONSUMERGAME": {0: 48},
    "ACC_TOPIC_TRANSLOG_NOTIFY_GROUP00@ACC_CG_TRANSLOG_REQUEST4NotifyGROUP00": {
        0: 1099672,
        2: 1099674,
        1: 1099674,
        3: 1099670,
    },
    "%RETRY%gm-service-batch@gm-service-batch": {0: 23},
    "%RETRY%GAME_MATCH_MSG_NOTIFY_CG@GAME_MATCH_MSG_NOTIFY_CG": {0: 480},
    "ACC_TOPIC_TRANSLOG_31@ACC_CG_TRANSLOG_REQUEST31": {0: 2009097, 1: 2009086},
    "ACC_TOPIC_TRANSLOG_10@ACC_CG_TRANSLOG_REQUEST10": {0: 6, 2: 4, 1: 6, 3: 3},
    "ACC_TOPIC_TRANSLOG_NOTIFY_GROUP01@ACC_CG_TRANSLOG_REQUEST4NotifyGROUP01": {
        0: 505670,
        2: 505664,
        1: 505670,
        3: 505661,
    },
    "GAME_MATCH_MSG_NOTIFY@gm-service-batch": {6: 2, 5: 2, 7: 2, 0: 6, 2: 5, 1: 5, 3: 5, 4: 3},
    "ACC_TOPIC_CALLBACK_GAME@ACC_CG_CALLBACK_CONSUMERGAME": {0: 118, 2: 117, 1: 118, 3: 116},
    "GAME_PUBLISH_MSG_NOTIFY@GAME_PUBLISH_MSG_NOTIFY_CG": {
        6: 260,
        5: 266,
        7: 257,
        0: 281,
        2: 270,
        1: 272,
        3: 269,
        4: 266,
    },
    "ACC_TOPIC_TRANSLOG_23@ACC_CG_TRANSLOG_REQUEST23": {0: 21, 2: 16, 1: 19, 3: 16},
    "%RETRY%ACC_CG_TRANSLOG_REQUESTGROUP01@ACC_CG_TRANSLOG_REQUESTGROUP01": {0: 48},
    "ACC_TOPIC_TRANSLOG_GROUP01@ACC_CG_TRANSLOG_REQUESTGROUP01": {0: 88037, 2: 88030, 1: 88033, 3: 88025},
    "ACC_TOPIC_TRANSLOG_11@ACC_CG_TRANSLOG_REQUEST11": {0: 31, 2: 30, 1: 30, 3: 29},
    "ACC_TOPIC_TRANSLOG_18@ACC_CG_TRANSLOG_REQUEST18": {0: 25, 2: 25, 1: 26, 3: 21},
    "OFFSET_MOVED_EVENT@__MONITOR_CONSUMER": {0: 8},
    "ACC_TOPIC_TRANSLOG_GROUP00@ACC_CG_TRANSLOG_REQUESTGROUP00": {0: 904573, 2: 904563, 1: 904569, 3: 904559},
    "%RETRY%ACC_CG_TRANSLOG_REQUEST31@ACC_CG_TRANSLOG_REQUEST31": {0: 10},
    "ACC_TOPIC_TRANSLOG_14@ACC_CG_TRANSLOG_REQUEST14": {0: 2, 2: 1, 1: 1, 3: 1},
    "ACC_TOPIC_TRANSLOG_25@ACC_CG_TRANSLOG_REQUEST25": {0: 11, 2: 10, 1: 11, 3: 9},
    "ACC_TOPIC_TRANSLOG_0@ACC_CG_TRANSLOG_REQUEST0": {0: 30, 2: 29, 1: 33, 3: 30},
    "ACC_TOPIC_TRANSLOG_37@ACC_CG_TRANSLOG_REQUEST37": {0: 41, 2: 40, 1: 40, 3: 40},
    "ACC_TOPIC_TRANSLOG_1@ACC_CG_TRANSLOG_REQUEST1": {0: 8, 2: 6, 1: 7, 3: 5},
    "ACC_TOPIC_TRANSLOG_26@ACC_CG_TRANSLOG_REQUEST26": {0: 25, 2: 22, 1: 23, 3: 22},
}
LSQ_0907 = {"%RETRY%lsqGroup@lsqGroup": {0: 0}, "lsqTopic1@lsqGroup": {0: 8, 1: 15, 2: 14, 3: 12}}
# Every consumer-offset-bearing real file, and exactly what it holds.
REAL_OFFSETS = {
    "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json": GXSTAX_0313,
    "v4_consumerOffset__gxstax-rocketmq__2019-03-16.json": {
        **GXSTAX_0313,
        "TopicTest@please_rename_unique_group_name": {0: 1043, 1: 1043, 2: 1043, 3: 1043},
    },
    "v4_consumerOffset__shaoxubao-rocketmq-study.json": {
        "TopicTest@please_rename_unique_group_name_4": {0: 250, 1: 250, 2: 250, 3: 250},
        "%RETRY%please_rename_unique_group_name_4@please_rename_unique_group_name_4": {0: 0},
    },
    "v4_consumerOffset__super-golden-rocketMq.json": SUPER_GOLDEN,
    "v4_consumerOffset.json.bak__super-golden-rocketMq.bak": SUPER_GOLDEN,
    "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-07.json": LSQ_0907,
    "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-08.json": {
        **LSQ_0907,
        "test_order_message_topic@lsqGroup": {0: 0, 1: 0, 2: 0, 3: 0},
        "test_order_message_topic_111@lsqGroup": {0: 0, 1: 0, 2: 0, 3: 0},
    },
    "v3_consumerOffset.json.bak__humphery755-RocketMQ.bak": V3_BAK,
    "excerpts/v4_consumerOffset_sparse-queue__YunaiV-Blog.json": {
        "%RETRY%please_rename_unique_group_name_4@please_rename_unique_group_name_4": {0: 0},
        "TopicRead3@please_rename_unique_group_name_4": {1: 5},
    },
    "v4.8.0_consumerOffset_empty__haohao1029-java.json": {},
    "v5.1.3_consumerOffset_empty__chiwenda-yudao-cloud_docker-prod.json": {},
    "v5.3.1_consumerOffset_empty__guoming-docker-compose-rocketmq.json": {},
    "v5.1.4_consumerOffset.json.bak__my-fastcms-nexfly.bak": {},
}
V3_DELAY = {
    12: 37,
    6: 41,
    13: 37,
    5: 41,
    18: 74,
    7: 40,
    8: 39,
    17: 37,
    9: 39,
    10: 37,
    16: 37,
    15: 37,
    14: 37,
    3: 46,
    11: 37,
    4: 46,
}


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "0" * 64


def _snapshot(
    path: Path,
    kind: str = "consumer_offsets",
    source: str = "main",
    broker: str = "broker-a",
    at: datetime = AT,
) -> SnapshotFile:
    return SnapshotFile(str(path), "prod", broker, at, source, kind, _hash(path))  # type: ignore[arg-type]


def _utc(row: dict) -> dict:
    """PySpark hands timestamps back as naive local times; make them aware UTC."""
    return {**row, "snapshot_at": row["snapshot_at"].astimezone(UTC)}


def _tables(rows: list[Row], root: Path) -> dict[str, dict[str, dict[int, int]]]:
    tables: dict[str, dict[str, dict[int, int]]] = {}
    for row in rows:
        key = f"{row.topic}@{row.consumer_group}"
        tables.setdefault(str(Path(row.source_file).relative_to(root)), {}).setdefault(key, {})[
            row.queue_id
        ] = row.offset
    return tables


def test_every_real_consumer_offset_file_lands_exactly(spark, real_samples):
    files = [_snapshot(real_samples / name, broker=f"broker-{i}") for i, name in enumerate(REAL_OFFSETS)]
    parsed = explode_snapshots(read_snapshot_documents(spark, files))
    landed = _tables(parsed.landed.collect(), real_samples)
    assert landed == {name: table for name, table in REAL_OFFSETS.items() if table}
    assert parsed.rejected.collect() == []


def test_real_file_rows_carry_snapshot_identity_and_key_kinds(spark, real_samples):
    path = real_samples / "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json"
    landed = explode_snapshots(read_snapshot_documents(spark, [_snapshot(path)])).landed
    common = {
        "cluster": "prod",
        "broker": "broker-a",
        "snapshot_at": AT,
        "snapshot_source": "main",
        "client_id": None,
        "source_file": str(path),
        "line_no": None,
        "_file_hash": _hash(path),
    }
    expected = [
        Row(topic=topic, consumer_group=group, key_kind=kind, queue_id=queue, offset=offset)
        for topic, group, kind, queues in [
            ("%RETRY%please_rename_unique_group_name", "please_rename_unique_group_name", "retry", {0: 0}),
            (
                "%RETRY%please_rename_unique_group_name_4",
                "please_rename_unique_group_name_4",
                "retry",
                {0: 0},
            ),
            ("TopicTest", "please_rename_unique_group_name", "normal", dict.fromkeys(range(4), 793)),
            ("TopicTest", "please_rename_unique_group_name_4", "normal", dict.fromkeys(range(4), 543)),
        ]
        for queue, offset in queues.items()
    ]
    rows = landed.orderBy("topic", "consumer_group", "queue_id").collect()
    assert [_utc(r.asDict()) for r in rows] == [{**common, **e.asDict()} for e in expected]


def test_delay_offset_files_land_in_delay_offsets_only(spark, real_samples):
    names = [
        "v3_delayOffset_compact__humphery755-RocketMQ.json",
        "v4_delayOffset_empty__apache-rocketmq-pr3535.json",
        "v5.3.1_delayOffset__lwj0308-Shop.json",
    ]
    documents = read_snapshot_documents(
        spark, [_snapshot(real_samples / n, kind="delay_offsets") for n in names]
    )
    delay = explode_delay_offsets(documents)
    rows = delay.landed.collect()
    assert {r.delay_level: r.offset for r in rows} == V3_DELAY
    assert {(r.source_file, r.snapshot_source, r.line_no) for r in rows} == {
        (str(real_samples / names[0]), "main", None)
    }
    assert delay.rejected.collect() == []
    snapshots = explode_snapshots(documents)
    assert snapshots.landed.collect() == [] and snapshots.rejected.collect() == []


def test_real_bak_identical_to_its_main_file_is_a_duplicate(spark, real_samples):
    main = _snapshot(real_samples / "v4_consumerOffset__super-golden-rocketMq.json")
    bak = _snapshot(real_samples / "v4_consumerOffset.json.bak__super-golden-rocketMq.bak", source="bak")
    lone_bak = _snapshot(
        real_samples / "v3_consumerOffset.json.bak__humphery755-RocketMQ.bak",
        source="bak",
        broker="broker-v3",
    )
    selection = select_snapshot_documents(read_snapshot_documents(spark, [main, bak, lone_bak]))
    assert sorted((r.source_file, r.selection) for r in selection.files.collect()) == sorted(
        [(main.path, "main"), (bak.path, "bak_duplicate"), (lone_bak.path, "bak_fallback")]
    )
    assert sorted(r.source_file for r in selection.ingest.collect()) == sorted([main.path, lone_bak.path])
    assert [r.asDict() for r in selection.skipped.collect()] == [
        {
            "source_file": bak.path,
            "_file_hash": bak.file_hash,
            "status": "duplicate",
            "status_reason": f"byte-identical to {main.path}",
        }
    ]
    landed = explode_snapshots(selection.ingest).landed
    sources = {(r.broker, r.snapshot_source) for r in landed.select("broker", "snapshot_source").collect()}
    assert sources == {("broker-a", "main"), ("broker-v3", "bak")}


def test_client_offsets_excerpt_lands_its_four_queues(spark, real_samples, tmp_path):
    directory = (
        tmp_path
        / "client_offsets"
        / "prod"
        / "2024-05-01T00:00:00Z"
        / "192.168.17.0@DEFAULT"
        / "please_rename_unique_group_name"
    )
    directory.mkdir(parents=True)
    path = directory / "offsets.json"
    shutil.copy(
        real_samples / "excerpts" / "client_offsets.json__LocalFileOffsetStore__YunaiV-Blog.json", path
    )
    at = datetime(2024, 5, 1, tzinfo=UTC)
    files = read_whole_files(spark, [WholeFile(str(path), "prod", at, _hash(path))])
    result = explode_client_offsets(files)
    rows = result.parsed.landed.orderBy(F.col("queue_id").desc()).collect()
    common = {
        "cluster": "prod",
        "broker": "broker-a",
        "snapshot_at": at,
        "topic": "TopicTest",
        "consumer_group": "please_rename_unique_group_name",
        "key_kind": "normal",
        "snapshot_source": "client_offsets",
        "client_id": "192.168.17.0@DEFAULT",
        "source_file": str(path),
        "line_no": None,
        "_file_hash": _hash(path),
    }
    assert [_utc(r.asDict()) for r in rows] == [
        {**common, "queue_id": q, "offset": o} for q, o in [(3, 1470), (2, 1471), (1, 1470), (0, 1470)]
    ]
    assert result.parsed.rejected.collect() == [] and result.skipped.collect() == []


def test_awkward_landing_paths_keep_their_metadata(spark, real_samples, tmp_path):
    source = real_samples / "excerpts" / "v4_consumerOffset_sparse-queue__YunaiV-Blog.json"
    names = [
        "2024-05-01T00:00:00+08:00",
        "with space",
        "per%25cent",
        "brackets [x]",
        "braces {a,b}",
        "café@broker",
    ]
    paths = []
    for name in names:
        path = tmp_path / name / "consumerOffset.json"
        path.parent.mkdir()
        shutil.copy(source, path)
        paths.append(path)
    files = [_snapshot(p, broker=f"b{i}") for i, p in enumerate(paths)]
    landed = explode_snapshots(read_snapshot_documents(spark, files)).landed
    rows = (
        landed.where(F.col("topic") == "TopicRead3")
        .select("source_file", "broker", "queue_id", "offset")
        .collect()
    )
    assert sorted(tuple(r) for r in rows) == sorted((str(p), f"b{i}", 1, 5) for i, p in enumerate(paths))


def test_missing_unreadable_and_gzip_files_each_get_a_row(spark, real_samples, tmp_path):
    gxstax = real_samples / "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json"
    packed = tmp_path / "consumerOffset.json.gz"
    packed.write_bytes(gzip.compress(gxstax.read_bytes()))
    broken_gzip = tmp_path / "b" / "consumerOffset.json.gz"
    broken_gzip.parent.mkdir()
    broken_gzip.write_bytes(gzip.compress(gxstax.read_bytes())[:40])
    missing = tmp_path / "gone" / "consumerOffset.json"
    # Hadoop's local file system cannot open a file with a colon in its name (its checksum
    # path is not a valid URI): the file still gets its row and its rejection.
    colon = tmp_path / "c" / "consumerOffset:1.json"
    colon.parent.mkdir()
    shutil.copy(gxstax, colon)
    files = [
        _snapshot(packed),
        _snapshot(broken_gzip, broker="b2"),
        _snapshot(missing, broker="b3"),
        _snapshot(colon, broker="b4"),
    ]
    documents = read_snapshot_documents(spark, files)
    summary = documents.select("source_file", "file_size", "json_values").collect()
    assert sorted(tuple(r) for r in summary) == sorted(
        [
            (str(packed), packed.stat().st_size, 1),
            (str(broken_gzip), 40, 0),
            (str(missing), None, 0),
            (str(colon), 350, 0),
        ]
    )
    parsed = explode_snapshots(documents)
    assert _tables(parsed.landed.collect(), tmp_path) == {"consumerOffset.json.gz": GXSTAX_0313}
    assert sorted((r.source_file, r.reason, r.raw) for r in parsed.rejected.collect()) == sorted(
        [
            (
                str(broken_gzip),
                "no JSON object in the file: blank text, an empty array, or unreadable (e.g. a corrupt gzip stream)",
                None,
            ),
            (str(missing), "file missing at read time", None),
            (
                str(colon),
                "no JSON object in the file: blank text, an empty array, or unreadable (e.g. a corrupt gzip stream)",
                None,
            ),
        ]
    )
    counts = records_per_file(documents, parsed).collect()
    assert sorted(tuple(r) for r in counts) == sorted(
        [
            (str(packed), files[0].file_hash, 10, 10, 0),
            (str(broken_gzip), files[1].file_hash, 1, 0, 1),
            (str(missing), files[2].file_hash, 1, 0, 1),
            (str(colon), files[3].file_hash, 1, 0, 1),
        ]
    )


def _broken_cases() -> list[dict]:
    return json.loads((BROKEN / "cases.json").read_text(encoding="utf-8"))["cases"]


def test_broken_corpus_is_complete():
    listed = {case["file"] for case in _broken_cases()}
    assert listed == {p.name for p in BROKEN.iterdir()} - {"cases.json"}


def test_every_broken_input_gives_its_exact_reason(spark):
    cases = _broken_cases()
    files = [
        _snapshot(BROKEN / c["file"], kind=c["document_kind"], broker=f"b{i}") for i, c in enumerate(cases)
    ]
    documents = read_snapshot_documents(spark, files)
    snapshots, delays = explode_snapshots(documents), explode_delay_offsets(documents)
    rejected = snapshots.rejected.unionByName(delays.rejected).collect()
    landed = [
        (r.source_file, (r.topic, r.consumer_group, r.queue_id, r.offset)) for r in snapshots.landed.collect()
    ]
    landed += [(r.source_file, (r.delay_level, r.offset)) for r in delays.landed.collect()]
    for case in cases:
        path = str(BROKEN / case["file"])
        unchecked = {e["reason"] for e in case["rejected"] if "raw" not in e}  # binary text: reason only
        got = [
            (r.reason, None if r.reason in unchecked else r.raw) for r in rejected if r.source_file == path
        ]
        expected = [(e["reason"], e.get("raw")) for e in case["rejected"]]
        assert sorted(got, key=str) == sorted(expected, key=str), case["file"]
        got_landed = sorted(entry for source, entry in landed if source == path)
        assert got_landed == sorted(tuple(x) for x in case["landed"]), case["file"]
    assert {r.line_no for r in rejected} == {None}


def test_two_hundred_thousand_keys_stay_in_spark(spark, tmp_path):
    path = tmp_path / "consumerOffset.json"
    keys = 200_000
    with path.open("w", encoding="utf-8") as out:
        out.write('{\n\t"offsetTable":{\n')
        for i in range(keys):
            separator = "," if i < keys - 1 else ""
            out.write(f'\t\t"topic_{i}@group_{i % 97}":{{0:{i},1:{i + 1}\n\t\t}}{separator}\n')
        out.write("\t}\n}")
    parsed = explode_snapshots(read_snapshot_documents(spark, [_snapshot(path)]))
    totals = parsed.landed.agg(F.count(F.lit(1)).alias("rows"), F.sum("offset").alias("total")).first()
    assert (totals.rows, totals.total) == (2 * keys, sum(range(keys)) + sum(range(1, keys + 1)))
    assert parsed.rejected.count() == 0


def test_snapshot_file_wants_an_aware_utc_time_and_known_kinds():
    with pytest.raises(ValueError, match="aware UTC datetime"):
        SnapshotFile("/x", "c", "b", datetime(2024, 1, 1), "main", "consumer_offsets", "h")
    with pytest.raises(ValueError, match="aware UTC datetime"):
        SnapshotFile(
            "/x", "c", "b", datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=8))), "main", "lmq", "h"
        )
    with pytest.raises(ValueError, match="unknown document_kind"):
        SnapshotFile("/x", "c", "b", AT, "main", "topics", "h")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="snapshot_source"):
        SnapshotFile("/x", "c", "b", AT, "lmq", "lmq", "h")  # type: ignore[arg-type]


def test_file_systems_are_told_apart_by_scheme_and_authority():
    assert _file_system_key("/landing/a/consumerOffset.json") == ""
    assert _file_system_key("file:///landing/a.json") == "file://"
    assert (
        _file_system_key("file:/landing/a.json") == "file://"
    )  # one slash: the local file system all the same
    assert _file_system_key("hdfs://nn1:8020/landing/a.json") == "hdfs://nn1:8020"
    assert _file_system_key("hdfs://nn2:8020/landing/a.json") != _file_system_key(
        "hdfs://nn1:8020/landing/a.json"
    )
