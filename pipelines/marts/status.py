"""Gold consumer status: is each group OK, lagging, stalled, stopped, rewound or losing messages?

One status per (cluster, topic, consumer group, tumbling window), from the window's history: the
group's lag observations (gold/consumer_lag_by_group), its expired messages (gold/consumer_lag),
its commits and consumed messages (silver/stored_offset_timeline) and its regressions
(silver/offset_regressions). The rules, in order (the first that holds decides, as Burrow's
evaluator does; unlike Burrow they work on time windows, not a ring of commits, and a lag under
``allowed_lag_messages`` is no lag: Burrow's users asked for that threshold, issue 223):

| status | holds when | evidence |
|---|---|---|
| ``ERR`` | a consumer offset below the broker's min offset: messages expired before they were consumed | ``expired_messages``, when first seen |
| ``REWIND`` | a regression in the window (any cause: an operator's reset is a rewind too) | ``regressions``, the first one's time and cause |
| ``STOP`` | lag above the allowed at the window's last observation, no commit and no consumed message in the window | the last lag, the stored offset's age |
| ``STALL`` | lag above the allowed at the last observation, commits in the window but no consumed message | ``commits``, the last lag |
| ``WARN`` | at least ``min_lag_observations`` observations, each above the allowed, the lag never decreasing and ending above where it began | first and last lag |
| ``OK`` | none of these | the last lag |

Windows with a lag observation or a regression get a row. Without a commit stream (snapshots
only), a stalled group shows as STOP: only commits tell the two apart. A group's status over
history is recomputed from the tables for any window, with any thresholds: a backtest of the
rules is the mart computed again.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipelines.marts.windows import window_seconds, window_start_column
from schemas.config import StatusSettings

GROUP = ("cluster", "topic", "consumer_group")
STATUSES = ("OK", "WARN", "STALL", "STOP", "REWIND", "ERR")


def _when(ts: Column) -> Column:
    return F.date_format(ts, "yyyy-MM-dd HH:mm:ss")


def _windowed(df: DataFrame, at: str, window: timedelta) -> DataFrame:
    return df.withColumn("window_start", window_start_column(F.col(at), window))


def _lag_side(lag_by_group: DataFrame, window: timedelta) -> DataFrame:
    observed = _windowed(lag_by_group.where(F.col("total_lag_messages").isNotNull()), "observed_at", window)
    order = Window.partitionBy(*GROUP, "window_start").orderBy("observed_at")  # one row per instant
    stepped = observed.withColumn("_previous", F.lag("total_lag_messages").over(order))
    return stepped.groupBy(*GROUP, "window_start").agg(
        F.count(F.lit(1)).alias("lag_observations"),
        F.min_by("total_lag_messages", "observed_at").alias("first_lag_messages"),
        F.max_by("total_lag_messages", "observed_at").alias("last_lag_messages"),
        F.min("total_lag_messages").alias("_least_lag"),
        F.sum((F.col("total_lag_messages") < F.col("_previous")).cast("long")).alias("_decreases"),
        F.max("observed_at").alias("last_observed_at"),
        F.max("worst_lag_seconds").alias("worst_lag_seconds"),
    )


def _expired(lag: DataFrame, window: timedelta) -> DataFrame:
    below = lag.where(F.col("consumer_offset") < F.col("broker_min_offset"))
    return (
        _windowed(below, "observed_at", window)
        .groupBy(*GROUP, "window_start")
        .agg(
            F.max(F.col("broker_min_offset") - F.col("consumer_offset")).alias("expired_messages"),
            F.min("observed_at").alias("_expired_at"),
        )
    )


def _progress(timeline: DataFrame, window: timedelta) -> DataFrame:
    return (
        _windowed(timeline, "observed_at", window)
        .groupBy(*GROUP, "window_start")
        .agg(
            F.sum((F.col("observation") == "commit").cast("long")).alias("commits"),
            F.sum("consumed_increment").alias("messages_consumed"),
        )
    )


def _rewinds(regressions: DataFrame, window: timedelta) -> DataFrame:
    first = F.struct("detected_at", "broker", "queue_id", "cause")
    return (
        _windowed(regressions, "detected_at", window)
        .groupBy(*GROUP, "window_start")
        .agg(F.count(F.lit(1)).alias("regressions"), F.min(first).alias("_first_regression"))
    )


def consumer_status(
    lag_by_group: DataFrame,
    lag: DataFrame,
    timeline: DataFrame,
    regressions: DataFrame,
    settings: StatusSettings,
) -> DataFrame:
    """gold/consumer_status from whole windows of the four tables (see the module docstring)."""
    window = settings.window
    seconds = window_seconds(window)
    lagging = _lag_side(lag_by_group, window)
    rewound = _rewinds(regressions, window)
    keys = (
        lagging.select(*GROUP, "window_start").unionByName(rewound.select(*GROUP, "window_start")).distinct()
    )
    on = [*GROUP, "window_start"]
    joined = (
        keys.join(lagging, on=on, how="left")
        .join(rewound, on=on, how="left")
        .join(_expired(lag, window), on=on, how="left")
        .join(_progress(timeline, window), on=on, how="left")
        .withColumn("commits", F.coalesce("commits", F.lit(0)))
        .withColumn("messages_consumed", F.coalesce("messages_consumed", F.lit(0)))
        .withColumn("regressions", F.coalesce("regressions", F.lit(0)))
    )
    allowed = F.lit(settings.allowed_lag_messages)
    behind = F.coalesce(F.col("last_lag_messages") > allowed, F.lit(False))
    idle = F.col("messages_consumed") == 0
    growing = (
        (F.col("lag_observations") >= settings.min_lag_observations)
        & (F.col("_least_lag") > allowed)
        & (F.col("_decreases") == 0)
        & (F.col("last_lag_messages") > F.col("first_lag_messages"))
    )
    first = F.col("_first_regression")
    status = (
        F.when(F.col("expired_messages").isNotNull(), "ERR")
        .when(F.col("regressions") > 0, "REWIND")
        .when(behind & idle & (F.col("commits") == 0), "STOP")
        .when(behind & idle, "STALL")
        .when(F.coalesce(growing, F.lit(False)), "WARN")
        .otherwise("OK")
    )
    reason = (
        F.when(
            F.col("status") == "ERR",
            F.format_string(
                "%d messages expired before they were consumed (seen %s)", "expired_messages", _when(F.col("_expired_at"))
            ),
        )
        .when(
            F.col("status") == "REWIND",
            F.format_string(
                "%d regressions, the first at %s on %s q%d (%s)", "regressions", _when(first.detected_at),
                first.broker, first.queue_id, first.cause,
            ),
        )
        .when(
            F.col("status") == "STOP",
            F.format_string("lag %d at %s and no commit in the window", "last_lag_messages", _when(F.col("last_observed_at"))),
        )
        .when(
            F.col("status") == "STALL",
            F.format_string("%d commits but no message consumed; lag %d at %s", "commits", "last_lag_messages",
                            _when(F.col("last_observed_at"))),
        )
        .when(
            F.col("status") == "WARN",
            F.format_string("lag grew over %d observations, from %d to %d", "lag_observations", "first_lag_messages",
                            "last_lag_messages"),
        )
        .otherwise(F.format_string("lag %d at %s", F.coalesce("last_lag_messages", F.lit(0)), _when(F.col("last_observed_at"))))
    )  # fmt: skip
    evidence_at = (
        F.when(F.col("status") == "ERR", F.col("_expired_at"))
        .when(F.col("status") == "REWIND", first.detected_at)
        .otherwise(F.col("last_observed_at"))
    )
    return (
        joined.withColumn("status", status)
        .withColumn("status_reason", reason)
        .withColumn("evidence_at", evidence_at)
        .select(
            *GROUP,
            "window_start",
            (F.col("window_start") + F.make_dt_interval(secs=F.lit(seconds))).alias("window_end"),
            "status",
            "status_reason",
            "evidence_at",
            F.coalesce("lag_observations", F.lit(0)).alias("lag_observations"),
            "first_lag_messages",
            "last_lag_messages",
            "worst_lag_seconds",
            "commits",
            "messages_consumed",
            "regressions",
            "expired_messages",
            F.to_date("window_start").alias("window_date"),
        )
    )
