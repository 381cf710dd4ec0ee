"""Which store/config and client offsets files are read, and why the others are skipped."""

from __future__ import annotations

import logging

import pytest

from pipelines.ingest.config_files import (
    TMP_REASON,
    UNKNOWN_REASON,
    ConfigFileKind,
    classify_config_file,
    partition_config_files,
)

READ = [
    ("consumerOffset.json", "consumer_offsets", "main", False),
    ("consumerOffset.json.bak", "consumer_offsets", "bak", False),
    ("consumerOffset.json.gz", "consumer_offsets", "main", True),
    ("consumerOffset.json.bak.gz", "consumer_offsets", "bak", True),
    ("lmqConsumerOffset.json", "lmq", "main", False),
    ("lmqConsumerOffset.json.bak", "lmq", "bak", False),
    ("delayOffset.json", "delay_offsets", "main", False),
    ("delayOffset.json.bak", "delay_offsets", "bak", False),
    ("delayOffset.json.gz", "delay_offsets", "main", True),
    ("offsets.json", "client_offsets", "main", False),
    ("offsets.json.bak", "client_offsets", "bak", False),
]
SKIPPED = [
    ("topics.json", "topic configuration (queue counts, permissions), not consumer offsets"),
    (
        "topics.json.bak",
        "topic configuration (queue counts, permissions), not consumer offsets (backup copy)",
    ),
    ("subscriptionGroup.json", "subscription group configuration, not consumer offsets"),
    ("consumerFilter.json", "consumer filter expressions per topic, not consumer offsets"),
    ("consumerOrderInfo.json", "orderly POP consumption state, not consumer offsets"),
    ("topicQueueMapping.json", "static topic queue mapping, not consumer offsets"),
    ("messageRequestMode.json.bak", "pull or POP request mode per group, not consumer offsets (backup copy)"),
    ("broker.properties", "broker configuration properties, not consumer offsets"),
    ("timermetrics", "timer message metrics (compact JSON), not consumer offsets"),
    ("transactionMetrics", "transaction check metrics (compact JSON), not consumer offsets"),
    ("timercheck", "binary timer checkpoint (4096-byte memory-mapped file), not JSON"),
    ("consumerOffset.json.tmp", TMP_REASON),
    ("offsets.json.tmp", TMP_REASON),
    ("delayOffset.json.tmp.gz", TMP_REASON),
    ("ConsumerOffset.json", UNKNOWN_REASON),
    ("consumerOffset.json.bak.bak", UNKNOWN_REASON),
    ("consumerOffset.json.1", UNKNOWN_REASON),
    ("CURRENT", UNKNOWN_REASON),
    (".consumerOffset.json.crc", UNKNOWN_REASON),
]

# Every store/config or client offsets file in tests/fixtures/real_samples, by the name it
# had on its broker or client (see PROVENANCE.md), and how that name is classified.
REAL_SAMPLE_NAMES = {
    "v3_consumerOffset.json.bak__humphery755-RocketMQ.bak": "consumerOffset.json.bak",
    "v3_delayOffset_compact__humphery755-RocketMQ.json": "delayOffset.json",
    "v3_sibling_topics.json__humphery755-RocketMQ.json": "topics.json",
    "v4.8.0_consumerOffset_empty__haohao1029-java.json": "consumerOffset.json",
    "v4.8.0_sibling_topics.json__haohao1029-java.json": "topics.json",
    "v4_consumerOffset.json.bak__super-golden-rocketMq.bak": "consumerOffset.json.bak",
    "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json": "consumerOffset.json",
    "v4_consumerOffset__gxstax-rocketmq__2019-03-16.json": "consumerOffset.json",
    "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-07.json": "consumerOffset.json",
    "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-08.json": "consumerOffset.json",
    "v4_consumerOffset__shaoxubao-rocketmq-study.json": "consumerOffset.json",
    "v4_consumerOffset__super-golden-rocketMq.json": "consumerOffset.json",
    "v4_delayOffset_empty__apache-rocketmq-pr3535.json": "delayOffset.json",
    "v4_sibling_subscriptionGroup.json__gxstax-rocketmq.json": "subscriptionGroup.json",
    "v5.1.3_consumerOffset_empty__chiwenda-yudao-cloud_docker-prod.json": "consumerOffset.json",
    "v5.1.4_consumerOffset.json.bak__my-fastcms-nexfly.bak": "consumerOffset.json.bak",
    "v5.3.1_consumerOffset_empty__guoming-docker-compose-rocketmq.json": "consumerOffset.json",
    "v5.3.1_delayOffset__lwj0308-Shop.json": "delayOffset.json",
    "v5.3.1_sibling_consumerFilter.json__guoming.json": "consumerFilter.json",
    "v5.3.1_sibling_consumerOrderInfo.json__guoming.json": "consumerOrderInfo.json",
    "v5.3.1_sibling_timercheck_BINARY__guoming.bin": "timercheck",
    "v5.3.1_sibling_timermetrics__guoming": "timermetrics",
    "v5.3.1_sibling_transactionMetrics__guoming": "transactionMetrics",
    "excerpts/client_offsets.json__LocalFileOffsetStore__YunaiV-Blog.json": "offsets.json",
    "excerpts/v4_consumerOffset_sparse-queue__YunaiV-Blog.json": "consumerOffset.json",
}
# Samples that are logs or admin-tool output, not files of a store/config directory.
NOT_CONFIG_SAMPLES = {
    "PROVENANCE.md",
    "v4.8.0_broker.log__haohao1029-java.log.gz",
    "v4.9.4-then-5.1.4_broker.log__my-fastcms-nexfly.log.gz",
    "v5.1.4_stats.log__my-fastcms-nexfly.log",
    "excerpts/broker.log_NOTIFYME__apache-rocketmq-issue-3066.log",
    "excerpts/mqadmin_consumerProgress_5x_with-Inflight__unknown-repo.txt",
    "excerpts/mqadmin_topicStatus_5x__unknown-repo.txt",
    "excerpts/rocketmq_client.log_persistAll__apache-rocketmq-issue-3066.log",
}


@pytest.mark.parametrize(("name", "kind", "role", "is_gzip"), READ)
def test_offset_files_are_read_as_their_kind(name, kind, role, is_gzip):
    assert classify_config_file(name) == ConfigFileKind(name, kind, role, is_gzip, None)
    assert classify_config_file(name).is_read


@pytest.mark.parametrize(("name", "reason"), SKIPPED)
def test_other_files_are_skipped_with_their_reason(name, reason):
    kind = classify_config_file(name)
    assert kind == ConfigFileKind(name, None, None, name.endswith(".gz"), reason)
    assert not kind.is_read


def test_every_real_sample_is_classified_by_its_original_name(real_samples):
    present = {str(p.relative_to(real_samples)) for p in real_samples.rglob("*") if p.is_file()}
    assert present == set(REAL_SAMPLE_NAMES) | NOT_CONFIG_SAMPLES
    classified = {sample: classify_config_file(name) for sample, name in REAL_SAMPLE_NAMES.items()}
    read = {sample: (k.document_kind, k.file_role) for sample, k in classified.items() if k.is_read}
    assert read == {
        "v3_consumerOffset.json.bak__humphery755-RocketMQ.bak": ("consumer_offsets", "bak"),
        "v3_delayOffset_compact__humphery755-RocketMQ.json": ("delay_offsets", "main"),
        "v4.8.0_consumerOffset_empty__haohao1029-java.json": ("consumer_offsets", "main"),
        "v4_consumerOffset.json.bak__super-golden-rocketMq.bak": ("consumer_offsets", "bak"),
        "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json": ("consumer_offsets", "main"),
        "v4_consumerOffset__gxstax-rocketmq__2019-03-16.json": ("consumer_offsets", "main"),
        "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-07.json": ("consumer_offsets", "main"),
        "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-08.json": ("consumer_offsets", "main"),
        "v4_consumerOffset__shaoxubao-rocketmq-study.json": ("consumer_offsets", "main"),
        "v4_consumerOffset__super-golden-rocketMq.json": ("consumer_offsets", "main"),
        "v4_delayOffset_empty__apache-rocketmq-pr3535.json": ("delay_offsets", "main"),
        "v5.1.3_consumerOffset_empty__chiwenda-yudao-cloud_docker-prod.json": ("consumer_offsets", "main"),
        "v5.1.4_consumerOffset.json.bak__my-fastcms-nexfly.bak": ("consumer_offsets", "bak"),
        "v5.3.1_consumerOffset_empty__guoming-docker-compose-rocketmq.json": ("consumer_offsets", "main"),
        "v5.3.1_delayOffset__lwj0308-Shop.json": ("delay_offsets", "main"),
        "excerpts/client_offsets.json__LocalFileOffsetStore__YunaiV-Blog.json": ("client_offsets", "main"),
        "excerpts/v4_consumerOffset_sparse-queue__YunaiV-Blog.json": ("consumer_offsets", "main"),
    }
    skipped = {sample: k.skip_reason for sample, k in classified.items() if not k.is_read}
    assert skipped == {
        "v3_sibling_topics.json__humphery755-RocketMQ.json": "topic configuration (queue counts, permissions), not consumer offsets",
        "v4.8.0_sibling_topics.json__haohao1029-java.json": "topic configuration (queue counts, permissions), not consumer offsets",
        "v4_sibling_subscriptionGroup.json__gxstax-rocketmq.json": "subscription group configuration, not consumer offsets",
        "v5.3.1_sibling_consumerFilter.json__guoming.json": "consumer filter expressions per topic, not consumer offsets",
        "v5.3.1_sibling_consumerOrderInfo.json__guoming.json": "orderly POP consumption state, not consumer offsets",
        "v5.3.1_sibling_timercheck_BINARY__guoming.bin": "binary timer checkpoint (4096-byte memory-mapped file), not JSON",
        "v5.3.1_sibling_timermetrics__guoming": "timer message metrics (compact JSON), not consumer offsets",
        "v5.3.1_sibling_transactionMetrics__guoming": "transaction check metrics (compact JSON), not consumer offsets",
    }


def test_the_binary_sibling_really_is_binary(real_samples):
    content = (real_samples / "v5.3.1_sibling_timercheck_BINARY__guoming.bin").read_bytes()
    assert len(content) == 4096 and b"\x00" in content


def test_partition_logs_each_skipped_file(caplog):
    with caplog.at_level(logging.INFO, logger="pipelines.ingest.config_files"):
        read, skipped = partition_config_files(["topics.json", "consumerOffset.json", "timercheck", "x.tmp"])
    assert [k.file_name for k in read] == ["consumerOffset.json"]
    assert [k.file_name for k in skipped] == ["topics.json", "timercheck", "x.tmp"]
    assert caplog.messages == [
        "skipping topics.json: topic configuration (queue counts, permissions), not consumer offsets",
        "skipping timercheck: binary timer checkpoint (4096-byte memory-mapped file), not JSON",
        f"skipping x.tmp: {TMP_REASON}",
    ]


@pytest.mark.parametrize("name", ["", "config/consumerOffset.json"])
def test_only_base_names_are_classified(name):
    with pytest.raises(ValueError, match="base name"):
        classify_config_file(name)
