"""SQL text shared by the DuckDB reference: literals, the key_kind macro, per-cluster time zones."""

from __future__ import annotations

from schemas.config import ClusterSettings, Settings
from schemas.keys import KEY_KIND_RULES, OTHERWISE, RETRY_PREFIX, AllOf, AnyOf, Condition, Ends, OneOf, Starts


def literal(text: str) -> str:
    """A SQL string literal (no escape processing: only quotes are doubled)."""
    return "'" + text.replace("'", "''") + "'"


def _condition(condition: Condition) -> str:
    """A key-kind condition (schemas.keys) as SQL over the macro's ``topic`` and ``grp``."""
    if isinstance(condition, (AllOf, AnyOf)):
        joiner = " AND " if isinstance(condition, AllOf) else " OR "
        return "(" + joiner.join(_condition(c) for c in condition.conditions) + ")"
    text = {"topic": "topic", "group": "grp", "retried_group": f"substr(topic, {len(RETRY_PREFIX) + 1})"}[
        condition.part
    ]
    if isinstance(condition, Starts):
        prefixes = [literal(p) for p in condition.prefixes] + [
            f"grp || {literal(a)}" for a in condition.after_group
        ]
        return "(" + " OR ".join(f"starts_with({text}, {p})" for p in prefixes) + ")"
    if isinstance(condition, Ends):
        return f"ends_with({text}, {literal(condition.suffix)})"
    if isinstance(condition, OneOf):
        return f"{text} IN (" + ", ".join(literal(v) for v in condition.values) + ")"
    return f"{text} = grp"


def key_kind_macro() -> str:
    """``key_kind(topic, grp)``: the kind of each key, by the rules of schemas.keys."""
    cases = " ".join(
        f"WHEN {_condition(condition)} THEN {literal(kind)}" for kind, condition in KEY_KIND_RULES
    )
    return f"CREATE OR REPLACE MACRO key_kind(topic, grp) AS CASE {cases} ELSE {literal(OTHERWISE)} END"


def zone_by_cluster(settings: Settings, attribute: str, cluster_column: str) -> str:
    """SQL giving the IANA zone ``attribute`` (e.g. broker_log_timezone) of each row's cluster."""
    default = literal(getattr(ClusterSettings(), attribute))
    if not settings.clusters:
        return default
    cases = " ".join(
        f"WHEN {literal(name)} THEN {literal(getattr(cluster, attribute))}"
        for name, cluster in settings.clusters.items()
    )
    return f"(CASE {cluster_column} {cases} ELSE {default} END)"
