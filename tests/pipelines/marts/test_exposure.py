"""Duplicate exposure per group and day, on tiny inline regressions."""

from __future__ import annotations

from datetime import UTC, datetime

from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

from pipelines.marts.exposure import duplicate_exposure
from tests.frames import rows

REGRESSIONS = StructType(
    [StructField(c, StringType()) for c in ("cluster", "broker", "topic", "consumer_group")]
    + [
        StructField("queue_id", IntegerType()),
        StructField("detected_at", TimestampType()),
        StructField("regression_size", LongType()),
        StructField("messages_consumed_twice", LongType()),
        StructField("cause", StringType()),
    ]
)


def at(hour: int, day: int = 21) -> datetime:
    return datetime(2026, 11, day, hour, tzinfo=UTC)


def test_the_days_extra_deliveries_are_the_sizes_summed_and_the_unintended_leave_out_resets(spark):
    regressions = spark.createDataFrame(
        [
            ("c1", "broker-a", "t", "g", 0, at(10), 900, 900, "admin_reset"),
            ("c1", "broker-a", "t", "g", 1, at(11), 60, 60, "stale_commit"),
            # before q1 caught up: sends back 30 of the stale commit's 60 again, and 40 more
            ("c1", "broker-a", "t", "g", 1, at(12), 40, 70, "unexplained"),
            ("c1", "broker-b", "t", "g", 1, at(1, day=22), 5, 5, "failover"),  # the next day
        ],
        REGRESSIONS,
    )
    got = duplicate_exposure(regressions)
    assert rows(got, "day_start", "regressions", "queues", "extra_deliveries", "unintended_extra_deliveries",
                "largest_messages_consumed_twice", "unexplained_regressions", "first_detected_at",
                "last_detected_at") == [
        (at(0), 3, 2, 1000, 100, 900, 1, at(10), at(12)),
        (at(0, day=22), 1, 1, 5, 5, 5, 0, at(1, day=22), at(1, day=22)),
    ]  # fmt: skip
