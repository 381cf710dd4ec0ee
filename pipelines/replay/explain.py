"""Why each regression happened: its ``cause`` and the evidence row it rests on.

The rules, one table (:data:`CAUSES`, in order: the first that holds decides):

| cause | holds when | evidence row |
|---|---|---|
| ``admin_reset`` | a ``[reset-offset]`` line (4.x ``reset offset success``, 5.x ``reset offset started``) of the regression's broker, topic and group, logged from ``LOOKBACK_SECONDS`` before it to ``SLACK_SECONDS`` after, and the regression is its queue's first since that line | bronze/offset_resets |
| ``server_correction`` | a broker correction line (``PULL_OFFSET_MOVED``, "offset too small", "over flow badly") of the broker in the same window that names the regression's topic and group or its new offset, and names no other; its queue's first regression since | bronze/offset_resets |
| ``rewind_to_min`` | the offset equals the queue's min offset the broker reported last (``topicStatus``), at most ``MIN_OFFSET_MAX_AGE_SECONDS`` before | bronze/queue_offsets |
| ``client_seek`` | a commit of a group whose last ``mqadmin consumerConnection`` output before it (at most ``CONNECTION_MAX_AGE_SECONDS``) says ``CONSUME_ACTIVELY``: a pull or lite-pull consumer commits with ``increaseOnly=false`` and may seek back on purpose | bronze/group_connections |
| ``stale_commit`` | a commit by a client host absent from the group's last consumerConnection output before it (it had left the group: the strongest evidence); else a commit whose queue was last committed by another client (the queue had moved: a rebalance), or by the same client at a higher offset | bronze/group_connections, else the previous commit (silver/offset_commits_replayed) |
| ``failover`` | a broker snapshot below the previous snapshot, or below a commit it should hold: the broker's table itself went back (a broadcasting client's own offsets going back are left unexplained) | the snapshot (bronze/offset_snapshots) |
| ``unexplained`` | none of these | none |

A 5.x server-side reset overwrites the broker's table without a commit: the reset line is the
regression's evidence (``cause_at`` its time), the regression is found at the first commit or
snapshot that shows it. A reset explains one regression per queue, the first after it: a
stale commit minutes later is not dressed up as the reset.

Example::

    resets:      10:00:02 reset_started t@g by 10.0.9.5:4411     regressions: 10:00:03 t@g q3 (commit)
                                                                              10:04:00 t@g q3 (commit, by another host)
    ->  10:00:03 admin_reset  (bronze/offset_resets, the line)
        10:04:00 stale_commit (the queue's previous commit, by the other host)
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipelines.unions import union_all
from schemas.keys import CLIENT_STATE_KIND
from schemas.records import PULL
from schemas.tables import QUEUE_KEY

LOOKBACK_SECONDS = 600
SLACK_SECONDS = 1
MIN_OFFSET_MAX_AGE_SECONDS = 3600
CONNECTION_MAX_AGE_SECONDS = 3600
RESET_KINDS = ("reset_success", "reset_started")
CORRECTION_KINDS = ("pull_offset_moved", "offset_too_small", "offset_overflow")
SNAPSHOT_EVIDENCE = ("snapshot_pair", "snapshot_behind_commit")
# the regression's own identity within its queue (the table's keys)
_ROW = (*QUEUE_KEY, "detected_at", "evidence", "observation_seq")
CAUSE_COLUMNS = ("cause", "cause_evidence", "cause_source_file", "cause_line_no", "cause_at", "cause_detail")


@dataclass(frozen=True)
class Cause:
    name: str
    evidence: str | None  # the table its evidence row is in
    meaning: str


CAUSES = (
    Cause("admin_reset", "bronze/offset_resets", "an operator reset the group's offsets"),
    Cause("server_correction", "bronze/offset_resets", "the broker corrected an illegal pull offset"),
    Cause("rewind_to_min", "bronze/queue_offsets", "the offset went back to the queue's min offset"),
    Cause("client_seek", "bronze/group_connections", "a pull consumer moved its own offset back (a seek)"),
    Cause("stale_commit", "silver/offset_commits_replayed", "a client committed an offset older than the queue's"),
    Cause("failover", "bronze/offset_snapshots", "the broker's table went back without a commit"),
    Cause("unexplained", None, "nothing logged or observed explains it"),
)  # fmt: skip
RANK = {cause.name: n for n, cause in enumerate(CAUSES)}
# regressions someone asked for: the duplicates they bring are the point
INTENDED_CAUSES = ("admin_reset", "client_seek")
EVIDENCE_TABLE = {cause.name: cause.evidence for cause in CAUSES}


def _seconds(n: int) -> Column:
    return F.expr(f"INTERVAL {n} SECONDS")


def _when(ts: Column) -> Column:
    return F.date_format(ts, "yyyy-MM-dd HH:mm:ss")


def with_previous_regression(regressions: DataFrame, earlier: DataFrame) -> DataFrame:
    """``regressions`` with ``_previous_regression_at``: when its queue regressed last before it
    (``earlier``: the regressions detected in the look-back before the interval, ``_ROW`` columns)."""
    mine = regressions.withColumn("_is_mine", F.lit(True))
    before = earlier.select(*_ROW).withColumn("_is_mine", F.lit(False))
    order = Window.partitionBy(*QUEUE_KEY).orderBy("detected_at", "evidence", "observation_seq")
    both = mine.unionByName(before, allowMissingColumns=True)
    return (
        both.withColumn("_previous_regression_at", F.lag("detected_at").over(order))
        .where(F.col("_is_mine"))
        .drop("_is_mine")
    )


def _candidate(
    cause: str, pairs: DataFrame, at: Column, detail: Column, source=None, line=None, evidence=None
) -> DataFrame:
    """One cause's candidate rows; ``evidence``: the table of its evidence row when it is not the
    cause's usual one (a candidate resting on it outranks the cause's others)."""
    return pairs.select(
        *[F.col(f"g.{c}").alias(c) for c in _ROW],
        F.lit(RANK[cause]).alias("_rank"),
        F.lit(0 if evidence else 1).alias("_strength"),
        F.lit(cause).alias("cause"),
        F.lit(evidence or EVIDENCE_TABLE[cause]).alias("cause_evidence"),
        (F.col(source) if source else F.lit(None).cast("string")).alias("cause_source_file"),
        (F.col(line) if line else F.lit(None).cast("long")).alias("cause_line_no"),
        at.alias("cause_at"),
        detail.alias("cause_detail"),
    )


def _logged(regressions: DataFrame, resets: DataFrame) -> list[DataFrame]:
    """admin_reset and server_correction candidates: each regression with the lines that may explain it."""
    near = (
        (F.col("r.reset_at") >= F.col("g.detected_at") - _seconds(LOOKBACK_SECONDS))
        & (F.col("r.reset_at") <= F.col("g.detected_at") + _seconds(SLACK_SECONDS))
        & (
            F.col("g._previous_regression_at").isNull()
            | (F.col("g._previous_regression_at") < F.col("r.reset_at") - _seconds(SLACK_SECONDS))
        )
    )
    same_broker = (F.col("g.cluster") == F.col("r.cluster")) & (F.col("g.broker") == F.col("r.broker"))
    names = lambda c: F.col(f"r.{c}").isNull() | (F.col(f"r.{c}") == F.col(f"g.{c}"))  # noqa: E731
    is_reset = (
        F.col("r.reset_kind").isin(*RESET_KINDS)
        & (F.col("r.topic") == F.col("g.topic"))
        & (F.col("r.consumer_group") == F.col("g.consumer_group"))
    )
    is_correction = (
        F.col("r.reset_kind").isin(*CORRECTION_KINDS)
        & names("topic")
        & names("consumer_group")
        & (F.col("r.new_offset").isNull() | (F.col("r.new_offset") == F.col("g.offset")))
        & (F.col("r.topic").isNotNull() | F.col("r.new_offset").isNotNull())
    )
    pairs = regressions.alias("g").join(
        resets.alias("r"), on=[same_broker, near, is_reset | is_correction], how="inner"
    )
    detail = F.concat_ws(
        " ",
        F.col("r.reset_kind"),
        F.lit("at"),
        _when(F.col("r.reset_at")),
        F.when(F.col("r.client_id").isNotNull(), F.concat(F.lit("by "), F.col("r.client_id"))),
        F.when(F.col("r.new_offset").isNotNull(), F.concat(F.lit("to offset "), F.col("r.new_offset"))),
    )
    kind = F.when(F.col("r.reset_kind").isin(*RESET_KINDS), "admin_reset").otherwise("server_correction")
    return [
        _candidate(
            cause, pairs.where(kind == cause), F.col("r.reset_at"), detail, "r.source_file", "r.line_no"
        )
        for cause in ("admin_reset", "server_correction")
    ]


def _rewound_to_min(regressions: DataFrame, queue_offsets: DataFrame) -> DataFrame:
    """rewind_to_min candidates: the min offset the broker reported last before the regression."""
    mins = queue_offsets.where(F.col("min_offset").isNotNull())
    same_queue = [F.col(f"g.{c}") == F.col(f"m.{c}") for c in ("cluster", "broker", "topic", "queue_id")]
    recent = (F.col("m.observed_at") <= F.col("g.detected_at")) & (
        F.col("m.observed_at") >= F.col("g.detected_at") - _seconds(MIN_OFFSET_MAX_AGE_SECONDS)
    )
    latest = Window.partitionBy(*[F.col(f"g.{c}") for c in _ROW]).orderBy(
        F.col("m.observed_at").desc(), F.col("m.source_file"), F.col("m.line_no")
    )
    last_seen = (
        regressions.alias("g")
        .join(mins.alias("m"), on=[*same_queue, recent], how="inner")
        .withColumn("_n", F.row_number().over(latest))
        .where((F.col("_n") == 1) & (F.col("g.offset") == F.col("m.min_offset")))
    )
    detail = F.format_string(
        "offset %d is the queue's min offset the broker reported at %s",
        F.col("m.min_offset"),
        _when(F.col("m.observed_at")),
    )
    return _candidate(
        "rewind_to_min", last_seen, F.col("m.observed_at"), detail, "m.source_file", "m.line_no"
    )


def _membership(regressions: DataFrame, connections: DataFrame) -> list[DataFrame]:
    """client_seek and stale_commit candidates from the group's last consumerConnection output
    before each commit regression (bronze/group_connections, at most CONNECTION_MAX_AGE_SECONDS
    earlier): a pull group's commit is a seek; a push group's commit by a host absent from it is stale."""
    outputs = connections.groupBy("cluster", "consumer_group", "observed_at", "source_file").agg(
        F.max("consume_type").alias("consume_type"),
        F.collect_set("client_host").alias("hosts"),
        F.min("line_no").alias("line_no"),
    )
    same_group = (F.col("g.cluster") == F.col("o.cluster")) & (
        F.col("g.consumer_group") == F.col("o.consumer_group")
    )
    recent = (F.col("o.observed_at") <= F.col("g.detected_at")) & (
        F.col("o.observed_at") >= F.col("g.detected_at") - _seconds(CONNECTION_MAX_AGE_SECONDS)
    )
    latest = Window.partitionBy(*[F.col(f"g.{c}") for c in _ROW]).orderBy(
        F.col("o.observed_at").desc(), F.col("o.source_file").desc()
    )
    last_seen = (
        regressions.alias("g")
        .where(F.col("g.evidence") == "commit")
        .join(outputs.alias("o"), on=[same_group, recent], how="inner")
        .withColumn("_n", F.row_number().over(latest))
        .where(F.col("_n") == 1)
    )
    is_pull = F.coalesce(F.col("o.consume_type") == PULL, F.lit(False))
    seek_detail = F.format_string(
        f"the group consumed by pull ({PULL} at %s): its commits may move back",
        _when(F.col("o.observed_at")),
    )
    absent = (
        ~is_pull & F.col("g.client_host").isNotNull() & ~F.array_contains("o.hosts", F.col("g.client_host"))
    )
    absent_detail = F.format_string(
        "%s was not among the group's %d clients at %s: it no longer owned the queue",
        F.col("g.client_host"), F.size("o.hosts"), _when(F.col("o.observed_at")),
    )  # fmt: skip
    at, source, line = F.col("o.observed_at"), "o.source_file", "o.line_no"
    return [
        _candidate("client_seek", last_seen.where(is_pull), at, seek_detail, source, line),
        _candidate("stale_commit", last_seen.where(absent), at, absent_detail, source, line,
                   evidence="bronze/group_connections"),
    ]  # fmt: skip


def _observed(regressions: DataFrame) -> list[DataFrame]:
    """stale_commit and failover candidates: what the replay itself saw before the regression."""
    g = regressions.alias("g")
    moved = F.col("g._previous_commit_host") != F.col("g.client_host")
    stale = g.where(
        (F.col("g.evidence") == "commit")
        & F.col("g._previous_commit_host").isNotNull()
        & F.col("g.client_host").isNotNull()
    )
    stale_detail = F.when(
        moved,
        F.format_string(
            "the queue was last committed by %s at %s: %s no longer held it",
            F.col("g._previous_commit_host"), _when(F.col("g._previous_commit_at")), F.col("g.client_host"),
        ),
    ).otherwise(
        F.format_string("below the client's own previous commit at %s", _when(F.col("g._previous_commit_at")))
    )  # fmt: skip
    # a broadcasting client's own offsets going back is no broker's failover
    failed_over = g.where(
        F.col("g.evidence").isin(*SNAPSHOT_EVIDENCE) & (F.col("g.key_kind") != CLIENT_STATE_KIND)
    )
    failover_detail = F.when(
        F.col("g.evidence") == "snapshot_pair",
        F.format_string("snapshot holds %d, below the previous snapshot's %d", F.col("g.offset"), F.col("g.stored_offset")),
    ).otherwise(
        F.format_string(
            "snapshot holds %d, below the commit of %d at %s", F.col("g.offset"), F.col("g.stored_offset"),
            _when(F.col("g._previous_commit_at")),
        )
    )  # fmt: skip
    return [
        _candidate("stale_commit", stale, F.col("g._previous_commit_at"), stale_detail),
        _candidate("failover", failed_over, F.col("g.detected_at"), failover_detail, "g.source_file"),
    ]


def with_causes(
    regressions: DataFrame,
    earlier: DataFrame,
    resets: DataFrame,
    queue_offsets: DataFrame,
    connections: DataFrame,
) -> DataFrame:
    """Add ``CAUSE_COLUMNS`` to the replay's regressions (see the module docstring).

    Needs: the replay's regression rows (with ``_previous_commit_at``/``_previous_commit_host``);
    ``earlier``, silver/offset_regressions of the ``LOOKBACK_SECONDS`` before the interval;
    bronze/offset_resets, bronze/queue_offsets and bronze/group_connections rows from the
    look-backs before it on.
    """
    queued = with_previous_regression(regressions, earlier)
    candidates = [
        *_logged(queued, resets),
        _rewound_to_min(queued, queue_offsets),
        *_membership(queued, connections),
        *_observed(queued),
    ]
    first = Window.partitionBy(*_ROW).orderBy(
        "_rank", "_strength", F.col("cause_at").desc(), "cause_source_file", "cause_line_no", "cause_detail"
    )
    chosen = (
        union_all(candidates)
        .withColumn("_n", F.row_number().over(first))
        .where(F.col("_n") == 1)
        .drop("_n", "_rank", "_strength")
    )
    return queued.join(chosen, on=list(_ROW), how="left").withColumn(
        "cause", F.coalesce(F.col("cause"), F.lit("unexplained"))
    )
