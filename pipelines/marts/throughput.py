"""Gold throughput mart: messages consumed per group and tumbling window.

Throughput sums the positive increments of the stored offset (silver timeline), each
counted in the window holding the later of its two observations.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pipelines.marts.windows import window_seconds, window_start_column


def consume_throughput(timeline: DataFrame, window: timedelta) -> DataFrame:
    """gold/consume_throughput: messages consumed per (cluster, topic, group) tumbling window.

    Windows are aligned to the epoch; an increment counts in the window holding the later
    of its two observations (its ``observed_at``).
    """
    seconds = window_seconds(window)
    return (
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
