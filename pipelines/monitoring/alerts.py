"""Alerts from findings: one per (check, cluster, topic, consumer group), not one per offending row.

An audit can find thousands of offending rows (every regression of an interval); an on-call
person, or a webhook, wants one message per group that needs a look: how many findings, how
large in total and at worst, since when, and the largest few. Checks whose every finding is an
event of its own (a status change) alert per finding. Every finding stays in
``quality/findings``; the alert names its findings' count.

    findings: large_regressions  billing@orders q0 size 120 | q3 size 900 | audit@orders q1 size 5
    alerts:   large_regressions  billing@orders  findings 2, total 1020, max 900
              large_regressions  audit@orders    findings 1, total 5, max 5
"""

from __future__ import annotations

from collections.abc import Collection

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

GROUP = ("check_name", "cluster", "topic", "consumer_group")


def alerts_of(
    findings: DataFrame, one_per_finding: Collection[str] = (), top: int = 5, by: tuple[str, ...] = ()
) -> DataFrame:
    """quality/alerts rows of quality/findings rows (``by``: columns kept, every alert within one
    value of them, e.g. the audit's run and interval).

    ``one_per_finding``: the checks whose every finding is an alert of its own; ``top``: how many
    of a group's findings (the largest measured values first) the alert carries.
    """
    own = F.col("check_name").isin(*one_per_finding) if one_per_finding else F.lit(False)
    keyed = findings.withColumn("_own", F.when(own, F.col("finding_id")))
    largest = F.struct(
        F.coalesce(F.col("measured_value"), F.lit(0)).alias("measured_value"),
        F.col("observed_at").alias("observed_at"),
        F.col("broker").alias("broker"),
        F.col("queue_id").alias("queue_id"),
        F.col("client_host").alias("client_host"),
        F.col("message").alias("message"),
    )
    grouped = keyed.groupBy(*by, *GROUP, "_own").agg(
        F.first("severity").alias("severity"),
        F.first("table_name").alias("table_name"),
        F.count(F.lit(1)).alias("findings"),
        F.sum("measured_value").alias("measured_total"),
        F.max("measured_value").alias("measured_max"),
        F.min("observed_at").alias("first_observed_at"),
        F.max("observed_at").alias("last_observed_at"),
        F.slice(F.sort_array(F.collect_list(largest), asc=False), 1, top).alias("_top"),
    )
    where = F.concat_ws("@", F.col("topic"), F.col("consumer_group"))
    summary = F.when(F.col("findings") == 1, F.col("_top")[0]["message"]).otherwise(
        F.format_string(
            "%d findings%s, %d in total; the largest: %s",
            F.col("findings"),
            F.when(where != "", F.concat(F.lit(" on "), where)).otherwise(F.lit("")),
            F.coalesce(F.col("measured_total"), F.lit(0)),
            F.col("_top")[0]["message"],
        )
    )
    return grouped.select(
        *by,
        F.substring(
            F.sha2(F.concat_ws("|", *[F.coalesce(F.col(c), F.lit("")) for c in (*GROUP, "_own")]), 256), 1, 32
        ).alias("alert_id"),
        "check_name",
        "severity",
        "table_name",
        "cluster",
        "topic",
        "consumer_group",
        "findings",
        "measured_total",
        "measured_max",
        "first_observed_at",
        "last_observed_at",
        summary.alias("message"),
        F.to_json(F.col("_top")).alias("top_findings"),
    )
