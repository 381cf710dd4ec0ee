"""Gold throughput marts: messages produced per queue and consumed per group, per tumbling window.

Consume throughput sums the positive increments of the stored offset (silver timeline), produce
throughput those of the broker's max offset (its observations in the admin-tool outputs), each
counted in the window holding the later of its two observations. A decrease is never negative
work: a stored offset that went back is a regression (silver/offset_regressions), a max offset
that went down (a queue truncated, a broker rebuilt) is counted as such, not subtracted.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from pipelines.marts.lag import BROKER_QUEUE
from pipelines.marts.windows import window_seconds, window_start_column


def produce_throughput(points: DataFrame, window: timedelta, history: timedelta) -> DataFrame:
    """gold/produce_throughput: messages appended per (cluster, broker, topic, queue, window).

    ``points``: the queues' max-offset history (pipelines.marts.lag.max_offset_points). Each
    point's increment is from the queue's point before it, when that is at most ``history``
    earlier (so a run sees what one run over everything sees); it counts in the window holding
    the later point. Example, a one-hour window::

        10:50 max 100 | 11:05 max 160 -> 60 in 11:00 | 11:20 max 40 -> a decrease, 0 | 11:40 max 70 -> 30
        ->  window 11:00: messages_produced 90, observations 3, max_offset_decreases 1
    """
    seconds = window_seconds(window)
    order = Window.partitionBy(*BROKER_QUEUE).orderBy("observed_at")  # one point per instant: no ties
    previous_at, previous = F.lag("observed_at").over(order), F.lag("max_offset").over(order)
    paired = F.unix_micros("observed_at") - F.unix_micros(previous_at) <= F.lit(
        history // timedelta(microseconds=1)
    )
    change = F.when(paired, F.col("max_offset") - previous)
    return (
        points.withColumn("_change", change)
        .groupBy(*BROKER_QUEUE, window_start_column(F.col("observed_at"), window).alias("window_start"))
        .agg(
            F.coalesce(F.sum(F.when(F.col("_change") > 0, F.col("_change"))), F.lit(0)).alias(
                "messages_produced"
            ),
            F.count(F.lit(1)).alias("observations"),
            F.sum((F.col("_change") < 0).cast("long")).alias("_decreases"),
            F.max("max_offset").alias("max_offset"),
        )
        .select(
            *BROKER_QUEUE,
            "window_start",
            (F.col("window_start") + F.make_dt_interval(secs=F.lit(seconds))).alias("window_end"),
            "messages_produced",
            (F.col("messages_produced") / F.lit(seconds)).alias("messages_per_second"),
            "observations",
            F.coalesce("_decreases", F.lit(0)).alias("max_offset_decreases"),
            "max_offset",
            F.to_date(F.col("window_start")).alias("window_date"),
        )
    )


def consume_throughput(
    timeline: DataFrame, window: timedelta, produced: DataFrame | None = None
) -> DataFrame:
    """gold/consume_throughput: messages consumed per (cluster, topic, group) tumbling window,
    beside the messages produced to the topic in the window (``produced``: gold/produce_throughput
    rows of the same windows; null where the topic's max offsets were not observed).

    Windows are aligned to the epoch; an increment counts in the window holding the later
    of its two observations (its ``observed_at``).
    """
    seconds = window_seconds(window)
    consumed = (
        timeline.groupBy(
            "cluster",
            "topic",
            "consumer_group",
            window_start_column(F.col("observed_at"), window).alias("window_start"),
        )
        .agg(F.sum("consumed_increment").alias("messages_consumed"), F.count(F.lit(1)).alias("observations"))
        .select(
            "cluster",
            "topic",
            "consumer_group",
            "window_start",
            (F.col("window_start") + F.make_dt_interval(secs=F.lit(seconds))).alias("window_end"),
            "messages_consumed",
            (F.col("messages_consumed") / F.lit(seconds)).alias("messages_per_second"),
            "observations",
            F.to_date(F.col("window_start")).alias("window_date"),
        )
    )
    if produced is None:
        return consumed.withColumn("messages_produced", F.lit(None).cast("long")).withColumn(
            "produced_per_second", F.lit(None).cast("double")
        )
    by_topic = produced.groupBy("cluster", "topic", "window_start").agg(
        F.sum("messages_produced").alias("messages_produced")
    )
    return consumed.join(by_topic, on=["cluster", "topic", "window_start"], how="left").withColumn(
        "produced_per_second", F.col("messages_produced") / F.lit(seconds)
    )
