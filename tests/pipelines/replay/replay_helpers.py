"""Tiny bronze frames for replay tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType, TimestampType

from schemas.tables import REPLAY_CHECKPOINTS

T0 = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)

COMMIT_SCHEMA = StructType(
    [
        StructField("cluster", StringType()),
        StructField("broker", StringType()),
        StructField("topic", StringType()),
        StructField("consumer_group", StringType()),
        StructField("queue_id", IntegerType()),
        StructField("key_kind", StringType()),
        StructField("committed_at", TimestampType()),
        StructField("offset", LongType()),
        StructField("client_host", StringType()),
        StructField("evidence", StringType()),
        StructField("commit_path", StringType()),
        StructField("source_file", StringType()),
        StructField("line_no", LongType()),
        StructField("_file_hash", StringType()),
    ]
)
SNAPSHOT_SCHEMA = StructType(
    [
        StructField("cluster", StringType()),
        StructField("broker", StringType()),
        StructField("topic", StringType()),
        StructField("consumer_group", StringType()),
        StructField("queue_id", IntegerType()),
        StructField("key_kind", StringType()),
        StructField("snapshot_at", TimestampType()),
        StructField("offset", LongType()),
        StructField("snapshot_source", StringType()),
        StructField("source_file", StringType()),
        StructField("_file_hash", StringType()),
        StructField("client_id", StringType()),
    ]
)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def commit(
    seconds,
    offset,
    line,
    *,
    queue=0,
    host="10.0.0.1:5000",
    evidence="commit_log",
    file="c.jsonl",
    group="g",
    version="",
):
    return (
        "c1",
        "broker-a",
        "t",
        group,
        queue,
        "normal",
        at(seconds),
        offset,
        host,
        evidence,
        "update_offset",
        file,
        line,
        "h-" + file + version,
    )


def snapshot(seconds, offset, *, queue=0, source="main", group="g"):
    name = "consumerOffset.json" + (".bak" if source == "bak" else "")
    return (
        "c1",
        "broker-a",
        "t",
        group,
        queue,
        "normal",
        at(seconds),
        offset,
        source,
        f"snap/{seconds}/{name}",
        f"h-snap/{seconds}/{name}",
        None,
    )


def frames(spark, commits, snapshots):
    return spark.createDataFrame(commits, COMMIT_SCHEMA), spark.createDataFrame(snapshots, SNAPSHOT_SCHEMA)


def empty_seed(spark):
    return spark.createDataFrame([], REPLAY_CHECKPOINTS.schema).drop("as_of")
