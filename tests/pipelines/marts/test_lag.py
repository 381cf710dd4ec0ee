"""Lag and throughput marts on tiny inline data."""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from pipelines.marts.lag import (
    broker_offset_observations,
    consumer_lag,
    consumer_lag_by_group,
    max_offset_points,
    with_lag_seconds,
)
from tests.frames import rows
from tests.pipelines.marts.marts_helpers import KEY, TIMELINE, stored
from tests.pipelines.replay.replay_helpers import at, empty_seed

QUEUE_OFFSETS = StructType(
    KEY
    + [
        StructField("observed_at", TimestampType()),
        StructField("max_offset", LongType()),
        StructField("min_offset", LongType()),
        StructField("consumer_offset", LongType()),
        StructField("evidence", StringType()),
        StructField("source_file", StringType()),
        StructField("line_no", LongType()),
    ]
)


def queue_offset(
    seconds, max_offset, *, group=None, queue=0, consumer=None, evidence="topic_status", broker="broker-a"
):
    return (
        "c1",
        broker,
        "t",
        group,
        queue,
        at(seconds),
        max_offset,
        0,
        consumer,
        evidence,
        f"{evidence}.txt",
        queue + 1,
    )


def test_topic_status_fans_out_to_known_groups_and_progress_takes_precedence(spark):
    offsets = spark.createDataFrame(
        [
            queue_offset(60, 100),
            queue_offset(60, 101, group="g2", consumer=99, evidence="consumer_progress"),
            queue_offset(60, 7, group=None, broker="broker-z"),  # no group known there: no row
        ],
        QUEUE_OFFSETS,
    )
    known = spark.createDataFrame(
        [("c1", "broker-a", "t", "g", 0), ("c1", "broker-a", "t", "g2", 0)], StructType(KEY)
    )
    got = broker_offset_observations(offsets, known)
    assert rows(got, "consumer_group", "broker_offset", "reported_consumer_offset") == [
        ("g", 100, None),
        ("g2", 101, 99),
    ]


def test_lag_uses_the_stored_offset_as_of_each_observation(spark):
    timeline = spark.createDataFrame([stored(0, 90), stored(120, 95), stored(300, 130)], TIMELINE)
    known = timeline.select("cluster", "broker", "topic", "consumer_group", "queue_id")
    offsets = spark.createDataFrame(
        [queue_offset(0, 100), queue_offset(300, 120), queue_offset(200, 110)], QUEUE_OFFSETS
    )
    lag = consumer_lag(broker_offset_observations(offsets, known), timeline, empty_seed(spark))
    assert rows(
        lag, "observed_at", "broker_offset", "consumer_offset", "consumer_offset_at", "lag_messages"
    ) == [
        (at(0), 100, 90, at(0), 10),
        (at(200), 110, 95, at(120), 15),
        (at(300), 120, 130, at(300), -10),  # signed: consumer ahead of the observed max
    ]


def test_each_queue_reads_its_own_stored_offsets(spark):
    # the window runs over the observed queues numbered; a number must stand for one queue only
    timeline = spark.createDataFrame(
        [
            stored(0, 90),
            stored(0, 500, queue=1),
            stored(0, 700, group="g2"),
            stored(0, 900, broker="broker-b"),
            stored(5, 999, queue=7),  # a queue never observed
            stored(60, 95, queue=1),
            stored(60, 96, queue=1),
        ],
        TIMELINE,
    )
    timeline = timeline.withColumn(
        "observation_seq", F.concat("observation_seq", F.col("stored_offset").cast("string"))
    )
    known = timeline.select("cluster", "broker", "topic", "consumer_group", "queue_id")
    offsets = spark.createDataFrame(
        [queue_offset(30, 1000, queue=q) for q in (0, 1)]
        + [queue_offset(60, 1000, queue=1), queue_offset(30, 1000, broker="broker-b")],
        QUEUE_OFFSETS,
    )
    lag = consumer_lag(broker_offset_observations(offsets, known), timeline, empty_seed(spark))
    assert rows(lag, "broker", "consumer_group", "queue_id", "observed_at", "consumer_offset") == [
        ("broker-a", "g", 0, at(30), 90),
        ("broker-a", "g", 1, at(30), 500),
        ("broker-a", "g", 1, at(60), 96),  # of two stored at the same instant, the later in observation_seq
        ("broker-a", "g2", 0, at(30), 700),
        ("broker-a", "g2", 1, at(30), None),  # topicStatus rows stand for every group of the topic
        ("broker-a", "g2", 1, at(60), None),
        ("broker-b", "g", 0, at(30), 900),
    ]


def test_lag_before_any_interval_observation_comes_from_the_checkpoint(spark):
    seed = empty_seed(spark).unionByName(
        spark.createDataFrame(
            [("c1", "broker-a", "t", "g", 0, "normal", None, None, None, None, None, None, 0, at(-60), 80)],
            empty_seed(spark).schema,
        )
    )
    timeline = spark.createDataFrame([], TIMELINE)
    offsets = spark.createDataFrame([queue_offset(10, 100)], QUEUE_OFFSETS)
    known = seed.select("cluster", "broker", "topic", "consumer_group", "queue_id")
    lag = consumer_lag(broker_offset_observations(offsets, known), timeline, seed)
    assert rows(lag, "consumer_offset", "consumer_offset_at", "lag_messages") == [(80, at(-60), 20)]


def test_group_rollup_sums_queues_and_names_the_worst(spark):
    timeline = spark.createDataFrame(
        [stored(0, 90, queue=0), stored(0, 50, queue=1), stored(0, 1, queue=2)], TIMELINE
    )
    known = timeline.select("cluster", "broker", "topic", "consumer_group", "queue_id")
    offsets = spark.createDataFrame(
        [queue_offset(0, 100, queue=0), queue_offset(0, 80, queue=1)], QUEUE_OFFSETS
    )
    lag = consumer_lag(broker_offset_observations(offsets, known), timeline, empty_seed(spark))
    rollup = consumer_lag_by_group(with_lag_seconds(lag, max_offset_points(offsets), timedelta(days=1)))
    assert rows(
        rollup,
        "consumer_group",
        "observed_at",
        "queues",
        "total_lag_messages",
        "worst_lag_messages",
        "worst_broker",
        "worst_queue_id",
        "worst_lag_seconds",
        "is_worst_lag_seconds_bounded",
    ) == [("g", at(0), 2, 40, 30, "broker-a", 1, 0.0, True)]  # nothing before 0: both offsets are older


def test_lag_in_seconds_reads_the_max_offset_history_of_its_broker_queue(spark):
    # a producer of one message a second: the log end is at 1000 + t at second t
    offsets = spark.createDataFrame(
        [queue_offset(t, 1000 + t) for t in (0, 60, 120)]
        + [queue_offset(t, 5000 + t, queue=1) for t in (0, 60, 120)]
        + [queue_offset(120, 1120, group="g2", consumer=1000, evidence="consumer_progress")],
        QUEUE_OFFSETS,
    )
    timeline = spark.createDataFrame(
        [stored(110, 1030), stored(110, 5120, queue=1), stored(110, 990, group="g2")], TIMELINE
    )
    known = timeline.select("cluster", "broker", "topic", "consumer_group", "queue_id")
    lag = consumer_lag(broker_offset_observations(offsets, known), timeline, empty_seed(spark))
    got = with_lag_seconds(lag, max_offset_points(offsets), timedelta(days=1))
    assert rows(got, "consumer_group", "queue_id", "observed_at", "lag_messages", "lag_seconds", "is_lag_seconds_bounded") == [
        ("g", 0, at(0), None, None, None),
        ("g", 0, at(60), None, None, None),
        ("g", 0, at(120), 90, 90.0, False),  # 1030 was the log end at 30 s
        ("g", 1, at(0), None, None, None),
        ("g", 1, at(60), None, None, None),
        ("g", 1, at(120), 0, 0.0, False),  # caught up
        ("g2", 0, at(0), None, None, None),
        ("g2", 0, at(60), None, None, None),
        ("g2", 0, at(120), 130, 120.0, True),  # 990: before the first observation, at least 120 s
        ("g2", 1, at(0), None, None, None),  # topicStatus rows stand for every group of the topic
        ("g2", 1, at(60), None, None, None),
        ("g2", 1, at(120), None, None, None),
    ]  # fmt: skip
