"""Consume throughput per tumbling window, and the one rule of where a window starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pyspark.sql import functions as F

from pipelines.marts.throughput import consume_throughput
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
