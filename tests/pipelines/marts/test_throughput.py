"""Produce and consume throughput per tumbling window, and the one rule of where a window starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

from pipelines.marts.throughput import consume_throughput, produce_throughput
from pipelines.marts.windows import window_start, window_start_column
from tests.frames import rows
from tests.pipelines.marts.marts_helpers import TIMELINE, stored
from tests.pipelines.replay.replay_helpers import at

HOUR = timedelta(hours=1)
EDGES = [
    datetime(2026, 11, 21, 10, 0, tzinfo=UTC),
    datetime(2026, 11, 21, 10, 59, 59, 999_999, tzinfo=UTC),
    datetime(2026, 11, 21, 11, 0, 0, 1, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
]


def test_a_window_starts_at_a_multiple_of_its_length_since_the_epoch():
    assert [window_start(t, HOUR) for t in EDGES] == [
        EDGES[0],
        EDGES[0],
        EDGES[2].replace(microsecond=0),
        EDGES[3],
    ]
    assert window_start(datetime(2026, 11, 21, 10, 7, 30), timedelta(minutes=5)) == datetime(
        2026, 11, 21, 10, 5, tzinfo=UTC
    )
    with pytest.raises(ValueError, match="whole number of seconds"):
        window_start(EDGES[0], timedelta(milliseconds=1500))


def test_spark_puts_every_instant_in_the_window_python_does(spark):
    got = spark.createDataFrame([(t,) for t in EDGES], "at timestamp").select(
        window_start_column(F.col("at"), HOUR).alias("w")
    )
    assert [r.w.astimezone(UTC) for r in got.collect()] == [window_start(t, HOUR) for t in EDGES]


def test_throughput_sums_positive_increments_in_the_later_observations_window(spark):
    timeline = spark.createDataFrame(
        [
            stored(-10, 100, 0),
            stored(5, 130, 30),
            stored(3590, 160, 30),
            stored(3600, 150, 0),
            stored(3700, 200, 50),
        ],
        TIMELINE,
    )
    got = consume_throughput(timeline, timedelta(hours=1))
    assert rows(
        got, "window_start", "window_end", "messages_consumed", "messages_per_second", "observations"
    ) == [
        (at(-3600), at(0), 0, 0.0, 1),
        (at(0), at(3600), 60, 60 / 3600, 2),
        (at(3600), at(7200), 50, 50 / 3600, 2),
    ]


POINTS = StructType(
    [StructField(c, StringType()) for c in ("cluster", "broker", "topic")]
    + [
        StructField("queue_id", IntegerType()),
        StructField("observed_at", TimestampType()),
        StructField("max_offset", LongType()),
    ]
)


def point(seconds, max_offset, queue=0, topic="t"):
    return ("c1", "broker-a", topic, queue, at(seconds), max_offset)


def test_produce_throughput_counts_growth_and_flags_a_decrease_without_subtracting_it(spark):
    points = spark.createDataFrame(
        [
            point(-600, 100),
            point(300, 160),  # 60 in the window from 0
            point(1200, 40),  # the queue was truncated: flagged, not -120
            point(2400, 70),  # 30
            point(-9000, 5, queue=1),
            point(
                300, 50, queue=1
            ),  # its previous observation is more than the history before it: not paired
        ],
        POINTS,
    )
    got = produce_throughput(points, HOUR, timedelta(hours=2))
    assert rows(got, "queue_id", "window_start", "messages_produced", "messages_per_second", "observations",
                "max_offset_decreases", "max_offset") == [
        (0, at(-3600), 0, 0.0, 1, 0, 100),
        (0, at(0), 90, 90 / 3600, 3, 1, 160),
        (1, at(-10800), 0, 0.0, 1, 0, 5),
        (1, at(0), 0, 0.0, 1, 0, 50),
    ]  # fmt: skip


def test_the_group_rollup_shows_the_topics_production_beside_its_consumption(spark):
    timeline = spark.createDataFrame([stored(5, 130, 30), stored(3700, 200, 70)], TIMELINE)
    points = spark.createDataFrame(
        [
            point(0, 10),
            point(60, 70),
            point(0, 0, queue=1),
            point(60, 40, queue=1),
            point(60, 9, topic="other"),
        ],
        POINTS,
    )
    produced = produce_throughput(points, HOUR, HOUR)
    got = consume_throughput(timeline, HOUR, produced)
    assert rows(got, "window_start", "messages_consumed", "messages_produced", "produced_per_second") == [
        (at(0), 30, 100, 100 / 3600),
        (at(3600), 70, None, None),  # no max offset observed in that window
    ]
