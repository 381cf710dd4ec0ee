"""RocketMQ's ``topic@group`` offset-table keys: how a key splits, and what kind of key it is.

A key splits on its **first** ``@``: ``%RETRY%g@g`` -> topic ``%RETRY%g``, group ``g``; the
5.x proxy broadcast key ``t@g@broadcast`` -> topic ``t``, group ``g@broadcast``. Nothing is
dropped: retry, dead-letter, system and broadcast keys are kept and marked in ``key_kind``.

One kind no key has: ``broadcast_client``, a broadcasting consumer's own state (its
``offsets.json``: ``~/.rocketmq_offsets/<clientIP>@<instance>/<group>/``). Each client instance
keeps its own offset of every queue, so the replay reads it as a group of its own, named
``<group>@<clientIP>@<instance>`` (:func:`client_state_group`).

The classification is declared once, as data (:data:`KEY_KIND_RULES`: the first rule that
holds names the kind), and rendered for each engine that needs it: plain Python here
(:func:`key_kind_of`), Spark columns (:func:`pipelines.keys.key_kind`) and the benchmark
oracle's SQL. A rule is built from a few conditions on the topic and the group:

    >>> key_kind_of("%RETRY%billing", "billing"), key_kind_of("%RETRY%billing_orders", "billing")
    ('retry', 'pop_retry')
    >>> key_kind_of("orders", "billing@broadcast"), key_kind_of("rmq_sys_REVIVE_LOG_c1", "CID_RMQ_SYS_REVIVE_GROUP")
    ('broadcast', 'system')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

KEY_KINDS = ("normal", "retry", "pop_retry", "dlq", "system", "broadcast", "broadcast_client")
CLIENT_STATE_KIND = "broadcast_client"

RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"
BROADCAST_SUFFIX = "@broadcast"
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

Part = Literal["topic", "group", "retried_group"]  # retried_group: the topic after "%RETRY%"


@dataclass(frozen=True)
class Starts:
    """``part`` starts with one of ``prefixes``, or with the group followed by one of ``after_group``."""

    part: Part
    prefixes: tuple[str, ...] = ()
    after_group: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ends:
    part: Part
    suffix: str


@dataclass(frozen=True)
class OneOf:
    part: Part
    values: tuple[str, ...]


@dataclass(frozen=True)
class IsGroup:
    """``part`` equals the group."""

    part: Part


@dataclass(frozen=True)
class AllOf:
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class AnyOf:
    conditions: tuple[Condition, ...]


Condition = Starts | Ends | OneOf | IsGroup | AllOf | AnyOf

IS_RETRY_TOPIC = Starts("topic", (RETRY_PREFIX,))
# (kind, condition): the first that holds names the key's kind; none: "normal"
KEY_KIND_RULES: tuple[tuple[str, Condition], ...] = (
    ("retry", AllOf((IS_RETRY_TOPIC, IsGroup("retried_group")))),
    # 5.x POP retry topics: %RETRY%<group>_<topic> and %RETRY%<group>+<topic>
    ("pop_retry", AllOf((IS_RETRY_TOPIC, Starts("retried_group", after_group=("_", "+"))))),
    ("retry", IS_RETRY_TOPIC),
    ("dlq", Starts("topic", (DLQ_PREFIX,))),
    ("broadcast", Ends("group", BROADCAST_SUFFIX)),
    (
        "system",
        AnyOf(
            (
                Starts("topic", SYSTEM_TOPIC_PREFIXES),
                OneOf("topic", SYSTEM_TOPICS),
                Starts("group", SYSTEM_GROUP_PREFIXES),
                OneOf("group", SYSTEM_GROUPS),
            )
        ),
    ),
)
OTHERWISE = "normal"


def _holds(condition: Condition, parts: dict[str, str]) -> bool:
    if isinstance(condition, AllOf):
        return all(_holds(c, parts) for c in condition.conditions)
    if isinstance(condition, AnyOf):
        return any(_holds(c, parts) for c in condition.conditions)
    text = parts[condition.part]
    if isinstance(condition, Starts):
        return text.startswith((*condition.prefixes, *(parts["group"] + a for a in condition.after_group)))
    if isinstance(condition, Ends):
        return text.endswith(condition.suffix)
    if isinstance(condition, OneOf):
        return text in condition.values
    return text == parts["group"]


def key_kind_of(topic: str, consumer_group: str) -> str:
    """The kind of the key ``topic@consumer_group`` (see the module docstring)."""
    parts = {"topic": topic, "group": consumer_group, "retried_group": topic[len(RETRY_PREFIX) :]}
    return next((kind for kind, condition in KEY_KIND_RULES if _holds(condition, parts)), OTHERWISE)


def client_state_group(consumer_group: str, client_id: str) -> str:
    """The group a broadcasting client's own offsets are replayed under (see the module docstring).

    >>> client_state_group("billing", "10.0.0.5@DEFAULT")
    'billing@10.0.0.5@DEFAULT'
    """
    return f"{consumer_group}@{client_id}"
