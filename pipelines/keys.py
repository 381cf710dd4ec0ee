"""Column functions for RocketMQ's ``topic@group`` offset-table keys (the rules: schemas.keys).

A key splits on its **first** ``@``: ``%RETRY%g@g`` -> topic ``%RETRY%g``, group ``g``;
the 5.x proxy broadcast key ``t@g@broadcast`` -> topic ``t``, group ``g@broadcast``.
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import Column
from pyspark.sql import functions as F

from schemas.keys import (
    KEY_KIND_RULES,
    OTHERWISE,
    RETRY_PREFIX,
    AllOf,
    AnyOf,
    Condition,
    Ends,
    IsGroup,
    OneOf,
    Starts,
)


def topic_of_key(key: Column) -> Column:
    """Topic part of an offset-table key: everything before the first ``@``."""
    return F.substring_index(key, "@", 1)


def group_of_key(key: Column) -> Column:
    """Group part of an offset-table key: everything after the first ``@`` (null when none)."""
    position = F.instr(key, "@")
    return F.when(position > 0, key.substr(position + 1, F.length(key)))


def _column(condition: Condition, parts: dict[str, Column]) -> Column:
    """``condition`` (schemas.keys) as a Spark column over the key's parts."""
    if isinstance(condition, AllOf):
        return reduce(lambda a, b: a & b, [_column(c, parts) for c in condition.conditions])
    if isinstance(condition, AnyOf):
        return reduce(lambda a, b: a | b, [_column(c, parts) for c in condition.conditions])
    text = parts[condition.part]
    if isinstance(condition, Starts):
        prefixes = [F.lit(p) for p in condition.prefixes] + [
            F.concat(parts["group"], F.lit(a)) for a in condition.after_group
        ]
        return reduce(lambda a, b: a | b, [text.startswith(p) for p in prefixes])
    if isinstance(condition, Ends):
        return text.endswith(condition.suffix)
    if isinstance(condition, OneOf):
        return text.isin(*condition.values)
    assert isinstance(condition, IsGroup)
    return text == parts["group"]


def client_state_group(consumer_group: Column, client_id: Column) -> Column:
    """schemas.keys.client_state_group as a column: ``<group>@<clientIP>@<instance>``."""
    return F.concat(consumer_group, F.lit("@"), client_id)


def key_kind(topic: Column, consumer_group: Column) -> Column:
    """The kind of each key: retry, pop_retry, dlq, system, broadcast or normal (schemas.keys.KEY_KIND_RULES)."""
    parts = {
        "topic": topic,
        "group": consumer_group,
        "retried_group": F.substring(topic, len(RETRY_PREFIX) + 1, 1 << 20),
    }
    kind = F.lit(OTHERWISE)
    for name, condition in reversed(KEY_KIND_RULES):
        kind = F.when(_column(condition, parts), F.lit(name)).otherwise(kind)
    return kind
