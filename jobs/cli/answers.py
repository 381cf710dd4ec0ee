"""The run summary's answers for the interval: lag in seconds, produce against consume, status, membership."""

from __future__ import annotations

from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval
from schemas.records import PULL
from schemas.tables import CONSUME_THROUGHPUT, CONSUMER_LAG_BY_GROUP, CONSUMER_STATUS, GROUP_CONNECTIONS

_SHOWN = 5


def _oldest_lag_lines(lake: Lake, interval: ReplayInterval) -> list[str]:
    lag = lake.read(CONSUMER_LAG_BY_GROUP, start=interval.replayed_from, end=interval.replayed_to)
    worst = (
        lag.where(F.col("worst_lag_seconds").isNotNull())
        .groupBy("cluster", "topic", "consumer_group")
        .agg(F.max(F.struct("worst_lag_seconds", "is_worst_lag_seconds_bounded", "observed_at")).alias("w"))
        .orderBy(F.col("w.worst_lag_seconds").desc(), "cluster", "topic", "consumer_group")
        .limit(_SHOWN)
        .collect()
    )
    lines = [
        "Lag in seconds, the groups furthest behind in the interval:"
        if worst
        else "No lag in seconds measured."
    ]
    for r in worst:
        bound = "at least " if r.w.is_worst_lag_seconds_bounded else ""
        lines.append(
            f"  {r.cluster} {r.topic}@{r.consumer_group}: {bound}{r.w.worst_lag_seconds:,.0f} s "
            f"behind at {r.w.observed_at:%Y-%m-%d %H:%M:%S}"
        )
    return lines


def _rate_lines(lake: Lake, interval: ReplayInterval) -> list[str]:
    windows = lake.read(CONSUME_THROUGHPUT, start=interval.replayed_from, end=interval.replayed_to)
    totals = (
        windows.groupBy("cluster", "topic", "consumer_group")
        .agg(F.sum("messages_produced").alias("produced"), F.sum("messages_consumed").alias("consumed"))
        .where(F.col("produced").isNotNull())
        .orderBy((F.col("produced") - F.col("consumed")).desc(), "cluster", "topic", "consumer_group")
        .limit(_SHOWN)
        .collect()
    )
    lines = ["Produced against consumed in the interval (least kept up first):" if totals else ""]
    for r in totals:
        lines.append(
            f"  {r.cluster} {r.topic}@{r.consumer_group}: {r.produced:,} produced, {r.consumed:,} consumed"
        )
    return [line for line in lines if line]


def _status_lines(lake: Lake, interval: ReplayInterval) -> list[str]:
    status = lake.read(CONSUMER_STATUS, start=interval.replayed_from, end=interval.replayed_to)
    counts = {r.status: r.n for r in status.groupBy("status").agg(F.count(F.lit(1)).alias("n")).collect()}
    if not counts:
        return []
    lines = ["Consumer status windows: " + ", ".join(f"{s} {n:,}" for s, n in sorted(counts.items()))]
    for r in (
        status.where(F.col("status") != "OK")
        .orderBy("window_start", "cluster", "topic", "consumer_group")
        .limit(_SHOWN)
        .collect()
    ):
        lines.append(
            f"  {r.window_start:%Y-%m-%d %H:%M} {r.cluster} {r.topic}@{r.consumer_group}: {r.status}, {r.status_reason}"
        )
    return lines


def _membership_lines(lake: Lake, interval: ReplayInterval) -> list[str]:
    """Who was in each group (mqadmin consumerConnection outputs of the interval), and how it consumed."""
    outputs = lake.read(GROUP_CONNECTIONS, start=interval.replayed_from, end=interval.replayed_to)
    groups = (
        outputs.groupBy("cluster", "consumer_group")
        .agg(
            F.countDistinct("observed_at").alias("outputs"),
            F.countDistinct("client_id").alias("clients"),
            F.sum(F.col("is_online").cast("int")).alias("online_rows"),
            F.max("consume_type").alias("consume_type"),
        )
        .orderBy("cluster", "consumer_group")
        .collect()
    )
    if not groups:
        return []
    pull = [g for g in groups if g.consume_type == PULL]
    lines = [
        f"Group membership (consumerConnection): {len(groups)} groups, {sum(g.clients for g in groups):,} client "
        f"instances seen, {len(pull)} consuming by pull (their backward commits are seeks)"
    ]
    for g in [*pull, *(g for g in groups if not g.online_rows)][:_SHOWN]:
        how = "pull" if g.consume_type == PULL else "never online"
        lines.append(f"  {g.cluster} {g.consumer_group}: {how}, {g.clients} clients over {g.outputs} outputs")
    return lines


def answer_lines(lake: Lake, interval: ReplayInterval | None) -> list[str]:
    """What the gold answers say about ``interval`` (nothing before the marts were built)."""
    if interval is None or not all(
        lake.exists(t) for t in (CONSUMER_LAG_BY_GROUP, CONSUME_THROUGHPUT, CONSUMER_STATUS)
    ):
        return []
    return [
        *_oldest_lag_lines(lake, interval),
        *_rate_lines(lake, interval),
        *_status_lines(lake, interval),
        *_membership_lines(lake, interval),
    ]
