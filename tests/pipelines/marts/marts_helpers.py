"""Tiny silver rows for the marts' tests."""

from __future__ import annotations

from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

from tests.pipelines.replay.replay_helpers import at

KEY = [
    StructField("cluster", StringType()),
    StructField("broker", StringType()),
    StructField("topic", StringType()),
    StructField("consumer_group", StringType()),
    StructField("queue_id", IntegerType()),
]
TIMELINE = StructType(
    KEY
    + [
        StructField("observed_at", TimestampType()),
        StructField("observation_seq", StringType()),
        StructField("stored_offset", LongType()),
        StructField("consumed_increment", LongType()),
    ]
)


def stored(seconds, offset, increment=0, *, queue=0, group="g", broker="broker-a"):
    return ("c1", broker, "t", group, queue, at(seconds), f"1|f|{seconds}", offset, increment)
