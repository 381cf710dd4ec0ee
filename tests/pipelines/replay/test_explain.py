"""Why each regression happened: one row per rule of pipelines.replay.explain, and their order."""

from __future__ import annotations

from pyspark.sql.types import (
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from pipelines.replay.explain import CAUSES, with_causes
from schemas.quality import REGRESSION_CAUSES
from tests.frames import rows
from tests.pipelines.replay.replay_helpers import at

_KEY = [StructField(c, StringType()) for c in ("cluster", "broker", "topic", "consumer_group")] + [
    StructField("queue_id", IntegerType())
]
REGRESSIONS = StructType(
    _KEY
    + [
        StructField("detected_at", TimestampType()),
        StructField("evidence", StringType()),
        StructField("observation_seq", StringType()),
        StructField("offset", LongType()),
        StructField("stored_offset", LongType()),
        StructField("client_host", StringType()),
        StructField("source_file", StringType()),
        StructField("_previous_commit_at", TimestampType()),
        StructField("_previous_commit_host", StringType()),
        StructField("key_kind", StringType()),
    ]
)
RESETS = StructType(
    [StructField(c, StringType()) for c in ("cluster", "broker", "topic", "consumer_group")]
    + [
        StructField("reset_at", TimestampType()),
        StructField("reset_kind", StringType()),
        StructField("client_id", StringType()),
        StructField("new_offset", LongType()),
        StructField("source_file", StringType()),
        StructField("line_no", LongType()),
    ]
)
QUEUE_OFFSETS = StructType(
    [StructField(c, StringType()) for c in ("cluster", "broker", "topic")]
    + [
        StructField("queue_id", IntegerType()),
        StructField("observed_at", TimestampType()),
        StructField("min_offset", LongType()),
        StructField("source_file", StringType()),
        StructField("line_no", LongType()),
    ]
)
CONNECTIONS = StructType(
    [StructField(c, StringType()) for c in ("cluster", "consumer_group")]
    + [
        StructField("observed_at", TimestampType()),
        StructField("client_host", StringType()),
        StructField("consume_type", StringType()),
        StructField("source_file", StringType()),
        StructField("line_no", LongType()),
    ]
)
A, B = "10.0.0.1:5000", "10.0.0.2:6000"


def regression(
    queue,
    seconds,
    offset,
    *,
    evidence="commit",
    host=A,
    previous=None,
    previous_at=None,
    group="h",
    kind="normal",
):
    return ("c1", "broker-a", "t", group, queue, at(seconds), evidence, f"1|f|{seconds}", offset, offset + 10,
            host if evidence == "commit" else None, f"file-{queue}", previous_at, previous, kind)  # fmt: skip


def reset(seconds, kind, *, client=None, new_offset=None, topic="t", group="h", line=1):
    return ("c1", "broker-a", topic, group, at(seconds), kind, client, new_offset, "broker.log", line)


def test_each_regression_gets_the_first_cause_whose_evidence_holds(spark):
    regressions = spark.createDataFrame(
        [
            regression(0, 3, 50, host=B, previous=A, previous_at=at(-2), group="g"),  # the reset's
            regression(
                0, 240, 40, host=B, previous=A, previous_at=at(230), group="g"
            ),  # later: not the reset's
            regression(1, 60, 500, previous=A, previous_at=at(55)),  # the broker moved it
            regression(2, 120, 7, previous=A, previous_at=at(115)),  # the queue's min offset
            regression(3, 180, 90, evidence="snapshot_behind_commit", previous_at=at(100)),
            regression(4, 180, 90, host=None),  # a commit with no client known before it
            regression(5, 60, 30, host=B, previous=B, previous_at=at(50), group="k"),  # another came first
        ],
        REGRESSIONS,
    )
    earlier = spark.createDataFrame([regression(5, 1.5, 35, group="k")], REGRESSIONS)  # the previous run's
    resets = spark.createDataFrame(
        [
            reset(-700, "reset_success", client="10.0.0.1@77", group="g"),  # too early
            reset(2, "reset_started", client="10.0.9.5:4411", group="g", line=2),
            reset(2, "reset_started", client="10.0.9.5:4411", group="k", line=6),
            reset(59, "pull_offset_moved", new_offset=500, line=3),
            reset(59, "pull_offset_moved", new_offset=499, line=4),  # another offset: not this one
            reset(100, "offset_overflow", new_offset=7, topic=None, group=None, line=5),  # names 7: see q2
        ],
        RESETS,
    )
    mins = spark.createDataFrame(
        [
            ("c1", "broker-a", "t", 2, at(-300), 7, "topicStatus-t.txt", 3),
            ("c1", "broker-a", "t", 1, at(-300), 500, "topicStatus-t.txt", 2),  # q1: the log line comes first
        ],
        QUEUE_OFFSETS,
    )
    got = with_causes(regressions, earlier, resets, mins, spark.createDataFrame([], CONNECTIONS))
    columns = ("queue_id", "detected_at", "cause", "cause_evidence", "cause_source_file", "cause_line_no", "cause_at",
               "cause_detail")  # fmt: skip
    assert rows(got, *columns) == [
        (0, at(3), "admin_reset", "bronze/offset_resets", "broker.log", 2, at(2),
         "reset_started at 2026-11-21 10:00:02 by 10.0.9.5:4411"),
        (0, at(240), "stale_commit", "silver/offset_commits_replayed", None, None, at(230),
         f"the queue was last committed by {A} at 2026-11-21 10:03:50: {B} no longer held it"),
        (1, at(60), "server_correction", "bronze/offset_resets", "broker.log", 3, at(59),
         "pull_offset_moved at 2026-11-21 10:00:59 to offset 500"),
        (2, at(120), "server_correction", "bronze/offset_resets", "broker.log", 5, at(100),
         "offset_overflow at 2026-11-21 10:01:40 to offset 7"),
        (3, at(180), "failover", "bronze/offset_snapshots", "file-3", None, at(180),
         "snapshot holds 90, below the commit of 100 at 2026-11-21 10:01:40"),
        (4, at(180), "unexplained", None, None, None, None, None),
        (5, at(60), "stale_commit", "silver/offset_commits_replayed", None, None, at(50),
         "below the client's own previous commit at 2026-11-21 10:00:50"),
    ]  # fmt: skip


def test_the_broker_min_offset_explains_a_rewind_no_line_explains(spark):
    regressions = spark.createDataFrame(
        [regression(2, 120, 7, previous=A, previous_at=at(115)), regression(2, 4000, 8, previous=A)],
        REGRESSIONS,
    )
    mins = spark.createDataFrame(
        [
            ("c1", "broker-a", "t", 2, at(-300), 6, "topicStatus-t.txt", 3),
            ("c1", "broker-a", "t", 2, at(60), 7, "topicStatus-t.txt", 3),  # the last before: this one
            ("c1", "broker-a", "t", 2, at(200), 8, "topicStatus-t.txt", 3),  # more than an hour before 4000 s
        ],
        QUEUE_OFFSETS,
    )
    no_resets = spark.createDataFrame([], RESETS)
    got = with_causes(
        regressions, regressions.limit(0), no_resets, mins, spark.createDataFrame([], CONNECTIONS)
    )
    assert rows(got, "detected_at", "cause", "cause_at") == [
        (at(120), "rewind_to_min", at(60)),
        (at(4000), "stale_commit", None),
    ]


def connection(seconds, group, host, consume_type="CONSUME_PASSIVELY", line=4):
    return ("c1", group, at(seconds), host, consume_type, f"consumerConnection-{group}.txt", line)


def test_the_groups_membership_tells_a_seek_from_a_stale_commit(spark):
    regressions = spark.createDataFrame(
        [
            regression(
                0, 100, 50, host=B, previous=A, previous_at=at(90), group="pull"
            ),  # a pull group seeks
            regression(1, 100, 50, host=B, previous=A, previous_at=at(90), group="push"),  # B had left
            regression(2, 100, 50, host=A, previous=B, previous_at=at(90), group="push"),  # A is in: moved
            regression(3, 100, 50, host=B, previous=A, previous_at=at(90), group="gone"),  # output too old
            regression(4, 100, 50, evidence="snapshot_pair", group="pull"),  # a snapshot: no client's doing
            regression(
                6, 100, 50, host=B, previous=A, previous_at=at(90), group="empty"
            ),  # nobody was online
            # a broadcasting client's own offsets going back: no broker failed over
            regression(
                5, 100, 50, evidence="snapshot_pair", group="pull@10.0.0.5@DEFAULT", kind="broadcast_client"
            ),
        ],
        REGRESSIONS,
    )
    connections = spark.createDataFrame(
        [
            connection(-3000, "pull", A, "CONSUME_PASSIVELY"),  # an earlier output: not the last before
            connection(60, "pull", A, "CONSUME_ACTIVELY"),
            connection(30, "push", B, line=4),  # B was there, then left
            connection(60, "push", A, line=4),
            connection(60, "push", "10.0.0.3:7000", line=5),
            connection(-3600, "gone", A),
            connection(60, "empty", None, None),  # the group was not online
        ],
        CONNECTIONS,
    )
    none = spark.createDataFrame([], RESETS)
    got = with_causes(
        regressions, regressions.limit(0), none, spark.createDataFrame([], QUEUE_OFFSETS), connections
    )
    columns = (
        "queue_id",
        "cause",
        "cause_evidence",
        "cause_source_file",
        "cause_line_no",
        "cause_at",
        "cause_detail",
    )
    assert rows(got, *columns) == [
        (0, "client_seek", "bronze/group_connections", "consumerConnection-pull.txt", 4, at(60),
         "the group consumed by pull (CONSUME_ACTIVELY at 2026-11-21 10:01:00): its commits may move back"),
        (1, "stale_commit", "bronze/group_connections", "consumerConnection-push.txt", 4, at(60),
         f"{B} was not among the group's 2 clients at 2026-11-21 10:01:00: it no longer owned the queue"),
        (2, "stale_commit", "silver/offset_commits_replayed", None, None, at(90),
         f"the queue was last committed by {B} at 2026-11-21 10:01:30: {A} no longer held it"),
        (3, "stale_commit", "silver/offset_commits_replayed", None, None, at(90),
         f"the queue was last committed by {A} at 2026-11-21 10:01:30: {B} no longer held it"),
        (4, "failover", "bronze/offset_snapshots", "file-4", None, at(100),
         "snapshot holds 50, below the previous snapshot's 60"),
        (5, "unexplained", None, None, None, None, None),
        (6, "stale_commit", "bronze/group_connections", "consumerConnection-empty.txt", 4, at(60),
         f"{B} was not among the group's 0 clients at 2026-11-21 10:01:00: it no longer owned the queue"),
    ]  # fmt: skip


def test_the_causes_are_the_documented_codes():
    assert tuple(c.name for c in CAUSES) == REGRESSION_CAUSES
