"""Marts stage: the gold rows of the replayed interval, into the staging lake (write-audit-publish).

The gold rows are written to ``<lake>/_staging``; the audit stage checks them there and the
publish stage (jobs.stages.publish) copies them into the lake. Until the audit passes,
analysts keep seeing the previous gold tables.
"""

from __future__ import annotations

from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, RunContext
from jobs.stages.intervals import checkpoint_at, gold_ranges, replayed_interval
from pipelines.marts.exposure import duplicate_exposure
from pipelines.marts.lag import broker_offset_observations, consumer_lag, consumer_lag_by_group
from pipelines.marts.throughput import consume_throughput
from schemas.config import Settings
from schemas.tables import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG,
    CONSUMER_LAG_BY_GROUP,
    DUPLICATE_EXPOSURE,
    OFFSET_REGRESSIONS,
    QUEUE_KEY,
    QUEUE_OFFSETS,
    STORED_OFFSET_TIMELINE,
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
    window = settings.replay.throughput_window
    start, end = interval.replayed_from, interval.replayed_to
    timeline = lake.read(STORED_OFFSET_TIMELINE, start=start, end=end)
    seed = checkpoint_at(lake, start)
    known = _known_queues(lake, timeline, seed, end)
    observations = broker_offset_observations(lake.read(QUEUE_OFFSETS, start=start, end=end), known)

    staging = lake.staging()
    # the lag reads the observations three times (its queue dictionary, the as-of pass, the
    # join back), and each read would read the admin-tool rows again (and, where the checkpoint
    # at the end is gone, scan the timeline for the known queues): compute them once (a row
    # per queue and observation: small beside the timeline)
    observations.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        staging.overwrite(CONSUMER_LAG, consumer_lag(observations, timeline, seed))
    finally:
        observations.unpersist()
    staging.overwrite(CONSUMER_LAG_BY_GROUP, consumer_lag_by_group(staging.read(CONSUMER_LAG)))
    ranges = gold_ranges(interval, window)
    throughput_from, _ = ranges[CONSUME_THROUGHPUT]
    staging.overwrite(
        CONSUME_THROUGHPUT,
        consume_throughput(lake.read(STORED_OFFSET_TIMELINE, start=throughput_from, end=end), window),
    )
    day_from, _ = ranges[DUPLICATE_EXPOSURE]
    staging.overwrite(
        DUPLICATE_EXPOSURE, duplicate_exposure(lake.read(OFFSET_REGRESSIONS, start=day_from, end=end))
    )
    return interval
