"""Marts stage: the gold rows of the replayed interval, into the staging lake (write-audit-publish).

The gold rows are written to ``<lake>/_staging``; the audit stage checks them there and the
publish stage (jobs.stages.publish) copies them into the lake. Until the audit passes,
analysts keep seeing the previous gold tables.
"""

from __future__ import annotations

from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.runtime.concurrent import side_by_side
from jobs.stages.context import ReplayInterval, RunContext
from jobs.stages.intervals import checkpoint_at, gold_ranges, replayed_interval, seed_of
from jobs.stages.shuffles import size_shuffles
from jobs.stages.staged import staged_by, staging_begins
from pipelines.marts.exposure import duplicate_exposure
from pipelines.marts.lag import (
    broker_offset_observations,
    consumer_lag,
    consumer_lag_by_group,
    max_offset_points,
    with_lag_seconds,
)
from pipelines.marts.status import consumer_status
from pipelines.marts.throughput import consume_throughput, produce_throughput
from schemas.config import Settings
from schemas.tables import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG,
    CONSUMER_LAG_BY_GROUP,
    CONSUMER_STATUS,
    DUPLICATE_EXPOSURE,
    OFFSET_REGRESSIONS,
    PRODUCE_THROUGHPUT,
    QUEUE_KEY,
    QUEUE_OFFSETS,
    STORED_OFFSET_TIMELINE,
    TableSpec,
)


def run(context: RunContext) -> None:
    """The stage's entry (see jobs.stages.runner)."""
    context.interval = build_marts(context.lake, context.settings, context.run_id)


def _known_queues(lake: Lake, timeline: DataFrame, seed: DataFrame, end: datetime) -> DataFrame:
    """Every queue the replay knows of by ``end``: those its checkpoint at ``end`` names (the
    seed's and the interval's, one row each), or, where a later replay has since replaced that
    checkpoint, the queues of the timeline and the seed (a scan of every timeline row)."""
    at_end = checkpoint_at(lake, end).select(*QUEUE_KEY)
    if at_end.limit(1).count():
        return at_end
    return timeline.select(*QUEUE_KEY).unionByName(seed.select(*QUEUE_KEY)).distinct()


def build_marts(lake: Lake, settings: Settings, run_id: str) -> ReplayInterval:
    """Compute the gold rows of the run's replayed interval into the staging lake."""
    interval = replayed_interval(lake, run_id)
    size_shuffles(lake, settings.spark, interval.replayed_from, interval.replayed_to)
    ranges = gold_ranges(interval, settings)
    staging = lake.staging()
    staging_begins(staging)
    day_from, end = ranges[DUPLICATE_EXPOSURE]

    def lag_and_status() -> None:
        _lag(lake, staging, settings, interval.replayed_from, interval.replayed_to)
        _status(lake, staging, settings, *ranges[CONSUMER_STATUS], ranges[CONSUMER_LAG])

    def exposure() -> None:
        staging.overwrite(
            DUPLICATE_EXPOSURE, duplicate_exposure(lake.read(OFFSET_REGRESSIONS, start=day_from, end=end))
        )

    side_by_side(
        lag_and_status, lambda: _throughput(lake, staging, settings, *ranges[CONSUME_THROUGHPUT]), exposure
    )
    staged_by(staging, run_id, interval)
    return interval


def _lag(lake: Lake, staging: Lake, settings: Settings, start: datetime, end: datetime) -> None:
    """gold/consumer_lag (in messages and seconds) and its roll-up per group, for ``[start, end)``."""
    # the state at the start: a wider replay since this run's may have replaced its checkpoint
    seeded_at = seed_of(lake, start)
    timeline = lake.read(STORED_OFFSET_TIMELINE, start=seeded_at, end=end)
    seed = checkpoint_at(lake, seeded_at)
    known = _known_queues(lake, timeline, seed, end)
    observations = broker_offset_observations(lake.read(QUEUE_OFFSETS, start=start, end=end), known)
    # the lag reads the observations three times (its queue dictionary, the as-of pass, the
    # join back), and each read would read the admin-tool rows again (and, where the checkpoint
    # at the end is gone, scan the timeline for the known queues): compute them once (a row
    # per queue and observation: small beside the timeline)
    observations.persist(StorageLevel.MEMORY_AND_DISK)
    # the lag's rows are read twice more (the queues the lag in seconds numbers, the rows it adds to)
    lag = consumer_lag(observations, timeline, seed).persist(StorageLevel.MEMORY_AND_DISK)
    history = settings.replay.lag_history
    points = max_offset_points(lake.read(QUEUE_OFFSETS, start=start - history, end=end))
    try:
        staging.overwrite(CONSUMER_LAG, with_lag_seconds(lag, points, history))
    finally:
        lag.unpersist()
        observations.unpersist()
    staging.overwrite(CONSUMER_LAG_BY_GROUP, consumer_lag_by_group(staging.read(CONSUMER_LAG)))


def _throughput(lake: Lake, staging: Lake, settings: Settings, start: datetime, end: datetime) -> None:
    """gold/produce_throughput and gold/consume_throughput of the whole windows of ``[start, end)``."""
    window, history = settings.replay.throughput_window, settings.replay.lag_history
    # each window's first increment pairs with the observation before it, up to the history back
    points = max_offset_points(lake.read(QUEUE_OFFSETS, start=start - history, end=end))
    staging.overwrite(
        PRODUCE_THROUGHPUT,
        produce_throughput(points, window, history).where(F.col("window_start") >= F.lit(start)),
    )
    timeline = lake.read(STORED_OFFSET_TIMELINE, start=start, end=end)
    staging.overwrite(
        CONSUME_THROUGHPUT, consume_throughput(timeline, window, staging.read(PRODUCE_THROUGHPUT))
    )


def _gold(
    lake: Lake,
    staging: Lake,
    spec: TableSpec,
    start: datetime,
    end: datetime,
    staged: tuple[datetime, datetime],
) -> DataFrame:
    """``spec``'s rows of ``[start, end)``: this run's, staged for ``staged``, and the published
    before and after them (a later interval's, where this run is of an earlier one)."""
    staged_from, staged_to = staged
    published = lake.read(spec, start=start, end=staged_from).unionByName(
        lake.read(spec, start=staged_to, end=end)
    )
    return published.unionByName(staging.read(spec))


def _status(
    lake: Lake,
    staging: Lake,
    settings: Settings,
    start: datetime,
    end: datetime,
    staged: tuple[datetime, datetime],
) -> None:
    """gold/consumer_status of the whole status windows of ``[start, end)`` (the lag tables are
    staged for ``staged``, the interval)."""
    status = consumer_status(
        _gold(lake, staging, CONSUMER_LAG_BY_GROUP, start, end, staged),
        _gold(lake, staging, CONSUMER_LAG, start, end, staged),
        lake.read(STORED_OFFSET_TIMELINE, start=start, end=end),
        lake.read(OFFSET_REGRESSIONS, start=start, end=end),
        settings.status,
    )
    staging.overwrite(CONSUMER_STATUS, status)
