"""Property tests: offset tables rendered the way fastjson writes them read back exactly."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.io.snapshot_files import (
    SnapshotFile,
    WholeFile,
    read_snapshot_documents,
    read_whole_files,
)
from pipelines.ingest.client_offsets import ClientQueueOffset, explode_client_offsets, parse_client_offsets
from pipelines.ingest.snapshots import explode_snapshots

AT = datetime(2024, 5, 1, tzinfo=UTC)
SPARK_SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_counter = itertools.count()

names = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-|", min_size=1, max_size=12
)
offsets = st.integers(min_value=0, max_value=(1 << 53) - 1)
queue_ids = st.integers(min_value=0, max_value=65535)


@st.composite
def keys(draw) -> tuple[str, str, str, str]:
    """(key, topic, group, key_kind) of every kind a broker writes."""
    topic, group = "t" + draw(names), "g" + draw(names)
    return draw(
        st.sampled_from(
            [
                (f"{topic}@{group}", topic, group, "normal"),
                (f"%RETRY%{group}@{group}", f"%RETRY%{group}", group, "retry"),
                (f"%RETRY%{group}_{topic}@{group}", f"%RETRY%{group}_{topic}", group, "pop_retry"),
                (f"%DLQ%{group}@{group}", f"%DLQ%{group}", group, "dlq"),
                (
                    f"rmq_sys_{topic}@CID_RMQ_SYS_{group}",
                    f"rmq_sys_{topic}",
                    f"CID_RMQ_SYS_{group}",
                    "system",
                ),
                (
                    "OFFSET_MOVED_EVENT@__MONITOR_CONSUMER",
                    "OFFSET_MOVED_EVENT",
                    "__MONITOR_CONSUMER",
                    "system",
                ),
                (f"{topic}@{group}@broadcast", topic, f"{group}@broadcast", "broadcast"),
            ]
        )
    )


# key -> (topic, group, kind, {queue id: offset}); queue maps come sparse and unordered.
tables = st.dictionaries(keys(), st.dictionaries(queue_ids, offsets, min_size=1, max_size=8), max_size=6).map(
    lambda table: {key[0]: (*key[1:], queues) for key, queues in table.items()}
)


def render_broker(table: dict, lmq: dict[str, int] | None, *, pretty: bool, five: bool) -> str:
    """consumerOffset.json as fastjson writes it: PrettyFormat (TAB indent, an inner map's
    closing brace on the next line, no final newline) or compact; 4.x or 5.x shape."""
    queue_maps = {key: ",".join(f"{q}:{o}" for q, o in value[3].items()) for key, value in table.items()}
    groups: dict[str, list[str]] = {}
    for topic, group, _, _ in table.values():
        groups.setdefault(group, []).append(topic)
    group_map = {g: "[" + ",".join(f'"{t}"' for t in ts) + "]" for g, ts in groups.items()}
    if not pretty:
        fields = (
            [
                '"dataVersion":{"counter":0,"stateVersion":0,"timestamp":1689387914332}',
                '"groupTopicMap":{' + ",".join(f'"{g}":{v}' for g, v in group_map.items()) + "}",
            ]
            if five
            else []
        )
        if lmq is not None:
            fields.append('"lmqOffsetTable":{' + ",".join(f'"{k}":{v}' for k, v in lmq.items()) + "}")
        fields.append('"offsetTable":{' + ",".join(f'"{k}":{{{v}}}' for k, v in queue_maps.items()) + "}")
        return "{" + ",".join(fields) + "}"

    def block(name: str, lines: list[str]) -> str:
        return f'\t"{name}":{{' + ("\n" + ",\n".join(lines) + "\n\t}" if lines else "}")

    fields = []
    if five:
        fields.append(
            '\t"dataVersion":{\n\t\t"counter":0,\n\t\t"stateVersion":0,\n\t\t"timestamp":1689387914332\n\t}'
        )
        fields.append(block("groupTopicMap", [f'\t\t"{g}":{v}' for g, v in group_map.items()]))
    if lmq is not None:
        fields.append(block("lmqOffsetTable", [f'\t\t"{k}":{v}' for k, v in lmq.items()]))
    fields.append(block("offsetTable", [f'\t\t"{k}":{{{v}\n\t\t}}' for k, v in queue_maps.items()]))
    return "{\n" + ",\n".join(fields) + "\n}"


# lmqOffsetTable: one offset per LMQ key, no queue level.
lmq_tables = st.dictionaries(names.map(lambda name: f"%LMQ%{name}@%LMQ%g{name}"), offsets, max_size=4)
documents = st.tuples(
    tables,
    st.none() | lmq_tables,
    st.booleans(),
    st.booleans(),
)


@SPARK_SETTINGS
@given(st.lists(documents, min_size=1, max_size=4))
def test_broker_snapshots_read_back_exactly(spark, tmp_path_factory, docs):
    directory = tmp_path_factory.mktemp(f"broker-{next(_counter)}")
    files, expected = [], []
    for i, (table, lmq, pretty, five) in enumerate(docs):
        path = directory / f"b{i}" / ("lmqConsumerOffset.json" if lmq is not None else "consumerOffset.json")
        path.parent.mkdir()
        path.write_text(render_broker(table, lmq, pretty=pretty, five=five), encoding="utf-8")
        kind, source = ("lmq", "lmq") if lmq is not None else ("consumer_offsets", "main")
        files.append(
            SnapshotFile(
                str(path), "prod", f"b{i}", AT, "main", kind, hashlib.sha256(path.read_bytes()).hexdigest()
            )
        )
        expected += [
            (f"b{i}", source, t, g, k, q, o) for t, g, k, queues in table.values() for q, o in queues.items()
        ]
        expected += [(f"b{i}", source, *key.split("@", 1), "normal", 0, o) for key, o in (lmq or {}).items()]
    parsed = explode_snapshots(read_snapshot_documents(spark, files))
    rows = parsed.landed.select(
        "broker", "snapshot_source", "topic", "consumer_group", "key_kind", "queue_id", "offset"
    )
    assert sorted(tuple(r) for r in rows.collect()) == sorted(expected)
    assert parsed.rejected.collect() == []


client_entries = st.lists(
    st.tuples(names.map("broker-{}".format), names.map("T{}".format), queue_ids, offsets),
    max_size=12,
    unique_by=lambda e: e[:3],
)


def render_client(entries: list[tuple[str, str, int, int]], *, pretty: bool) -> str:
    """offsets.json as LocalFileOffsetStore writes it: MessageQueue objects as keys."""
    if not pretty:
        body = ",".join(f'{{"brokerName":"{b}","queueId":{q},"topic":"{t}"}}:{o}' for b, t, q, o in entries)
        return '{"offsetTable":{' + body + "}}"
    body = ",".join(
        f'{{\n\t\t\t"brokerName":"{b}",\n\t\t\t"queueId":{q},\n\t\t\t"topic":"{t}"\n\t\t}}:{o}'
        for b, t, q, o in entries
    )
    return '{\n\t"offsetTable":{' + body + "\n\t}\n}"


@settings(max_examples=400, deadline=None)
@given(client_entries, st.booleans())
def test_client_offsets_tokenizer_reads_back_exactly(entries, pretty):
    assert parse_client_offsets(render_client(entries, pretty=pretty)) == [
        ClientQueueOffset(b, t, q, o) for b, t, q, o in entries
    ]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(client_entries, st.booleans()), min_size=1, max_size=3))
def test_client_offsets_files_read_back_exactly_through_spark(spark, tmp_path_factory, clients):
    directory = tmp_path_factory.mktemp(f"clients-{next(_counter)}")
    files, expected = [], []
    for i, (entries, pretty) in enumerate(clients):
        path = directory / f"10.0.0.{i}@DEFAULT" / f"group_{i}" / "offsets.json"
        path.parent.mkdir(parents=True)
        path.write_text(render_client(entries, pretty=pretty), encoding="utf-8")
        files.append(WholeFile(str(path), "prod", AT, hashlib.sha256(path.read_bytes()).hexdigest()))
        expected += [(f"10.0.0.{i}@DEFAULT", f"group_{i}", b, t, q, o) for b, t, q, o in entries]
    result = explode_client_offsets(read_whole_files(spark, files))
    rows = result.parsed.landed.select("client_id", "consumer_group", "broker", "topic", "queue_id", "offset")
    assert sorted(tuple(r) for r in rows.collect()) == sorted(expected)
    assert result.parsed.rejected.collect() == [] and result.skipped.collect() == []


def test_renderers_reproduce_real_files_byte_for_byte(real_samples):
    gxstax = {
        "%RETRY%please_rename_unique_group_name@please_rename_unique_group_name": ("", "", "", {0: 0}),
        "TopicTest@please_rename_unique_group_name_4": ("", "", "", dict.fromkeys(range(4), 543)),
        "%RETRY%please_rename_unique_group_name_4@please_rename_unique_group_name_4": ("", "", "", {0: 0}),
        "TopicTest@please_rename_unique_group_name": ("", "", "", dict.fromkeys(range(4), 793)),
    }
    assert render_broker(gxstax, None, pretty=True, five=False) == (
        real_samples / "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json"
    ).read_text(encoding="utf-8")
    assert render_broker({}, None, pretty=True, five=True) == (
        real_samples / "v5.1.3_consumerOffset_empty__chiwenda-yudao-cloud_docker-prod.json"
    ).read_text(encoding="utf-8")
    assert render_client(
        [("broker-a", "TopicTest", q, o) for q, o in [(3, 1470), (2, 1471), (1, 1470), (0, 1470)]],
        pretty=True,
    ) == (
        real_samples / "excerpts" / "client_offsets.json__LocalFileOffsetStore__YunaiV-Blog.json"
    ).read_text(encoding="utf-8")
