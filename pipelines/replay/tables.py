"""The silver tables derived from replayed state (see pipelines.replay.events)."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.keys import key_kind
from pipelines.replay import expressions
from pipelines.replay.events import EVENT_SEQ, QUEUE_ID
from pipelines.replay.projections import (
    IS_COMMIT,
    OFFSET_REGRESSIONS,
    REPLAYED_COMMITS,
    STORED_OFFSET_TIMELINE,
)
from schemas.tables import QUEUE_KEY


def replayed_commits(state: DataFrame) -> DataFrame:
    """silver/offset_commits_replayed: every replayed commit with both semantics."""
    return REPLAYED_COMMITS.spark(state)


def stored_offset_timeline(state: DataFrame) -> DataFrame:
    """silver/stored_offset_timeline: what the broker stored after each observation."""
    return STORED_OFFSET_TIMELINE.spark(state)


def regressions(state: DataFrame) -> DataFrame:
    """silver/offset_regressions: commits below the stored offset, and snapshot pairs whose
    offset went down with no commit regression between them to explain it (one scan of the
    state: a union of two filters would read it twice)."""
    return OFFSET_REGRESSIONS.spark(state)


def next_checkpoint(state: DataFrame, seed: DataFrame, queues: DataFrame) -> DataFrame:
    """Replay state per queue at the interval's end: the seed, moved on by the interval
    (``queues``: the queue key of each QUEUE_ID, see :class:`pipelines.replay.events.EventIds`).

    "Last" is by EVENT_SEQ, a number, so every aggregate here is a max of numbers, which Spark
    computes by hash in each task (an ordering struct made it sort every event by queue).
    """
    seq = F.col(EVENT_SEQ)
    last_of = lambda column: F.max_by(column, F.when(F.col(column).isNotNull(), seq))  # noqa: E731
    is_snapshot = ~expressions.spark(IS_COMMIT)
    by_id = state.groupBy(QUEUE_ID).agg(
        last_of("commit_offset").alias("w_last_commit_offset"),
        F.max(F.when(~is_snapshot, seq)).alias("w_last_commit_seq"),
        F.max(F.when(~is_snapshot, F.col("event_at"))).alias("w_last_commit_at"),
        F.max("client_offset_after").alias("w_hwm"),
        F.max(F.when(is_snapshot, F.col("event_at"))).alias("w_last_snapshot_at"),
        last_of("snapshot_offset").alias("w_last_snapshot_offset"),
        F.max_by("commit_regressions_after", seq).alias("w_regressions_after_snapshot"),
        F.max("event_at").alias("w_last_stored_at"),
        F.max_by("stored_offset", seq).alias("w_last_stored_offset"),
    )
    # the last commit's host is text, which a hash aggregate cannot keep: that one row is joined back
    last_commits = by_id.select(QUEUE_ID, F.col("w_last_commit_seq").alias(EVENT_SEQ))
    hosts = state.join(F.broadcast(last_commits), on=[QUEUE_ID, EVENT_SEQ]).select(
        QUEUE_ID, F.col("client_host").alias("w_last_commit_client_host")
    )
    moved = by_id.join(hosts, on=QUEUE_ID, how="left").join(F.broadcast(queues), on=QUEUE_ID).drop(QUEUE_ID)
    joined = seed.join(moved, on=list(QUEUE_KEY), how="full_outer")
    return joined.select(
        *QUEUE_KEY,
        # a function of the key (every source classifies it so), whether or not the seed has it
        key_kind(F.col("topic"), F.col("consumer_group")).alias("key_kind"),
        F.coalesce("w_last_commit_offset", "last_commit_offset").alias("last_commit_offset"),
        F.coalesce("w_last_commit_at", "last_commit_at").alias("last_commit_at"),
        F.when(F.col("w_last_commit_seq").isNotNull(), F.col("w_last_commit_client_host"))
        .otherwise(F.col("last_commit_client_host"))
        .alias("last_commit_client_host"),
        F.greatest("w_hwm", "client_offset_hwm").alias("client_offset_hwm"),
        F.coalesce("w_last_snapshot_at", "last_snapshot_at").alias("last_snapshot_at"),
        F.coalesce("w_last_snapshot_offset", "last_snapshot_offset").alias("last_snapshot_offset"),
        F.coalesce("w_regressions_after_snapshot", "commit_regressions_since_snapshot", F.lit(0)).alias(
            "commit_regressions_since_snapshot"
        ),
        F.coalesce("w_last_stored_at", "last_stored_at").alias("last_stored_at"),
        F.coalesce("w_last_stored_offset", "last_stored_offset").alias("last_stored_offset"),
    )
