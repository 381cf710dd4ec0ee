"""SQL text shared by the DuckDB reference: literals, the key_kind macro, per-cluster time zones."""

from __future__ import annotations

from pipelines.keys import SYSTEM_GROUP_PREFIXES, SYSTEM_GROUPS, SYSTEM_TOPIC_PREFIXES, SYSTEM_TOPICS
from schemas.config import ClusterSettings, Settings


def literal(text: str) -> str:
    """A SQL string literal (no escape processing: only quotes are doubled)."""
    return "'" + text.replace("'", "''") + "'"


def _any_prefix(column: str, prefixes: tuple[str, ...]) -> str:
    return "(" + " OR ".join(f"starts_with({column}, {literal(p)})" for p in prefixes) + ")"


def _one_of(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN (" + ", ".join(literal(v) for v in values) + ")"


def key_kind_macro() -> str:
    """``key_kind(topic, grp)``: retry, pop_retry, dlq, broadcast, system or normal, as pipelines.keys classifies."""
    retry_of = "substr(topic, 8)"  # after '%RETRY%'
    is_system = " OR ".join(
        [
            _any_prefix("topic", SYSTEM_TOPIC_PREFIXES),
            _one_of("topic", SYSTEM_TOPICS),
            _any_prefix("grp", SYSTEM_GROUP_PREFIXES),
            _one_of("grp", SYSTEM_GROUPS),
        ]
    )
    return f"""
        CREATE OR REPLACE MACRO key_kind(topic, grp) AS CASE
            WHEN starts_with(topic, '%RETRY%') AND {retry_of} = grp THEN 'retry'
            WHEN starts_with(topic, '%RETRY%')
                 AND (starts_with({retry_of}, grp || '_') OR starts_with({retry_of}, grp || '+')) THEN 'pop_retry'
            WHEN starts_with(topic, '%RETRY%') THEN 'retry'
            WHEN starts_with(topic, '%DLQ%') THEN 'dlq'
            WHEN ends_with(grp, '@broadcast') THEN 'broadcast'
            WHEN {is_system} THEN 'system'
            ELSE 'normal' END
    """


def zone_by_cluster(settings: Settings, attribute: str, cluster_column: str) -> str:
    """SQL giving the IANA zone ``attribute`` (e.g. broker_log_timezone) of each row's cluster."""
    default = literal(getattr(ClusterSettings(), attribute))
    if not settings.clusters:
        return default
    cases = " ".join(
        f"WHEN {literal(name)} THEN {literal(getattr(cluster, attribute))}" for name, cluster in settings.clusters.items()
    )
    return f"(CASE {cluster_column} {cases} ELSE {default} END)"
