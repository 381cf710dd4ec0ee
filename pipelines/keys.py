"""Column functions for RocketMQ's ``topic@group`` offset-table keys.

A key splits on its **first** ``@``: ``%RETRY%g@g`` -> topic ``%RETRY%g``, group ``g``;
the 5.x proxy broadcast key ``t@g@broadcast`` -> topic ``t``, group ``g@broadcast``.
Nothing is dropped: retry, dead-letter, system and broadcast keys are kept and
marked in ``key_kind``.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

KEY_KINDS = ("normal", "retry", "pop_retry", "dlq", "system", "broadcast")

# Topics and groups the broker itself creates (RocketMQ's TopicValidator and MixAll).
SYSTEM_TOPIC_PREFIXES = ("rmq_sys_", "RMQ_SYS_")
SYSTEM_TOPICS = (
    "OFFSET_MOVED_EVENT",
    "SCHEDULE_TOPIC_XXXX",
    "TBW102",
    "BenchmarkTest",
    "SELF_TEST_TOPIC",
    "TRANS_CHECK_MAX_TIME_TOPIC",
)
SYSTEM_GROUP_PREFIXES = ("CID_RMQ_SYS_", "CID_ONSAPI_", "CID_SYS_RMQ_")
SYSTEM_GROUPS = (
    "__MONITOR_CONSUMER",
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
)


def topic_of_key(key: Column) -> Column:
    """Topic part of an offset-table key: everything before the first ``@``."""
    return F.substring_index(key, "@", 1)


def group_of_key(key: Column) -> Column:
    """Group part of an offset-table key: everything after the first ``@`` (null when none)."""
    position = F.instr(key, "@")
    return F.when(position > 0, key.substr(position + 1, F.length(key)))


def _starts_with_any(col: Column, prefixes: tuple[str, ...]) -> Column:
    condition = F.lit(False)
    for prefix in prefixes:
        condition = condition | col.startswith(prefix)
    return condition


def key_kind(topic: Column, consumer_group: Column) -> Column:
    """Classify a key: retry, pop_retry, dlq, system, broadcast or normal.

    ``%RETRY%<group>`` is the group's retry topic; ``%RETRY%<group>_<topic>`` and
    ``%RETRY%<group>+<topic>`` are the 5.x POP retry topics.
    """
    retry_of = F.substring(topic, len("%RETRY%") + 1, 1 << 20)
    is_system = (
        _starts_with_any(topic, SYSTEM_TOPIC_PREFIXES)
        | topic.isin(*SYSTEM_TOPICS)
        | _starts_with_any(consumer_group, SYSTEM_GROUP_PREFIXES)
        | consumer_group.isin(*SYSTEM_GROUPS)
    )
    return (
        F.when(topic.startswith("%RETRY%") & (retry_of == consumer_group), F.lit("retry"))
        .when(
            topic.startswith("%RETRY%")
            & (retry_of.startswith(F.concat(consumer_group, F.lit("_"))) | retry_of.startswith(F.concat(consumer_group, F.lit("+")))),
            F.lit("pop_retry"),
        )
        .when(topic.startswith("%RETRY%"), F.lit("retry"))
        .when(topic.startswith("%DLQ%"), F.lit("dlq"))
        .when(consumer_group.endswith("@broadcast"), F.lit("broadcast"))
        .when(is_system, F.lit("system"))
        .otherwise(F.lit("normal"))
    )


def key_kind_of(topic: str, consumer_group: str) -> str:
    """:func:`key_kind` of one key given as text (both parts present), for code outside Spark."""
    if topic.startswith("%RETRY%"):
        retry_of = topic[len("%RETRY%") :]
        if retry_of == consumer_group:
            return "retry"
        return "pop_retry" if retry_of.startswith((consumer_group + "_", consumer_group + "+")) else "retry"
    if topic.startswith("%DLQ%"):
        return "dlq"
    if consumer_group.endswith("@broadcast"):
        return "broadcast"
    system = (
        topic.startswith(SYSTEM_TOPIC_PREFIXES)
        or topic in SYSTEM_TOPICS
        or consumer_group.startswith(SYSTEM_GROUP_PREFIXES)
        or consumer_group in SYSTEM_GROUPS
    )
    return "system" if system else "normal"
