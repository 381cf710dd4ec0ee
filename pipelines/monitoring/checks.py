"""Monitoring checks: DataFrame transforms that return the offending rows, each with a ``message``.

A check is a column function that gives a message when a row offends and null when it
passes (the dqx pattern), and a transform that keeps the offending rows and closes with a
``select`` naming its output. Nothing here reads or writes: ``jobs.quality.audit`` feeds
the lake's tables in and turns the rows into alerts (see the registry, ``pipelines.monitoring.CHECKS``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from schemas.keys import DLQ_PREFIX
from schemas.tables import QUEUE_KEY

_BROKER_SNAPSHOTS = ("main", "bak")


def _micros(delta: timedelta) -> int:
    return int(delta / timedelta(microseconds=1))


def _iso(ts: Column) -> Column:
    return F.date_format(ts, "yyyy-MM-dd'T'HH:mm:ss'Z'")


def _in_interval(ts: Column, start: datetime, end: datetime) -> Column:
    return (ts >= F.lit(start)) & (ts < F.lit(end))


def snapshot_gap_message(
    gap_started_at: Column, gap_ended_at: Column, gap_micros: Column, max_gap: timedelta
) -> Column:
    """Message for a gap between two snapshots (or since the last one, ``gap_ended_at`` null)
    longer than ``max_gap``, else null."""
    limit = int(max_gap.total_seconds())
    gap_seconds = F.floor(gap_micros / 1_000_000)
    return F.when(
        gap_micros > F.lit(_micros(max_gap)),
        F.when(
            gap_ended_at.isNull(),
            F.format_string(
                "snapshots stopped: none for %ds since %s (allowed gap %ds)",
                gap_seconds,
                _iso(gap_started_at),
                F.lit(limit),
            ),
        ).otherwise(
            F.format_string(
                "no snapshot for %ds between %s and %s (allowed gap %ds)",
                gap_seconds,
                _iso(gap_started_at),
                _iso(gap_ended_at),
                F.lit(limit),
            )
        ),
    )


def find_snapshot_gaps(
    snapshots: DataFrame, *, interval_start: datetime, interval_end: datetime, max_gap: timedelta
) -> DataFrame:
    """Brokers whose snapshots arrived with a gap longer than ``max_gap``, or stopped.

    Needs bronze/offset_snapshots rows (``cluster, broker, snapshot_at, snapshot_source``)
    from before the interval (the look-back) up to ``interval_end``. A gap is reported when
    it ends inside the interval; a broker whose last snapshot is more than ``max_gap`` before
    ``interval_end`` has stopped (``gap_ended_at`` null). With ``max_gap`` 15 min and the
    interval 10:00-11:00, snapshots of broker-a at 09:55, 10:00, 10:20, 10:25:

        gap_started_at  gap_ended_at  gap_seconds
        10:00           10:20         1200          (too long)
        10:25           null          2100          (stopped: nothing since 10:25)
    """
    instants = (
        snapshots.where(
            F.col("snapshot_source").isin(*_BROKER_SNAPSHOTS) & (F.col("snapshot_at") < F.lit(interval_end))
        )
        .select("cluster", "broker", "snapshot_at")
        .distinct()  # the instants: a main file and its .bak land at the same time
    )
    order = Window.partitionBy("cluster", "broker").orderBy("snapshot_at")  # one row per instant: no ties
    between = (
        instants.withColumn("gap_started_at", F.lag("snapshot_at").over(order))
        .where(
            F.col("gap_started_at").isNotNull()
            & _in_interval(F.col("snapshot_at"), interval_start, interval_end)
        )
        .select("cluster", "broker", "gap_started_at", F.col("snapshot_at").alias("gap_ended_at"))
    )
    stopped = instants.groupBy("cluster", "broker").agg(F.max("snapshot_at").alias("gap_started_at"))
    stopped = stopped.select(
        "cluster", "broker", "gap_started_at", F.lit(None).cast("timestamp").alias("gap_ended_at")
    )
    gap_micros = F.unix_micros(F.coalesce(F.col("gap_ended_at"), F.lit(interval_end))) - F.unix_micros(
        F.col("gap_started_at")
    )
    gaps = between.unionByName(stopped).withColumn("gap_micros", gap_micros)
    message = snapshot_gap_message(
        F.col("gap_started_at"), F.col("gap_ended_at"), F.col("gap_micros"), max_gap
    )
    return (
        gaps.withColumn("message", message)
        .where(F.col("message").isNotNull())
        .select(
            "cluster", "broker", "gap_started_at", "gap_ended_at",
            F.floor(F.col("gap_micros") / 1_000_000).cast("long").alias("gap_seconds"), "message",
        )
    )  # fmt: skip


def negative_lag_message(consumer_offset: Column, broker_offset: Column) -> Column:
    """Message when the consumer offset is above the broker's max offset, else null."""
    return F.when(
        consumer_offset > broker_offset,
        F.format_string(
            "consumer offset %d is %d above the broker's max offset %d (negative lag): "
            "the topic was recreated or the store wiped while the group kept its offset",
            consumer_offset, consumer_offset - broker_offset, broker_offset,
        ),
    )  # fmt: skip


def expired_message(consumer_offset: Column, broker_min_offset: Column) -> Column:
    """Message when the consumer offset is below the broker's min offset, else null."""
    return F.when(
        consumer_offset < broker_min_offset,
        F.format_string(
            "consumer offset %d is below the broker's min offset %d: %d messages expired before being consumed",
            consumer_offset, broker_min_offset, broker_min_offset - consumer_offset,
        ),
    )  # fmt: skip


def find_negative_lag(consumer_lag: DataFrame) -> DataFrame:
    """gold/consumer_lag rows whose consumer offset is above the broker's max offset."""
    return (
        consumer_lag.withColumn("message", negative_lag_message(F.col("consumer_offset"), F.col("broker_offset")))
        .where(F.col("message").isNotNull())
        .select(
            *QUEUE_KEY, "observed_at", "consumer_offset", "broker_offset",
            (F.col("consumer_offset") - F.col("broker_offset")).alias("excess_messages"), "message",
        )
    )  # fmt: skip


def find_expired_before_consumed(consumer_lag: DataFrame) -> DataFrame:
    """gold/consumer_lag rows whose consumer offset is below the broker's min offset."""
    return (
        consumer_lag.withColumn("message", expired_message(F.col("consumer_offset"), F.col("broker_min_offset")))
        .where(F.col("message").isNotNull())
        .select(
            *QUEUE_KEY, "observed_at", "consumer_offset", "broker_min_offset",
            (F.col("broker_min_offset") - F.col("consumer_offset")).alias("expired_messages"), "message",
        )
    )  # fmt: skip


def find_abandoned_groups(
    consumer_lag: DataFrame, *, interval_start: datetime, interval_end: datetime, stalled_after: timedelta
) -> DataFrame:
    """Topic@group keys whose consumer offsets have not moved for ``stalled_after`` while lag grew.

    Needs gold/consumer_lag rows from the look-back up to ``interval_end``; rows without a
    consumer offset are ignored. A queue "moves" when its offset differs from its previous
    observation (its first observation counts as a move: nothing is known before it). The
    group is stalled since its most recent move on any queue; it is reported when it was
    observed in the interval, stalled at least ``stalled_after`` and its lag grew since each
    queue's last move. With ``stalled_after`` 1 h, one queue of g on t:

        observed_at  consumer_offset  lag_messages
        08:00        40               0      <- last move
        09:00        40               25
        10:30        40               90     -> stalled since 08:00 for 9000 s, lag grew by 90
    """
    order = Window.partitionBy(*QUEUE_KEY).orderBy(
        "observed_at"
    )  # observed_at is unique per queue (table keys)
    observed = consumer_lag.where(
        F.col("consumer_offset").isNotNull()
        & F.col("lag_messages").isNotNull()
        & (F.col("observed_at") < F.lit(interval_end))
    )
    moves = observed.withColumn("previous_offset", F.lag("consumer_offset").over(order)).withColumn(
        "moved_at",
        F.when(
            F.col("previous_offset").isNull() | (F.col("previous_offset") != F.col("consumer_offset")),
            F.col("observed_at"),
        ),
    )
    queues = moves.groupBy(*QUEUE_KEY).agg(
        F.max("moved_at").alias("moved_at"),
        F.max("observed_at").alias("last_observed_at"),
        F.max_by("lag_messages", "observed_at").alias("lag_messages"),
        F.max_by("lag_messages", "moved_at").alias("lag_at_move"),
    )
    groups = queues.groupBy("cluster", "topic", "consumer_group").agg(
        F.max("moved_at").alias("stalled_since"),
        F.max("last_observed_at").alias("last_observed_at"),
        F.count(F.lit(1)).alias("queues"),
        F.sum("lag_messages").alias("lag_messages"),
        F.sum(F.col("lag_messages") - F.col("lag_at_move")).alias("lag_growth"),
    )
    stalled_seconds = (
        (F.unix_micros(F.col("last_observed_at")) - F.unix_micros(F.col("stalled_since"))) / 1_000_000
    ).cast("long")
    return (
        groups.withColumn("stalled_seconds", stalled_seconds)
        .where(
            _in_interval(F.col("last_observed_at"), interval_start, interval_end)
            & (F.col("stalled_seconds") >= F.lit(int(stalled_after.total_seconds())))
            & (F.col("lag_growth") > 0)
        )
        .withColumn(
            "message",
            F.format_string(
                "offsets of %s on %s have not moved for %ds (since %s) while lag grew by %d to %d messages over %d queues",
                "consumer_group", "topic", "stalled_seconds", _iso(F.col("stalled_since")), "lag_growth", "lag_messages", "queues",
            ),
        )
        .select(
            "cluster", "topic", "consumer_group", "stalled_since", "last_observed_at", "stalled_seconds",
            "queues", "lag_messages", "lag_growth", "message",
        )
    )  # fmt: skip


# A commit's place among its queue's: time, then file and line (a struct orders field by field,
# nulls first, as an ascending sort does)
_COMMIT_ORDER = ("committed_at", "_file_hash", "line_no")


def _last_before(commits: DataFrame, cutoff: datetime) -> DataFrame:
    """``commits`` without those before each queue's last instant at or before ``cutoff``.

    A snapshot of the interval judges every commit at or before ``cutoff`` (its time less the
    tolerance) as one: the last of them. Kept are that last instant's commits (its ties, ordered
    by file and line as every commit is) and all commits after ``cutoff``, so the windows below
    sort an interval's commits and a row per queue, not every commit of the look-back."""
    older = commits.where(F.col("committed_at") <= F.lit(cutoff))
    last = older.groupBy(*QUEUE_KEY).agg(F.max("committed_at").alias("committed_at"))
    return commits.where(F.col("committed_at") > F.lit(cutoff)).unionByName(
        older.join(last, on=[*QUEUE_KEY, "committed_at"], how="left_semi")
    )


def find_snapshot_commit_mismatches(
    snapshots: DataFrame,
    commits: DataFrame,
    *,
    interval_start: datetime,
    interval_end: datetime,
    tolerance: timedelta,
) -> DataFrame:
    """Broker snapshots (``main``) in the interval that hold none of the offsets they could hold.

    A snapshot at T may hold the last commit at or before T - ``tolerance``, or any commit
    after it up to T (the broker persists every few seconds). Only queues with both
    evidence are compared, and only when a commit at or before T - ``tolerance`` exists.
    Needs bronze/offset_snapshots rows of the interval and silver/offset_commits_replayed
    rows from the look-back on. Tolerance 10 s, one queue:

        at        evidence  offset
        10:00:00  commit    100
        10:00:07  commit    110
        10:00:10  snapshot  110   fine (the last commit)
        10:00:15  snapshot  100   fine (10:00:05 still held 100)
        10:00:30  snapshot  90    -> mismatch: expected 110 (the commit at 10:00:07)
    """
    in_interval = _in_interval(F.col("snapshot_at"), interval_start, interval_end)
    shots = snapshots.where((F.col("snapshot_source") == "main") & in_interval).select(
        *QUEUE_KEY, F.col("snapshot_at").alias("at"), F.col("offset").alias("snapshot_offset"),
    )  # fmt: skip
    compared = _last_before(
        commits.where(F.col("committed_at") < F.lit(interval_end)), interval_start - tolerance
    )
    numbered = compared.select(
        *QUEUE_KEY, F.col("committed_at").alias("at"), F.col("offset").alias("commit_offset"),
        F.struct(*_COMMIT_ORDER).alias("commit_seq"),
    )  # fmt: skip
    events = (
        # each side's missing columns are null: a snapshot has no commit offset or order
        shots.unionByName(numbered, allowMissingColumns=True)
        .withColumn("t", F.unix_micros("at"))
        .withColumn("committed_at", F.when(F.col("commit_seq").isNotNull(), F.col("at")))
    )
    timeline = Window.partitionBy(*QUEUE_KEY).orderBy("t")
    upto_now = timeline.rangeBetween(Window.unboundedPreceding, 0)
    before_tolerance = timeline.rangeBetween(Window.unboundedPreceding, -_micros(tolerance))
    recent_offsets = (
        F.collect_set("commit_offset").over(timeline.rangeBetween(-_micros(tolerance) + 1, 0))
        if tolerance > timedelta(0)
        else F.array().cast("array<bigint>")
    )
    judged = (
        events.withColumn("last_commit_offset", F.max_by("commit_offset", "commit_seq").over(upto_now))
        .withColumn("last_committed_at", F.max_by("committed_at", "commit_seq").over(upto_now))
        .withColumn("held_offset", F.max_by("commit_offset", "commit_seq").over(before_tolerance))
        .withColumn("recent_offsets", recent_offsets)
        .where(F.col("snapshot_offset").isNotNull() & F.col("held_offset").isNotNull())
        .where(
            ~(
                (F.col("snapshot_offset") == F.col("held_offset"))
                | F.array_contains("recent_offsets", F.col("snapshot_offset"))
            )
        )
    )
    return judged.select(
        *QUEUE_KEY,
        F.col("at").alias("snapshot_at"),
        "snapshot_offset",
        "last_commit_offset",
        "last_committed_at",
        (F.col("snapshot_offset") - F.col("last_commit_offset")).alias("offset_difference"),
        F.format_string(
            "snapshot at %s holds offset %d but the last commit at or before it (at %s) is %d",
            _iso(F.col("at")), "snapshot_offset", _iso(F.col("last_committed_at")), "last_commit_offset",
        ).alias("message"),
    )  # fmt: skip


def regression_message(
    regression_size: Column, stored_offset: Column, offset: Column, client_host: Column, above: int
) -> Column:
    """Message for a regression larger than ``above`` messages, else null."""
    committed_by = F.coalesce(
        F.concat(F.lit("client host "), client_host), F.lit("an unknown client (seen between snapshots)")
    )
    return F.when(
        regression_size > F.lit(above),
        F.format_string(
            "offset moved back by %d messages (from %d to %d), committed by %s",
            regression_size,
            stored_offset,
            offset,
            committed_by,
        ),
    )


def find_large_regressions(regressions: DataFrame, *, above: int) -> DataFrame:
    """silver/offset_regressions rows larger than ``above`` messages (group, queue, size, client host)."""
    message = regression_message(
        F.col("regression_size"), F.col("stored_offset"), F.col("offset"), F.col("client_host"), above
    )
    return (
        regressions.withColumn("message", message)
        .where(F.col("message").isNotNull())
        .select(
            *QUEUE_KEY, "detected_at", "offset", "stored_offset", "regression_size", "client_host",
            "evidence", "commit_path", "key_kind", "message",
        )
    )  # fmt: skip


def find_dead_letter_growth(
    queue_offsets: DataFrame, *, interval_start: datetime, interval_end: datetime
) -> DataFrame:
    """Dead-letter topics (``%DLQ%<group>``) whose max offset grew in the interval: messages the
    group gave up on after its retries, tied to that group. One row per (cluster, topic).

    Needs bronze/queue_offsets rows (topicStatus of the DLQ topic) from the look-back on: each
    increase counts from the queue's observation before it; a max offset that went down (a
    queue rebuilt) counts nothing. ``%DLQ%billing``, queue 0 observed 09:55 (max 10), 10:05
    (12), 10:20 (12), interval 10:00-11:00:

        cluster  topic          consumer_group  dead_lettered  first_grown_at  last_grown_at
        c1       %DLQ%billing   billing         2              10:05           10:05
    """
    order = Window.partitionBy("cluster", "broker", "topic", "queue_id").orderBy(
        "observed_at", "source_file", "line_no"
    )
    dead_letters = queue_offsets.where(
        F.col("topic").startswith(DLQ_PREFIX)
        & F.col("max_offset").isNotNull()
        & (F.col("observed_at") < F.lit(interval_end))
    )
    grown = (
        dead_letters.withColumn("_grew", F.col("max_offset") - F.lag("max_offset").over(order))
        .where((F.col("_grew") > 0) & _in_interval(F.col("observed_at"), interval_start, interval_end))
        .groupBy("cluster", "topic")
        .agg(
            F.sum("_grew").alias("dead_lettered"),
            F.min("observed_at").alias("first_grown_at"),
            F.max("observed_at").alias("last_grown_at"),
        )
    )
    group = F.substring(F.col("topic"), len(DLQ_PREFIX) + 1, 1 << 16)
    message = F.format_string(
        "%d messages of group %s went to its dead-letter queue %s between %s and %s: "
        "consumed and retried until the retries ran out, then given up",
        F.col("dead_lettered"), group, F.col("topic"), _iso(F.col("first_grown_at")), _iso(F.col("last_grown_at")),
    )  # fmt: skip
    return grown.select(
        "cluster", "topic", group.alias("consumer_group"), "dead_lettered", "first_grown_at", "last_grown_at",
        message.alias("message"),
    )  # fmt: skip


def find_status_changes(status: DataFrame, *, interval_start: datetime, interval_end: datetime) -> DataFrame:
    """gold/consumer_status windows completed in the interval whose status differs from the
    group's window before (or, first seen, is not OK): one finding per change, not one per row.

    A window counts in the interval its end falls in (``interval_start < window_end <=
    interval_end``): its status is final only then, and runs over consecutive intervals report
    each change once, as one run over both does. Needs the status rows from the look-back on.
    A group STALL from 10:00 to 12:00, one-hour windows:

        window  status             finding
        09:00   OK
        10:00   STALL              OK -> STALL
        11:00   STALL              (none: no change)
        12:00   OK                 STALL -> OK
    """
    order = Window.partitionBy("cluster", "topic", "consumer_group").orderBy("window_start")  # keys: no ties
    previous = F.col("previous_status")
    completed = (F.col("window_end") > F.lit(interval_start)) & (F.col("window_end") <= F.lit(interval_end))
    changed = status.withColumn("previous_status", F.lag("status").over(order)).where(
        completed & ((previous.isNull() & (F.col("status") != "OK")) | (previous != F.col("status")))
    )
    return changed.select(
        "cluster", "topic", "consumer_group", "window_start", "previous_status", "status", "last_lag_messages",
        F.format_string(
            "%s on %s: %s -> %s in the window from %s (%s)",
            "consumer_group", "topic", F.coalesce("previous_status", F.lit("first seen")), "status",
            _iso(F.col("window_start")), "status_reason",
        ).alias("message"),
    )  # fmt: skip
