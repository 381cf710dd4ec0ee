"""A key's kind is the same whether Spark classifies it or plain Python does (the commit reader
lands the lines it has checked with the latter)."""

from __future__ import annotations

from pyspark.sql import functions as F

from pipelines.keys import key_kind
from schemas.keys import key_kind_of

KEYS = [
    ("%RETRY%g", "g", "retry"), ("%RETRY%g_t", "g", "pop_retry"), ("%RETRY%g+t", "g", "pop_retry"),
    ("%RETRY%other", "g", "retry"), ("%DLQ%g", "g", "dlq"), ("t", "g@broadcast", "broadcast"),
    ("rmq_sys_REVIVE_LOG_c", "CID_RMQ_SYS_REVIVE_GROUP", "system"), ("OFFSET_MOVED_EVENT", "__MONITOR_CONSUMER", "system"),
    ("t", "CID_ONSAPI_x", "system"), ("TBW102", "g", "system"), ("t", "TOOLS_CONSUMER", "system"),
    ("%DLQ%g", "g@broadcast", "dlq"), ("%RETRY%", "", "retry"), ("TopicTest", "group_a", "normal"), ("t", "g", "normal"),
]  # fmt: skip


def test_plain_python_classifies_keys_as_documented():
    assert [key_kind_of(topic, group) for topic, group, _ in KEYS] == [kind for _, _, kind in KEYS]


def test_spark_classifies_the_same_keys_alike(spark):
    rows = spark.createDataFrame([(t, g) for t, g, _ in KEYS], "topic string, consumer_group string")
    got = [
        r.kind for r in rows.select(key_kind(F.col("topic"), F.col("consumer_group")).alias("kind")).collect()
    ]
    assert got == [kind for _, _, kind in KEYS]
