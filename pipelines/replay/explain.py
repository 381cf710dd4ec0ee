"""Explain regressions with the resets and corrections the broker logged (bronze/offset_resets).

A regression of a (cluster, broker, topic, group) is explained by the latest reset or
broker-side correction of that group and topic logged up to ``LOOKBACK`` before it (a
4.x reset shows up at the client's next commit, seconds later; a 5.x server-side reset at
the next snapshot, up to one snapshot interval later) or within ``SLACK`` after it (log
times have whole seconds).

Example::

    resets:      10:00:02 reset_started  t@g            regressions: 10:04:00 t@g q3 (snapshot_pair)
    ->  explanation = "reset_started at 2026-11-21 10:00:02 by 10.0.0.9" for the regression
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

LOOKBACK_SECONDS = 600
SLACK_SECONDS = 1
EXPLAINED_COLUMNS = ("explained_by", "explanation")


def explain_regressions(regressions: DataFrame, resets: DataFrame) -> DataFrame:
    """Add ``explained_by`` (the reset kind) and ``explanation`` (text), null when nothing explains it."""
    group = ["cluster", "broker", "topic", "consumer_group"]
    candidates = resets.where(F.col("topic").isNotNull() & F.col("consumer_group").isNotNull()).select(
        *group,
        "reset_at",
        "reset_kind",
        "client_id",
        "new_offset",
        F.monotonically_increasing_id().alias("_reset_row"),
    )
    keyed = regressions.withColumn("_regression_row", F.monotonically_increasing_id())
    near = (
        F.col("r.reset_at") >= F.col("g.detected_at") - F.expr(f"INTERVAL {LOOKBACK_SECONDS} SECONDS")
    ) & (F.col("r.reset_at") <= F.col("g.detected_at") + F.expr(f"INTERVAL {SLACK_SECONDS} SECONDS"))
    pairs = keyed.alias("g").join(
        candidates.alias("r"),
        on=[*(F.col(f"g.{c}") == F.col(f"r.{c}") for c in group), near],
        how="inner",
    )
    latest = Window.partitionBy("g._regression_row").orderBy(
        F.col("r.reset_at").desc(), F.col("r.reset_kind"), F.col("r.client_id")
    )
    chosen = (
        pairs.withColumn("_rank", F.row_number().over(latest))
        .where(F.col("_rank") == 1)
        .select(
            F.col("g._regression_row").alias("_regression_row"),
            F.col("r.reset_kind").alias("explained_by"),
            F.concat_ws(
                " ",
                F.col("r.reset_kind"),
                F.lit("at"),
                F.date_format(F.col("r.reset_at"), "yyyy-MM-dd HH:mm:ss"),
                F.when(F.col("r.client_id").isNotNull(), F.concat(F.lit("by "), F.col("r.client_id"))),
                F.when(
                    F.col("r.new_offset").isNotNull(),
                    F.concat(F.lit("to offset "), F.col("r.new_offset").cast("string")),
                ),
            ).alias("explanation"),
        )
    )
    return keyed.join(chosen, on="_regression_row", how="left").drop("_regression_row")
