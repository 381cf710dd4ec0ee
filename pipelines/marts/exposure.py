"""Gold duplicate exposure: who will consume what twice, per group and UTC day.

Each regression of silver/offset_regressions sends messages back below the group's high-water
mark (``messages_consumed_twice``). Two regressions of a queue before it caught up send some of
the same messages back: what each adds is its ``regression_size``, the messages between where
the group was and where it was sent, so the day's extra deliveries are the sizes summed. The
mart gives them per (cluster, topic, consumer group, day), with the share nobody asked for
(every cause but an operator's reset or a pull consumer's seek: those are the point of the
regression), the largest single exposure and the regressions left unexplained.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.marts.windows import window_start_column
from pipelines.replay.explain import INTENDED_CAUSES

DAY = timedelta(days=1)


def duplicate_exposure(regressions: DataFrame) -> DataFrame:
    """gold/duplicate_exposure from silver/offset_regressions rows (whole UTC days of them).

    Example, one group, one day::

        detected  queue  cause         size  twice
        10:00     q0     admin_reset   900   900  ->  regressions 3, queues 2, extra_deliveries 1000,
        11:00     q1     stale_commit   60    60      unintended_extra_deliveries 100,
        12:00     q1     unexplained    40    70      largest_messages_consumed_twice 900, unexplained 1
    """
    size, twice = F.col("regression_size"), F.col("messages_consumed_twice")
    unintended = ~F.col("cause").isin(*INTENDED_CAUSES)
    return (
        regressions.groupBy(
            "cluster",
            "topic",
            "consumer_group",
            window_start_column(F.col("detected_at"), DAY).alias("day_start"),
        )
        .agg(
            F.count(F.lit(1)).alias("regressions"),
            F.count_distinct("broker", "queue_id").alias("queues"),
            F.sum(size).alias("extra_deliveries"),
            F.sum(F.when(unintended, size).otherwise(0)).alias("unintended_extra_deliveries"),
            F.max(twice).alias("largest_messages_consumed_twice"),
            F.sum((F.col("cause") == "unexplained").cast("long")).alias("unexplained_regressions"),
            F.min("detected_at").alias("first_detected_at"),
            F.max("detected_at").alias("last_detected_at"),
        )
        .withColumn("day", F.to_date("day_start"))
    )
