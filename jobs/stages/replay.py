"""Replay stage: bronze evidence of an interval -> silver replayed commits, timeline, regressions.

The interval is planned by :mod:`jobs.stages.intervals` (continuing from a checkpoint, widened
for late data). Silver rows of the replayed interval are replaced (Delta replaceWhere), so
re-running an interval leaves the tables as they were.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from jobs.io.engines import VersionUnavailable
from jobs.io.lake import Lake, rows_in_delta_logs
from jobs.io.replay_writer import ReplayWriter
from jobs.runtime.concurrent import side_by_side
from jobs.sources import LOGGED_COMMITS, REPLAYED_EVIDENCE, SNAPSHOTS, kinds
from jobs.sources.client_offsets import SOURCE as CLIENT_OFFSETS
from jobs.stages.context import ReplayInterval, RunContext
from jobs.stages.intervals import (
    TICK,
    checkpoint_at,
    checkpoint_times,
    plan_interval,
    published_until,
    with_first_event,
)
from jobs.stages.shuffles import size_shuffles
from pipelines.ingest.client_offsets import client_directory, is_bak
from pipelines.replay import replay
from pipelines.replay.events import REREAD_KEY, replayed_snapshots, without_reread_lines
from pipelines.replay.explain import (
    CONNECTION_MAX_AGE_SECONDS,
    LOOKBACK_SECONDS,
    MIN_OFFSET_MAX_AGE_SECONDS,
    SLACK_SECONDS,
    with_causes,
)
from schemas.config import Settings
from schemas.instants import EPOCH, from_collected
from schemas.tables import (
    GROUP_CONNECTIONS,
    INGEST_RUNS,
    OFFSET_COMMITS,
    OFFSET_COMMITS_REPLAYED,
    OFFSET_REGRESSIONS,
    OFFSET_RESETS,
    OFFSET_SNAPSHOTS,
    PUBLISH_RUNS,
    QUEUE_KEY,
    QUEUE_OFFSETS,
    REPLAY_CHECKPOINTS,
    REPLAY_RUNS,
    SNAPSHOT_FILES,
    STORED_OFFSET_TIMELINE,
)

log = logging.getLogger(__name__)


def run(context: RunContext) -> None:
    """The stage's entry (see jobs.stages.runner)."""
    context.interval = run_replay(context.lake, context.settings, context.start, context.end, context.run_id)


# What a replay of an interval takes from the lake: it reads the events of the bronze files that
# overlap it, and its replace rewrites the silver files that straddle its edges (both tables of a
# row per event; the files wholly inside it are dropped unread).
READS = (OFFSET_COMMITS, OFFSET_SNAPSHOTS)
REWRITES = (OFFSET_COMMITS_REPLAYED, STORED_OFFSET_TIMELINE)


def rows_taken(lake_root: Path | str, start: datetime, end: datetime) -> int | None:
    """How many rows a replay of ``[start, end)`` takes from the lake at ``lake_root``, as its Delta
    logs tell before any Spark session starts (None where they cannot: jobs.io.lake.rows_in_delta_logs).
    It chooses how the session's JVM compiles (jobs.runtime.session.quick_start), not what is
    replayed. It counts the interval asked for; the replay's planned interval may be wider (a
    checkpoint before it, late files)."""
    return rows_in_delta_logs(lake_root, READS, start, end, rewrites=REWRITES)


# An ingest stamps a file's ingested_at moments before its row commits: a row stamped this long
# before a replay began planning had committed by then, unless an ingest's host clock was behind
# the replay's by about as much. Only later rows are looked up in the version the replay read.
COMMITTED_WITHIN = timedelta(days=1)
# planned_version of a replay that began planning before ops/ingest_runs existed: it saw no file
NO_VERSION = -1


def _ingest_bounds(lake: Lake) -> tuple[datetime | None, datetime | None]:
    """(earliest event of the ingested files that no published replay has seen, latest event
    ingested by any run).

    A replay whose publish followed it saw every file ingested as of the version of
    ops/ingest_runs it began planning from (``planned_version``), by any run: it widened the
    interval for those that were late, and its marts and publish covered the widened interval
    (jobs.stages.staged). A file not in that version was seen by none, whichever run ingested it:
    a hand run that stopped before its replay leaves its files to the next run, with any id, and
    so does an ingest that committed while a replay planned (a lake given as a URI, which no lock
    keeps to one run at a time). Files seen are not counted again, or a run cleared and run again
    days later would replay through every checkpoint since (jobs.stages.intervals.plan_interval).

    A publish names the replay it published (``replayed_at``), so no two hosts' clocks are
    compared for it. Rows stamped more than COMMITTED_WITHIN before that replay began count as
    seen; only the later ones are looked up in its version. When maintenance has cleaned that
    version up, every later one counts as unseen (a wider replay, nothing lost). Rows written
    before these columns fall back to the times: a publish at or after the replay's finish,
    files ingested before the replay's ``planned_at`` (else its ``finished_at``). (Each table
    keeps a run's latest row: a publish of an earlier replay says nothing of a replay since.)"""
    seen = _seen_by_published_replays(lake)
    runs = lake.read(INGEST_RUNS).where(F.col("status") == "ingested")
    if seen.version is None:
        unseen = F.lit(seen.until is None) | (F.col("ingested_at") > F.lit(seen.until))
    elif seen.version == NO_VERSION:
        unseen = F.lit(True)
    else:
        recent = F.col("ingested_at") > F.lit(seen.version_planned_at - COMMITTED_WITHIN)
        unseen = recent
        if (as_of := _ingest_runs_as_of(lake, seen.version)) is not None:
            keys = as_of.where((F.col("status") == "ingested") & recent)
            runs = runs.join(
                keys.select(*INGEST_RUNS.keys, F.lit(True).alias("_seen")), list(INGEST_RUNS.keys), "left"
            )
            unseen = recent & F.col("_seen").isNull()
    row = runs.agg(
        F.min(F.when(unseen, F.col("event_min_at"))).alias("late"), F.max("event_max_at").alias("latest")
    ).collect()[0]
    return from_collected(row.late), from_collected(row.latest)


def _ingest_runs_as_of(lake: Lake, version: int) -> DataFrame | None:
    """ops/ingest_runs as of ``version``; None when maintenance has cleaned that version up (then
    every recent file counts: see _ingest_bounds)."""
    try:
        return lake.read_version(INGEST_RUNS, version)
    except VersionUnavailable as error:
        log.warning("every file ingested since a day before the last published replay counts: %s", error)
        return None


@dataclass(frozen=True)
class _Seen:
    """What the replays whose publish followed them saw: the latest version of ops/ingest_runs
    one of them planned from, and when that one began; the latest time one began (or finished),
    for rows recorded before versions were."""

    version: int | None
    version_planned_at: datetime | None
    until: datetime | None


def _seen_by_published_replays(lake: Lake) -> _Seen:
    published = lake.read(PUBLISH_RUNS).select(
        "run_id", "published_at", F.col("replayed_at").alias("_published_replay")
    )
    replays = lake.read(REPLAY_RUNS).join(published, "run_id")
    followed = F.when(
        F.col("_published_replay").isNotNull(), F.col("_published_replay") == F.col("finished_at")
    ).otherwise(F.col("published_at") >= F.col("finished_at"))
    # of the replays that planned from the latest version, the last to begin: that version was still
    # the latest when it began, so its cut-off (COMMITTED_WITHIN before it) is the latest one that holds
    latest = F.when(F.col("planned_version").isNotNull(), F.struct("planned_version", "planned_at"))
    row = (
        replays.where(followed)
        .agg(F.max(latest).alias("latest"), F.max(F.coalesce("planned_at", "finished_at")).alias("until"))
        .collect()[0]
    )
    if row.latest is None:
        return _Seen(None, None, from_collected(row.until))
    return _Seen(row.latest.planned_version, from_collected(row.latest.planned_at), from_collected(row.until))


def _evidence_files(lake: Lake, start: datetime, end: datetime) -> DataFrame:
    """ops/ingest_runs' rows of the ingested files that land commits or snapshots and whose
    landed events overlap ``[start, end)``: every file the interval's events can come from
    (the accounting records each file's range of event times)."""
    return lake.read(INGEST_RUNS).where(
        (F.col("status") == "ingested")
        & F.col("source_kind").isin(*kinds(REPLAYED_EVIDENCE))
        & (F.col("event_max_at") >= F.lit(start))
        & (F.col("event_min_at") < F.lit(end))
    )


def _reread_lines(lake: Lake) -> DataFrame | None:
    """The lines a copy continuing an ingested one read again (REREAD_KEY of the earlier copy's
    row; see pipelines.replay.events.without_reread_lines), or None if there are none. A row per
    such file at most, so they are collected: most lakes have none, and their replay is then
    not joined with anything."""
    rows = (
        lake.read(INGEST_RUNS)
        .where((F.col("status") == "ingested") & F.col("reread_line").isNotNull())
        .select("cluster", F.col("grew_from_hash").alias("_file_hash"), F.col("reread_line").alias("line_no"))
        .collect()
    )
    if not rows:
        return None
    schema = "cluster string, _file_hash string, line_no long"
    return lake.spark.createDataFrame(rows, schema).select(*REREAD_KEY)


def _logged_at_most(files: DataFrame) -> int:
    """At most how many log-told commits ``files`` (see _evidence_files) landed: the records
    of their log files (a broker log's resets count too). It chooses how the replay meets them
    (see ReplaySettings.broadcast_logged_commits), not what it finds: no commit is scanned for it."""
    logs = files.where(F.col("source_kind").isin(*kinds(LOGGED_COMMITS)))
    return logs.agg(F.coalesce(F.sum("records_landed"), F.lit(0)).alias("n")).collect()[0].n


def _file_names(files: DataFrame) -> DataFrame:
    """The names (FILE_KEY) the replay's events give ``files``: a snapshot event names its file
    by path alone (pipelines.replay.events.build_events)."""
    is_snapshot = F.col("source_kind").isin(*kinds(SNAPSHOTS))
    return files.select("source_file", F.when(~is_snapshot, F.col("_file_hash")).alias("_file_hash"))


def _latest_client_versions(files: DataFrame) -> DataFrame:
    """Of ``files`` (see _evidence_files), the broadcasting clients' offsets files the replay
    replays, each in the version landed last (``source_file``, ``_file_hash``): a client's
    ``offsets.json``, and its ``.bak`` only where no ``offsets.json`` of the same directory (client,
    group and landing time) is among them. The ingest applies that rule to the files of one batch
    (pipelines.ingest.client_offsets); a collector may land the two apart, in either order. A file
    that landed no row (an ``offsets.json`` refused whole, or with an empty table) has no event
    time and is not among ``files``: its ``.bak`` is replayed, where one batch holding both would
    have kept the empty table's."""
    clients = files.where(F.col("source_kind") == CLIENT_OFFSETS.kind)
    latest = clients.groupBy("source_file").agg(F.max_by("_file_hash", "ingested_at").alias("_file_hash"))
    path = F.col("source_file")
    has_main = F.max(~is_bak(path)).over(Window.partitionBy(client_directory(path)))
    return (
        latest.withColumn("_has_main", has_main)
        .where(~is_bak(path) | ~F.col("_has_main"))
        .select("source_file", "_file_hash")
    )


def run_replay(
    lake: Lake,
    settings: Settings,
    requested_from: datetime | None,
    requested_to: datetime | None,
    run_id: str,
) -> ReplayInterval:
    """Replay the interval and write the silver tables and the next checkpoint."""
    planned_at = datetime.now(UTC)
    # taken before the planning reads ops/ingest_runs: it sees at least the files as of this version
    planned_version = lake.version(INGEST_RUNS)
    late, latest = _ingest_bounds(lake)
    interval = plan_interval(
        requested_from, requested_to, checkpoint_times(lake), published_until(lake), late, latest
    )
    start, end = interval.replayed_from, interval.replayed_to
    size_shuffles(lake, settings.spark, start, end)
    # the landed files come from the ingest's accounting, not from a scan of every event
    files = _evidence_files(lake, start, end)
    # on the embedded lake the replay's workers write the two tables with a row per event
    commits_dir = lake.worker_dir(OFFSET_COMMITS_REPLAYED, f"replay-{run_id}")
    timeline_dir = lake.worker_dir(STORED_OFFSET_TIMELINE, f"replay-{run_id}")
    writes_itself = commits_dir is not None and timeline_dir is not None
    reread = _reread_lines(lake)

    result = replay(
        without_reread_lines(lake.read(OFFSET_COMMITS, start=start, end=end), reread),
        replayed_snapshots(
            lake.read(OFFSET_SNAPSHOTS, start=start, end=end),
            lake.read(SNAPSHOT_FILES, start=start, end=end),
            _latest_client_versions(files),
        ),
        checkpoint_at(lake, start),
        broadcast_logged=_logged_at_most(files) <= settings.replay.broadcast_logged_commits,
        landed_files=_file_names(files),
        kernel_for=partial(ReplayWriter.for_ids, commits_dir, timeline_dir) if writes_itself else None,
        kept_partitions=lake.spark.sparkContext.defaultParallelism,
        # the queues of the interval's commits, a superset of those replayed: on the embedded lake
        # read from the files' key columns without a Spark job (see Lake.distinct)
        commit_queues=lake.distinct(OFFSET_COMMITS, QUEUE_KEY, start=start, end=end),
    )
    # the silver tables Spark writes derive from the replayed state and its id dictionaries:
    # compute them once (Spark substitutes the cached rows wherever their plans recur)
    for frame in result.shared:
        if not frame.is_cached:  # the workers' dictionaries are already (ReplayWriter.for_ids)
            frame.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        if not writes_itself:
            silver = [
                partial(lake.replace_range, OFFSET_COMMITS_REPLAYED, result.commits, start, end),
                partial(lake.replace_range, STORED_OFFSET_TIMELINE, result.timeline, start, end),
            ]
        else:
            result.state.count()  # the replay: its workers write the two tables' files
            silver = [
                partial(
                    lake.replace_range, OFFSET_COMMITS_REPLAYED, None, start, end, worker_files=commits_dir
                ),
                partial(
                    lake.replace_range, STORED_OFFSET_TIMELINE, None, start, end, worker_files=timeline_dir
                ),
            ]
        side_by_side(
            *silver,
            lambda: lake.replace_range(
                OFFSET_REGRESSIONS, _explained(lake, result.regressions, start, end, reread), start, end
            ),
        )
        # the new checkpoint, after the tables it sums up, supersedes any taken inside the replayed interval
        lake.replace_range(
            REPLAY_CHECKPOINTS, result.checkpoint.withColumn("as_of", F.lit(end)), start + TICK, end + TICK
        )
    finally:
        for frame in result.shared:
            frame.unpersist()
    _prune_checkpoints(lake, settings.replay.checkpoints_kept)
    _record(lake, run_id, interval, planned_at, NO_VERSION if planned_version is None else planned_version)
    return with_first_event(lake, interval)


def _explained(
    lake: Lake, regressions: DataFrame, start: datetime, end: datetime, reread: DataFrame | None
) -> DataFrame:
    """The interval's regressions with their causes, from the evidence of the look-backs before it.

    The regressions are computed first, apart: the explanation's plan holds them eight times (each
    cause's candidates and the final join), and with the replay's plan beneath each it took longer
    to plan and to run than with their rows (docs/experiments.md, "The regressions explained from
    their own rows"). They are few beside the events but come in the replay's shuffle
    partitions, and each look-up of the explanation would scan every one of them: once
    checkpointed, they are read in one partition a core (docs/experiments.md, "The regressions in
    one partition a core"; coalesced after the checkpoint, not before, which would run the replay
    beneath them in as few tasks where it has not run yet; on the embedded lake they come merged
    already, from the replay's cached rows: see pipelines.replay.replay's ``kept_partitions``). A
    reset line a longer copy read again counts once (``reread``: see _reread_lines)."""
    regressions = regressions.localCheckpoint().coalesce(lake.spark.sparkContext.defaultParallelism)
    lookback = timedelta(seconds=LOOKBACK_SECONDS + SLACK_SECONDS)
    return with_causes(
        regressions,
        lake.read(OFFSET_REGRESSIONS, start=start - lookback, end=start),
        without_reread_lines(
            lake.read(OFFSET_RESETS, start=start - lookback, end=end + timedelta(seconds=SLACK_SECONDS + 1)),
            reread,
        ),
        lake.read(QUEUE_OFFSETS, start=start - timedelta(seconds=MIN_OFFSET_MAX_AGE_SECONDS), end=end),
        lake.read(GROUP_CONNECTIONS, start=start - timedelta(seconds=CONNECTION_MAX_AGE_SECONDS), end=end),
    )


def _prune_checkpoints(lake: Lake, kept: int) -> None:
    times = checkpoint_times(lake)
    if len(times) > kept:
        empty = lake.spark.createDataFrame([], REPLAY_CHECKPOINTS.schema)
        lake.replace_range(REPLAY_CHECKPOINTS, empty, EPOCH, times[-kept])


def _record(
    lake: Lake, run_id: str, interval: ReplayInterval, planned_at: datetime, planned_version: int
) -> None:
    start, end = interval.replayed_from, interval.replayed_to
    commits = lake.row_count(OFFSET_COMMITS_REPLAYED, start=start, end=end)
    regressions = lake.row_count(OFFSET_REGRESSIONS, start=start, end=end)
    row = [
        (
            run_id,
            interval.requested_from,
            interval.requested_to,
            start,
            end,
            commits,
            regressions,
            datetime.now(UTC),
            planned_at,
            planned_version,
        )
    ]
    lake.merge_rows(REPLAY_RUNS, row)
