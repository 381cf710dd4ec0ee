"""Replay stage: bronze evidence of an interval -> silver replayed commits, timeline, regressions.

Exactness across runs rests on checkpoints: each replay ends by storing every queue's
state as of its interval's end (silver/replay_checkpoints), and the next replay starts
from the checkpoint at its own start. The interval actually replayed can be wider than
the one asked for:

- no checkpoint at the requested start: replay from the latest checkpoint before it (or
  from the beginning), re-deriving the rows in between, which comes out identical;
- late data (files ingested by this run whose events precede the start): replay from the
  latest checkpoint before the earliest late event, through every interval already processed.

Silver rows of the replayed interval are replaced (Delta replaceWhere), so re-running an
interval leaves the tables as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import partial

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.ingest_sources import COMMIT_KINDS, LOG_TOLD_KINDS, SNAPSHOT_KINDS
from jobs.lake import Lake
from jobs.replay_landing import ReplayLanding
from pipelines.explain import LOOKBACK_SECONDS, SLACK_SECONDS, explain_regressions
from pipelines.replay import EventIds
from pipelines.replay_kernel import Names
from pipelines.replay_outputs import replay
from schemas.config import Settings
from schemas.tables import (
    INGEST_RUNS,
    OFFSET_COMMITS,
    OFFSET_COMMITS_REPLAYED,
    OFFSET_REGRESSIONS,
    OFFSET_RESETS,
    OFFSET_SNAPSHOTS,
    REPLAY_CHECKPOINTS,
    REPLAY_RUNS,
    STORED_OFFSET_TIMELINE,
)

# Start of time for a replay with no checkpoint before it.
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TICK = timedelta(microseconds=1)


@dataclass(frozen=True)
class ReplayWindow:
    requested_from: datetime | None
    requested_to: datetime | None
    replayed_from: datetime  # EPOCH: from the beginning, with no checkpoint
    replayed_to: datetime


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def checkpoint_times(lake: Lake) -> list[datetime]:
    """The as_of of every stored checkpoint, ascending (one small aggregate)."""
    times = lake.read(REPLAY_CHECKPOINTS).select("as_of").distinct().collect()
    return sorted(_aware(r.as_of) for r in times)


def _ingest_bounds(lake: Lake, run_id: str) -> tuple[datetime | None, datetime | None, datetime | None]:
    """(earliest event ingested by this run, latest event ingested by any run, latest by this run)."""
    runs = lake.read(INGEST_RUNS).where(F.col("status") == "ingested")
    mine = F.col("run_id") == run_id
    row = runs.agg(
        F.min(F.when(mine, F.col("event_min_at"))).alias("late"),
        F.max("event_max_at").alias("latest"),
        F.max(F.when(mine, F.col("event_max_at"))).alias("mine_latest"),
    ).collect()[0]
    return _aware(row.late), _aware(row.latest), _aware(row.mine_latest)


def plan_window(
    requested_from: datetime | None,
    requested_to: datetime | None,
    checkpoints: list[datetime],
    earliest_new_event: datetime | None,
    latest_event: datetime | None,
) -> ReplayWindow:
    """Decide the interval to replay (pure; see the module docstring).

    Without ``requested_from`` the run continues from the latest checkpoint; without
    ``requested_to`` it runs through the latest event landed.
    """
    start = requested_from if requested_from is not None else (checkpoints[-1] if checkpoints else EPOCH)
    end = requested_to if requested_to is not None else (latest_event + _TICK if latest_event else start + _TICK)
    end = max(end, start + _TICK)
    late = earliest_new_event is not None and earliest_new_event < start
    anchor = min(start, earliest_new_event) if late else start
    usable = [c for c in checkpoints if c <= anchor]
    replayed_from = usable[-1] if usable else EPOCH
    replayed_to = max([end, *[c for c in checkpoints if late and c > end]])
    return ReplayWindow(requested_from, requested_to, replayed_from, replayed_to)


def _evidence_files(lake: Lake, start: datetime, end: datetime) -> DataFrame:
    """ops/ingest_runs' rows of the ingested files that land commits or snapshots and whose
    landed events overlap ``[start, end)``: every file the interval's events can come from
    (the accounting records each file's range of event times)."""
    return lake.read(INGEST_RUNS).where(
        (F.col("status") == "ingested")
        & F.col("source_kind").isin(*COMMIT_KINDS, *SNAPSHOT_KINDS)
        & (F.col("event_max_at") >= F.lit(start))
        & (F.col("event_min_at") < F.lit(end))
    )


def _logged_at_most(files: DataFrame) -> int:
    """At most how many log-told commits ``files`` (see _evidence_files) landed: the records
    of their log files (a broker log's resets count too). It chooses how the replay meets them
    (see ReplaySettings.broadcast_logged_commits), not what it finds: no commit is scanned for it."""
    logs = files.where(F.col("source_kind").isin(*LOG_TOLD_KINDS))
    return logs.agg(F.coalesce(F.sum("records_landed"), F.lit(0)).alias("n")).collect()[0].n


def _file_names(files: DataFrame) -> DataFrame:
    """The names (FILE_KEY) the replay's events give ``files``: a snapshot event names its file
    by path alone (pipelines.replay.build_events)."""
    is_snapshot = F.col("source_kind").isin(*SNAPSHOT_KINDS)
    return files.select("source_file", F.when(~is_snapshot, F.col("_file_hash")).alias("_file_hash"))


def checkpoint_at(lake: Lake, as_of: datetime) -> DataFrame:
    """Every queue's replay state stored as of ``as_of`` (none from EPOCH), without ``as_of``."""
    if as_of == EPOCH:
        return lake.spark.createDataFrame([], REPLAY_CHECKPOINTS.schema).drop("as_of")
    return lake.read(REPLAY_CHECKPOINTS).where(F.col("as_of") == F.lit(as_of)).drop("as_of")


def run_replay(lake: Lake, settings: Settings, requested_from: datetime | None, requested_to: datetime | None, run_id: str) -> ReplayWindow:
    """Replay the interval and write the silver tables and the next checkpoint."""
    late, latest, _ = _ingest_bounds(lake, run_id)
    window = plan_window(requested_from, requested_to, checkpoint_times(lake), late, latest)
    start, end = window.replayed_from, window.replayed_to
    # the landed files come from the ingest's accounting, not from a scan of every event
    files = _evidence_files(lake, start, end)
    # on the embedded lake the replay's workers write the two tables with a row per event
    commits_dir = lake.files_dir(OFFSET_COMMITS_REPLAYED, f"replay-{run_id}")
    timeline_dir = lake.files_dir(STORED_OFFSET_TIMELINE, f"replay-{run_id}")
    landing = None if commits_dir is None or timeline_dir is None else partial(_landing, commits_dir, timeline_dir)
    result = replay(
        lake.read(OFFSET_COMMITS, start=start, end=end),
        lake.read(OFFSET_SNAPSHOTS, start=start, end=end),
        checkpoint_at(lake, start),
        broadcast_logged=_logged_at_most(files) <= settings.replay.broadcast_logged_commits,
        files=_file_names(files),
        kernel_for=landing,
    )
    # the silver tables Spark writes derive from the replayed state and its id dictionaries:
    # compute them once (Spark substitutes the cached rows wherever their plans recur)
    for frame in result.shared:
        if not frame.is_cached:  # the workers' dictionaries are already (see _landing)
            frame.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if landing is None:
            lake.replace_range(OFFSET_COMMITS_REPLAYED, result.commits, start, end)
            lake.replace_range(STORED_OFFSET_TIMELINE, result.timeline, start, end)
        else:
            result.state.count()  # the replay: its workers write the two tables' files
            lake.replace_range(OFFSET_COMMITS_REPLAYED, None, start, end, files=commits_dir)
            lake.replace_range(STORED_OFFSET_TIMELINE, None, start, end, files=timeline_dir)
        resets = lake.read(OFFSET_RESETS, start=start - timedelta(seconds=LOOKBACK_SECONDS), end=end + timedelta(seconds=SLACK_SECONDS + 1))
        lake.replace_range(OFFSET_REGRESSIONS, explain_regressions(result.regressions, resets), start, end)
        # the new checkpoint supersedes any taken inside the replayed interval
        lake.replace_range(REPLAY_CHECKPOINTS, result.checkpoint.withColumn("as_of", F.lit(end)), start + _TICK, end + _TICK)
    finally:
        for frame in result.shared:
            frame.unpersist()
    _prune_checkpoints(lake, settings.replay.checkpoints_kept)
    _record(lake, run_id, window)
    return window


def _landing(commits_dir: str, timeline_dir: str, ids: EventIds) -> ReplayLanding:
    """The kernel that writes the replay's two tables into those directories (its workers
    give the rows their text back from the id dictionaries, cached here and collected)."""
    for dictionary in (ids.queues, ids.files):
        dictionary.persist(StorageLevel.MEMORY_AND_DISK)
    return ReplayLanding(commits_dir, timeline_dir, Names(ids.queues.toArrow(), ids.files.toArrow()))


def _prune_checkpoints(lake: Lake, kept: int) -> None:
    times = checkpoint_times(lake)
    if len(times) > kept:
        empty = lake.spark.createDataFrame([], REPLAY_CHECKPOINTS.schema)
        lake.replace_range(REPLAY_CHECKPOINTS, empty, EPOCH, times[-kept])


def _record(lake: Lake, run_id: str, window: ReplayWindow) -> None:
    start, end = window.replayed_from, window.replayed_to
    commits = lake.row_count(OFFSET_COMMITS_REPLAYED, start=start, end=end)
    regressions = lake.row_count(OFFSET_REGRESSIONS, start=start, end=end)
    row = [(run_id, window.requested_from, window.requested_to, start, end, commits, regressions, datetime.now(timezone.utc))]
    lake.merge(REPLAY_RUNS, lake.spark.createDataFrame(row, REPLAY_RUNS.schema))


def last_replay(lake: Lake, run_id: str) -> ReplayWindow | None:
    """The window the replay of ``run_id`` used (the marts and publish stages follow it)."""
    rows = lake.read(REPLAY_RUNS).where(F.col("run_id") == run_id).collect()
    if not rows:
        return None
    r = rows[0]
    return ReplayWindow(_aware(r.requested_from), _aware(r.requested_to), _aware(r.replayed_from), _aware(r.replayed_to))
