"""The silver tables derived from replayed state (see pipelines.replay)."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.keys import key_kind
from pipelines.replay import (
    EVENT_SEQ,
    QUEUE_ID,
    QUEUE_KEY,
    EventIds,
    ReplayResult,
    build_events,
    observation_seq,
    with_replayed_state,
)
from pipelines.replay_kernel import replay_batches


def _is_commit() -> Column:
    return F.col("commit_offset").isNotNull()


def _seq() -> Column:
    return observation_seq(F.col("event_rank"), F.col("source_file"), F.col("line_rank"))


def replayed_commits(state: DataFrame) -> DataFrame:
    """silver/offset_commits_replayed: every replayed commit with both semantics."""
    return state.where(_is_commit()).select(
        *QUEUE_KEY[:2],
        F.col("event_at").alias("committed_at"),
        "client_host",
        "topic",
        "consumer_group",
        "key_kind",
        "queue_id",
        F.col("commit_offset").alias("offset"),
        "evidence",
        "commit_path",
        "stored_offset_before",
        "stored_before_source",
        "client_offset_after",
        "is_regression",
        F.when(F.col("is_regression"), F.col("stored_offset_before") - F.col("commit_offset")).alias("regression_size"),
        "source_file",
        "line_no",
        "_file_hash",
        F.to_date("event_at").alias("commit_date"),
    )


def stored_offset_timeline(state: DataFrame) -> DataFrame:
    """silver/stored_offset_timeline: what the broker stored after each observation.

    ``consumed_increment`` is the positive part of the change from the previous
    observation: a regression never counts as negative work.
    """
    change = F.col("stored_offset") - F.col("previous_stored_offset")
    return state.select(
        *QUEUE_KEY,
        F.col("event_at").alias("observed_at"),
        _seq().alias("observation_seq"),
        F.when(_is_commit(), F.lit("commit")).otherwise(F.lit("snapshot")).alias("observation"),
        "stored_offset",
        "previous_stored_offset",
        F.greatest(F.coalesce(change, F.lit(0)), F.lit(0)).alias("consumed_increment"),
        F.to_date("event_at").alias("observed_date"),
    )


def regressions(state: DataFrame) -> DataFrame:
    """silver/offset_regressions: commits below the stored offset, and snapshot pairs whose
    offset went down with no commit regression between them to explain it.

    Both kinds come from one scan of the state (a union of two filters would read it twice);
    a snapshot event has no client, commit evidence or path, so those are null on its rows.
    """
    by_commit = F.col("is_regression")
    by_snapshots = (
        ~_is_commit() & (F.col("snapshot_offset") < F.col("previous_snapshot_offset")) & (F.col("commit_regressions_between") == 0)
    )
    return (
        state.where(by_commit | by_snapshots)
        .select(
            *QUEUE_KEY,
            F.col("event_at").alias("detected_at"),
            F.when(by_commit, F.col("commit_offset")).otherwise(F.col("snapshot_offset")).alias("offset"),
            F.when(by_commit, F.col("stored_offset_before")).otherwise(F.col("previous_snapshot_offset")).alias("stored_offset"),
            F.when(by_commit, F.lit("commit")).otherwise(F.lit("snapshot_pair")).alias("evidence"),
            "client_host",
            F.col("evidence").alias("commit_evidence"),
            "commit_path",
            "key_kind",
            _seq().alias("observation_seq"),
            "source_file",
        )
        .withColumn("regression_size", F.col("stored_offset") - F.col("offset"))
        .withColumn("detected_date", F.to_date("detected_at"))
    )


def next_checkpoint(state: DataFrame, seed: DataFrame, queues: DataFrame) -> DataFrame:
    """Replay state per queue at the interval's end: the seed, moved on by the interval
    (``queues``: the queue key of each QUEUE_ID, see :class:`pipelines.replay.EventIds`).

    "Last" is by EVENT_SEQ, a number, so every aggregate here is a max of numbers, which Spark
    computes by hash in each task (an ordering struct made it sort every event by queue).
    """
    seq = F.col(EVENT_SEQ)
    last_of = lambda column: F.max_by(column, F.when(F.col(column).isNotNull(), seq))  # noqa: E731
    is_snapshot = ~_is_commit()
    by_id = state.groupBy(QUEUE_ID).agg(
        last_of("commit_offset").alias("w_last_commit_offset"),
        F.max("client_offset_after").alias("w_hwm"),
        F.max(F.when(is_snapshot, F.col("event_at"))).alias("w_last_snapshot_at"),
        last_of("snapshot_offset").alias("w_last_snapshot_offset"),
        F.max_by("commit_regressions_after", seq).alias("w_regressions_after_snapshot"),
        F.max("event_at").alias("w_last_stored_at"),
        F.max_by("stored_offset", seq).alias("w_last_stored_offset"),
    )
    moved = by_id.join(F.broadcast(queues), on=QUEUE_ID).drop(QUEUE_ID)
    joined = seed.join(moved, on=list(QUEUE_KEY), how="full_outer")
    return joined.select(
        *QUEUE_KEY,
        # a function of the key (every source classifies it so), whether or not the seed has it
        key_kind(F.col("topic"), F.col("consumer_group")).alias("key_kind"),
        F.coalesce("w_last_commit_offset", "last_commit_offset").alias("last_commit_offset"),
        F.greatest("w_hwm", "client_offset_hwm").alias("client_offset_hwm"),
        F.coalesce("w_last_snapshot_at", "last_snapshot_at").alias("last_snapshot_at"),
        F.coalesce("w_last_snapshot_offset", "last_snapshot_offset").alias("last_snapshot_offset"),
        F.coalesce("w_regressions_after_snapshot", "commit_regressions_since_snapshot", F.lit(0)).alias(
            "commit_regressions_since_snapshot"
        ),
        F.coalesce("w_last_stored_at", "last_stored_at").alias("last_stored_at"),
        F.coalesce("w_last_stored_offset", "last_stored_offset").alias("last_stored_offset"),
    )


def replay(
    commits: DataFrame,
    snapshots: DataFrame,
    seed: DataFrame,
    broadcast_logged: bool = False,
    files: DataFrame | None = None,
    kernel_for: Callable[[EventIds], Callable] | None = None,
) -> ReplayResult:
    """Replay one interval's bronze commits and snapshots, continuing from ``seed``
    (``broadcast_logged``: see :func:`pipelines.replay.without_corroborating_logs`; ``files``:
    the landed files the events may come from, see :meth:`pipelines.replay.EventIds.of`).

    ``kernel_for``, given the interval's ids, returns a kernel that writes the replayed
    commits and the timeline itself and returns only the rows the regressions and the
    checkpoint read (see jobs.replay_landing); the result then has no ``commits`` or ``timeline``.
    """
    ids = EventIds.of(commits, snapshots, files)
    events = ids.encode(build_events(commits, snapshots, broadcast_logged))
    kernel = kernel_for(ids) if kernel_for is not None else replay_batches
    state = with_replayed_state(events, ids.encode(seed, files=False, known_only=True), kernel)
    # the state keeps its ids (narrower to cache); the tables get the text back
    decoded = ids.decode(state)
    return ReplayResult(
        commits=replayed_commits(decoded) if kernel_for is None else None,
        timeline=stored_offset_timeline(decoded) if kernel_for is None else None,
        regressions=regressions(decoded),
        checkpoint=next_checkpoint(state, seed, ids.queues),
        state=state,
        ids=ids,
    )
