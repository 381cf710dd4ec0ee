"""Marts and publish stages: write-audit-publish for the gold tables.

``build_marts`` computes the gold rows of the interval the replay covered and writes them
to the staging lake (``<lake>/_staging``); the audit stage checks them there;
``publish`` then replaces that interval of each gold table with the staged rows. Until
the audit passes, analysts keep seeing the previous gold tables.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from jobs.lake import Lake
from jobs.replay_stage import ReplayWindow, checkpoint_at, last_replay
from pipelines.marts import (
    broker_offset_observations,
    consume_throughput,
    consumer_lag,
    consumer_lag_by_group,
)
from pipelines.replay import QUEUE_KEY
from schemas.config import Settings
from schemas.tables import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG,
    CONSUMER_LAG_BY_GROUP,
    GOLD_TABLES,
    QUEUE_OFFSETS,
    STORED_OFFSET_TIMELINE,
)


class StageOrderError(RuntimeError):
    """A stage ran before the one it depends on."""


def window_floor(moment: datetime, window: timedelta) -> datetime:
    """Start of the epoch-aligned tumbling window holding ``moment``."""
    seconds = int(window.total_seconds())
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, tz=timezone.utc)


def gold_ranges(window: ReplayWindow, settings: Settings) -> dict[str, tuple[datetime, datetime]]:
    """The event-time range of each gold table that a run with this replay window rewrites."""
    start, end = window.replayed_from, window.replayed_to
    return {
        CONSUMER_LAG.name: (start, end),
        CONSUMER_LAG_BY_GROUP.name: (start, end),
        CONSUME_THROUGHPUT.name: (window_floor(start, settings.replay.throughput_window), end),
    }


def _window(lake: Lake, run_id: str) -> ReplayWindow:
    window = last_replay(lake, run_id)
    if window is None:
        raise StageOrderError(f"no replay recorded for run {run_id}: run the replay stage first (same --run-id)")
    return window


def _known_queues(lake: Lake, timeline: DataFrame, seed: DataFrame, end: datetime) -> DataFrame:
    """Every queue the replay knows of by ``end``: those its checkpoint at ``end`` names (the
    seed's and the interval's, one row each), or, where a later replay has since replaced that
    checkpoint, the queues of the timeline and the seed (a scan of every timeline row)."""
    at_end = checkpoint_at(lake, end).select(*QUEUE_KEY)
    if at_end.limit(1).count():
        return at_end
    return timeline.select(*QUEUE_KEY).unionByName(seed.select(*QUEUE_KEY)).distinct()


def build_marts(lake: Lake, settings: Settings, run_id: str) -> ReplayWindow:
    """Compute the gold rows of the run's replay window into the staging lake."""
    window = _window(lake, run_id)
    ranges = gold_ranges(window, settings)
    start, end = window.replayed_from, window.replayed_to
    timeline = lake.read(STORED_OFFSET_TIMELINE, start=start, end=end)
    seed = checkpoint_at(lake, start)
    known = _known_queues(lake, timeline, seed, end)
    observations = broker_offset_observations(lake.read(QUEUE_OFFSETS, start=start, end=end), known)

    staging = lake.staging()
    # the lag reads the observations three times (its queue dictionary, the window, the join
    # back), and each read would read the admin-tool rows again (and, where the checkpoint at
    # the end is gone, scan the timeline for the known queues): compute them once (a row per
    # queue and observation, 144,144 at 10M events: small beside the timeline)
    observations.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        staging.overwrite(CONSUMER_LAG, consumer_lag(observations, timeline, seed))
    finally:
        observations.unpersist()
    staging.overwrite(CONSUMER_LAG_BY_GROUP, consumer_lag_by_group(staging.read(CONSUMER_LAG)))
    throughput_from, _ = ranges[CONSUME_THROUGHPUT.name]
    staging.overwrite(
        CONSUME_THROUGHPUT,
        consume_throughput(lake.read(STORED_OFFSET_TIMELINE, start=throughput_from, end=end), settings.replay.throughput_window),
    )
    return window


def publish(lake: Lake, settings: Settings, run_id: str) -> dict[str, int]:
    """Replace each gold table's range with its staged rows; rows published per table."""
    window = _window(lake, run_id)
    ranges = gold_ranges(window, settings)
    staging = lake.staging()
    published = {}
    for spec in GOLD_TABLES:
        if not staging.exists(spec):
            raise StageOrderError(f"nothing staged for {spec.path}: run the marts stage first (same --run-id)")
        staged = staging.read(spec)
        start, end = ranges[spec.name]
        lake.replace_range(spec, staged, start, end)
        published[spec.path] = staged.count()
    return published

