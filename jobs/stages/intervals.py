"""Which interval a run replays, and what the lake records of earlier replays and checkpoints.

Exactness across runs rests on checkpoints: each replay ends by storing every queue's
state as of its interval's end (silver/replay_checkpoints), and the next replay starts
from the checkpoint at its own start. A run without ``--from`` starts where the last
*published* run ended (ops/publish_runs), never where a replay alone ended: a run that a
crash stopped after its replay, before its publish, is replayed and published again. The
interval actually replayed can be wider than the one asked for:

- no checkpoint at the requested start: replay from the latest checkpoint before it (or
  from the beginning), re-deriving the rows in between, which comes out identical;
- late data (ingested files that no replay a publish followed has seen, whichever run
  ingested them, whose events precede the start, or precede a checkpoint already stored: a run
  asked for an earlier interval, landing a file whose events go on past it): replay from the
  latest checkpoint at or before the earliest of the interval's start and the earliest late
  event, through every checkpoint after it (each one's state, and the rows after it, may
  change with the late events). See jobs.stages.replay._ingest_bounds.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, StageOrderError
from pipelines.marts.exposure import DAY
from pipelines.marts.windows import window_end, window_start
from schemas.config import Settings
from schemas.instants import EPOCH, from_collected
from schemas.tables import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG,
    CONSUMER_LAG_BY_GROUP,
    CONSUMER_STATUS,
    DUPLICATE_EXPOSURE,
    INGEST_RUNS,
    PRODUCE_THROUGHPUT,
    PUBLISH_RUNS,
    REPLAY_CHECKPOINTS,
    REPLAY_RUNS,
    TableSpec,
)

# Delta timestamps are microseconds: the smallest step between two instants.
TICK = timedelta(microseconds=1)


def plan_interval(
    requested_from: datetime | None,
    requested_to: datetime | None,
    checkpoints: list[datetime],
    published_until: datetime | None,
    earliest_new_event: datetime | None,
    latest_event: datetime | None,
) -> ReplayInterval:
    """Decide the interval to replay (pure; see the module docstring).

    Without ``requested_from`` the run continues from where the last published run ended
    (``published_until``; from the beginning when nothing was published); without
    ``requested_to`` it runs through the latest event landed.
    """
    start = requested_from if requested_from is not None else (published_until or EPOCH)
    end = (
        requested_to if requested_to is not None else (latest_event + TICK if latest_event else start + TICK)
    )
    end = max(end, start + TICK)
    late = earliest_new_event is not None and (
        earliest_new_event < start or any(c > earliest_new_event for c in checkpoints)
    )
    anchor = min(start, earliest_new_event) if late else start
    replayed_from = latest_at_or_before(checkpoints, anchor)
    replayed_to = max([end, *[c for c in checkpoints if late and c > end]])
    return ReplayInterval(requested_from, requested_to, replayed_from, replayed_to)


def latest_at_or_before(checkpoints: list[datetime], at: datetime) -> datetime:
    """The latest of the ascending ``checkpoints`` at or before ``at``; EPOCH when none is (a
    replay from the beginning)."""
    usable = [c for c in checkpoints if c <= at]
    return usable[-1] if usable else EPOCH


def seed_of(lake: Lake, start: datetime) -> datetime:
    """The checkpoint a computation of the rows from ``start`` on starts from: the one at
    ``start`` (the replay before stored it at its end), or, where a wider replay (late files)
    has since replaced it by its own at its end, the latest before it, which the stored-offset
    timeline since brings to ``start``. The checkpoint at ``start`` is looked for first, through
    ``row_count``: on the embedded engine the Delta log's statistics leave out every file that
    cannot hold it and only the one that can is counted; every checkpoint's time is read only
    when it is not there."""
    if start == EPOCH or lake.row_count(REPLAY_CHECKPOINTS, start=start, end=start + TICK):
        return start
    return latest_at_or_before(checkpoint_times(lake), start)


def checkpoint_times(lake: Lake) -> list[datetime]:
    """The as_of of every stored checkpoint, ascending (one small aggregate)."""
    times = lake.read(REPLAY_CHECKPOINTS).select("as_of").distinct().collect()
    return sorted(from_collected(r.as_of) for r in times)


def published_until(lake: Lake) -> datetime | None:
    """The end of the latest interval whose gold rows were published (None: nothing was)."""
    row = lake.read(PUBLISH_RUNS).agg(F.max("interval_end").alias("until")).collect()[0]
    return from_collected(row.until)


def checkpoint_at(lake: Lake, as_of: datetime) -> DataFrame:
    """Every queue's replay state stored as of ``as_of`` (none from EPOCH), without ``as_of``."""
    if as_of == EPOCH:
        return lake.spark.createDataFrame([], REPLAY_CHECKPOINTS.schema).drop("as_of")
    return lake.read(REPLAY_CHECKPOINTS).where(F.col("as_of") == F.lit(as_of)).drop("as_of")


def first_event_at(lake: Lake) -> datetime | None:
    """The earliest event any ingested file holds (one small aggregate of ops/ingest_runs)."""
    ingested = lake.read(INGEST_RUNS).where(F.col("status") == "ingested")
    return from_collected(ingested.agg(F.min("event_min_at").alias("at")).collect()[0].at)


def with_first_event(lake: Lake, interval: ReplayInterval) -> ReplayInterval:
    """``interval`` knowing the first event read, when it replays from the beginning (its span)."""
    if interval.replayed_from != EPOCH:
        return interval
    return replace(interval, first_event_at=first_event_at(lake))


def last_replay(lake: Lake, run_id: str) -> ReplayInterval | None:
    """The interval the replay of ``run_id`` covered (the marts, audit and publish stages follow it)."""
    rows = lake.read(REPLAY_RUNS).where(F.col("run_id") == run_id).collect()
    if not rows:
        return None
    r = rows[0]
    interval = ReplayInterval(
        from_collected(r.requested_from),
        from_collected(r.requested_to),
        from_collected(r.replayed_from),
        from_collected(r.replayed_to),
        replayed_at=from_collected(r.finished_at),
    )
    return with_first_event(lake, interval)


def replayed_interval(lake: Lake, run_id: str) -> ReplayInterval:
    """:func:`last_replay` of ``run_id``; a StageOrderError when the replay has not run."""
    interval = last_replay(lake, run_id)
    if interval is None:
        raise StageOrderError(
            f"no replay recorded for run {run_id}: run the replay stage first (same --run-id)"
        )
    return interval


def gold_ranges(interval: ReplayInterval, settings: Settings) -> dict[TableSpec, tuple[datetime, datetime]]:
    """The event-time range of each gold table that a run over ``interval`` computes and rewrites:
    the interval, and for the windowed marts (throughput, status, duplicate exposure) every window
    (status window, UTC day) it touches, whole: from the start of the window holding its start to
    the end of the one holding its end. A window is computed from every silver row the lake holds
    in it, so a run of an earlier interval leaves a window that later runs completed as they left
    it, instead of cutting it at its own end."""
    start, end = interval.replayed_from, interval.replayed_to

    def windows(length: timedelta) -> tuple[datetime, datetime]:
        return window_start(start, length), window_end(end, length)

    throughput_window = settings.replay.throughput_window
    return {
        CONSUMER_LAG: (start, end),
        CONSUMER_LAG_BY_GROUP: (start, end),
        PRODUCE_THROUGHPUT: windows(throughput_window),
        CONSUME_THROUGHPUT: windows(throughput_window),
        CONSUMER_STATUS: windows(settings.status.window),
        DUPLICATE_EXPOSURE: windows(DAY),
    }
