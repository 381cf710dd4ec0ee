"""Gold lag marts: consumer lag per queue and per group, in messages and in seconds.

Lag pairs each observation of a broker's offsets (``mqadmin`` outputs in
bronze/queue_offsets) with the consumer offset the replay says was stored at that instant;
lag in seconds reads the queue's max-offset history (pipelines.marts.time_lag).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, DoubleType, StructField, StructType

from pipelines.marts.time_lag import AT_MICROS, IS_POINT, OFFSET, QUEUE_NUMBER, lag_seconds_rows
from pipelines.replay.events import QUEUE_ID, numbered, with_id
from schemas.tables import QUEUE_KEY

# a queue of a broker, whatever group reads it: what a max offset is observed for
BROKER_QUEUE = ("cluster", "broker", "topic", "queue_id")


def broker_offset_observations(queue_offsets: DataFrame, known_queues: DataFrame) -> DataFrame:
    """One row per (queue key, observed_at) with the broker's max offset.

    ``consumerProgress`` rows name their group; a ``topicStatus`` row (no group) stands for
    every group known to consume that topic on that broker (``known_queues``: QUEUE_KEY rows).
    Where both give the same queue and instant, the group's own ``consumerProgress`` row is used.
    """
    observed = queue_offsets.where(F.col("max_offset").isNotNull())
    groups = known_queues.select("cluster", "broker", "topic", "consumer_group").distinct()
    per_group = observed.where(F.col("consumer_group").isNotNull())
    fanned = (
        observed.where(F.col("consumer_group").isNull())
        .drop("consumer_group")
        .join(groups, on=["cluster", "broker", "topic"], how="inner")
    )
    both = per_group.unionByName(fanned.select(*per_group.columns))
    precedence = F.when(F.col("evidence") == "consumer_progress", 0).otherwise(1)
    first = Window.partitionBy(*QUEUE_KEY, "observed_at").orderBy(precedence, "source_file", "line_no")
    return (
        both.withColumn("_rank", F.row_number().over(first))
        .where(F.col("_rank") == 1)
        .select(
            *QUEUE_KEY,
            "observed_at",
            F.col("max_offset").alias("broker_offset"),
            F.col("min_offset").alias("broker_min_offset"),
            F.col("consumer_offset").alias("reported_consumer_offset"),
        )
    )


def consumer_lag(observations: DataFrame, timeline: DataFrame, seed: DataFrame) -> DataFrame:
    """gold/consumer_lag: broker offset minus the stored consumer offset as of each observation.

    ``timeline`` holds the interval's stored-offset observations, ``seed`` the checkpoint at
    its start (``last_stored_offset``/``last_stored_at``). A stored offset observed at the
    same instant as the broker offset counts as "as of" it.

    Example::

        timeline 10:00 stored 90 | observation 10:00 broker 100 -> consumer 90, lag 10
        timeline 10:02 stored 95 | observation 10:05 broker 120 -> consumer 95, lag 25
    """
    # The observed queues, numbered: the window partitions and sorts by one number instead of
    # five columns (four of text), and the stored rows of queues never observed drop out here.
    queues = numbered(observations.select(*QUEUE_KEY), QUEUE_ID)
    stored = timeline.select(
        *QUEUE_KEY, "observed_at", F.lit(0).alias("_rank"), "observation_seq", "stored_offset"
    )
    asks = observations.select(
        *QUEUE_KEY,
        "observed_at",
        F.lit(1).alias("_rank"),
        F.lit("").alias("observation_seq"),
        F.lit(None).cast("long").alias("stored_offset"),
    )
    upto = (
        Window.partitionBy(QUEUE_ID)
        .orderBy("observed_at", "_rank", "observation_seq")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    as_of = (
        with_id(stored.unionByName(asks), queues, QUEUE_KEY, known_only=True)
        .withColumn("_offset", F.last("stored_offset", ignorenulls=True).over(upto))
        .withColumn(
            "_offset_at",
            F.last(F.when(F.col("_rank") == 0, F.col("observed_at")), ignorenulls=True).over(upto),
        )
        .where(F.col("_rank") == 1)
        .select(QUEUE_ID, "observed_at", "_offset", "_offset_at")
        .join(F.broadcast(queues), on=QUEUE_ID)
        .drop(QUEUE_ID)
    )
    seeds = seed.select(*QUEUE_KEY, "last_stored_offset", "last_stored_at")
    return (
        observations.join(as_of, on=[*QUEUE_KEY, "observed_at"], how="left")
        .join(seeds, on=list(QUEUE_KEY), how="left")
        .withColumn("consumer_offset", F.coalesce("_offset", "last_stored_offset"))
        .withColumn("consumer_offset_at", F.coalesce("_offset_at", "last_stored_at"))
        .select(
            *QUEUE_KEY,
            "observed_at",
            "broker_offset",
            "broker_min_offset",
            "consumer_offset",
            "consumer_offset_at",
            "reported_consumer_offset",
            (F.col("broker_offset") - F.col("consumer_offset")).alias("lag_messages"),
            F.to_date("observed_at").alias("observed_date"),
        )
    )


def max_offset_points(queue_offsets: DataFrame) -> DataFrame:
    """The queues' max-offset history: one point per (broker queue, instant), the largest max
    offset any admin-tool output of that instant reported (outputs of one collection round agree)."""
    return (
        queue_offsets.where(F.col("max_offset").isNotNull())
        .groupBy(*BROKER_QUEUE, "observed_at")
        .agg(F.max("max_offset").alias("max_offset"))
    )


def with_lag_seconds(lag: DataFrame, points: DataFrame, history: timedelta) -> DataFrame:
    """gold/consumer_lag rows with ``lag_seconds`` and ``is_lag_seconds_bounded``
    (pipelines.marts.time_lag), from ``points`` (:func:`max_offset_points`) of the ``history``
    before each row.

    Each broker queue's points and rows meet in one partition, where a vectorised Arrow function
    searches the history: the interpolation is a search per row over a short sorted series, which
    Spark's built-in functions could only do as a range join of every row with every point.
    """
    history_micros = int(history / timedelta(microseconds=1))
    queues = numbered(lag.select(*BROKER_QUEUE).unionByName(points.select(*BROKER_QUEUE)), QUEUE_NUMBER)
    asks = lag.join(F.broadcast(queues), on=list(BROKER_QUEUE)).select(
        *lag.columns,
        QUEUE_NUMBER,
        F.lit(False).alias(IS_POINT),
        F.unix_micros("observed_at").alias(AT_MICROS),
        F.col("consumer_offset").alias(OFFSET),
    )
    history_points = points.join(F.broadcast(queues), on=list(BROKER_QUEUE)).select(
        QUEUE_NUMBER,
        F.lit(True).alias(IS_POINT),
        F.unix_micros("observed_at").alias(AT_MICROS),
        F.col("max_offset").alias(OFFSET),
    )
    both = asks.unionByName(history_points, allowMissingColumns=True).repartition(QUEUE_NUMBER)
    schema = StructType(
        [
            *lag.schema.fields,
            StructField("lag_seconds", DoubleType()),
            StructField("is_lag_seconds_bounded", BooleanType()),
        ]
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        batches = list(batches)
        if batches:
            yield from lag_seconds_rows(pa.Table.from_batches(batches), history_micros).to_batches()

    return both.mapInArrow(run, schema)


def consumer_lag_by_group(lag: DataFrame) -> DataFrame:
    """gold/consumer_lag_by_group: total lag, the worst queue, and the worst lag in seconds per
    group and instant."""
    worst = F.struct(F.col("lag_messages"), F.col("broker"), F.col("queue_id"))
    oldest = F.struct(F.col("lag_seconds"), F.col("is_lag_seconds_bounded"))
    return (
        lag.groupBy("cluster", "topic", "consumer_group", "observed_at")
        .agg(
            F.count(F.lit(1)).alias("queues"),
            F.sum("lag_messages").alias("total_lag_messages"),
            F.max(F.when(F.col("lag_messages").isNotNull(), worst)).alias("_worst"),
            F.max(F.when(F.col("lag_seconds").isNotNull(), oldest)).alias("_oldest"),
        )
        .select(
            "cluster",
            "topic",
            "consumer_group",
            "observed_at",
            "queues",
            "total_lag_messages",
            F.col("_worst.lag_messages").alias("worst_lag_messages"),
            F.col("_worst.broker").alias("worst_broker"),
            F.col("_worst.queue_id").alias("worst_queue_id"),
            F.col("_oldest.lag_seconds").alias("worst_lag_seconds"),
            F.col("_oldest.is_lag_seconds_bounded").alias("is_worst_lag_seconds_bounded"),
            F.to_date("observed_at").alias("observed_date"),
        )
    )
