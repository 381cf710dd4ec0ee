"""The report's charts, each one declared entry: a title, what it answers, a query, a figure.

A chart's query runs on the lake's SQL names (jobs.io.query) with ``{where}`` standing for
the report's interval on the chart's ``time_column``; its ``figure`` turns the rows into a
Plotly figure (jobs.report.figures). A new chart is a new entry here, nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import plotly.graph_objects as go
import pyarrow as pa

from jobs.report import figures


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    answers: str
    sql: str
    time_column: str
    figure: Callable[[pa.Table], go.Figure]
    wide: bool = False  # across the page (a time line), else half of it


CHARTS: tuple[Chart, ...] = (
    Chart(
        "lag",
        "Lag per group",
        "Messages not yet consumed per topic@group at each broker-offset observation (gold_consumer_lag_by_group); "
        "a log scale, so that a stuck group does not flatten the others.",
        """SELECT observed_at, topic || '@' || consumer_group AS series, sum(total_lag_messages) AS lag
           FROM gold_consumer_lag_by_group WHERE {where} GROUP BY 1, 2 ORDER BY 2, 1""",
        "observed_at",
        partial(figures.lines, x="observed_at", y="lag", series="series", y_title="messages behind", log=True),
        wide=True,
    ),
    Chart(
        "lag_seconds",
        "Lag per group in seconds",
        "How long ago the log end was at each group's offset, its worst queue per observation "
        "(gold_consumer_lag_by_group.worst_lag_seconds, interpolated between max-offset observations).",
        """SELECT observed_at, topic || '@' || consumer_group AS series, max(worst_lag_seconds) AS lag_seconds
           FROM gold_consumer_lag_by_group WHERE {where} AND worst_lag_seconds IS NOT NULL
           GROUP BY 1, 2 ORDER BY 2, 1""",
        "observed_at",
        partial(figures.lines, x="observed_at", y="lag_seconds", series="series", y_title="seconds behind", log=True),
        wide=True,
    ),
    Chart(
        "consume_rate",
        "Consume rate per group",
        "Messages consumed per second in each window, per topic@group (gold_consume_throughput); groups that "
        "consumed nothing are left out.",
        """SELECT window_start, topic || '@' || consumer_group AS series, messages_per_second
           FROM gold_consume_throughput WHERE {where} ORDER BY 2, 1""",
        "window_start",
        partial(figures.lines, x="window_start", y="messages_per_second", series="series", y_title="messages / s"),
        wide=True,
    ),
    Chart(
        "produce_consume",
        "Produced and consumed per group",
        "Messages appended to the group's topic and consumed by the group in each window "
        "(gold_consume_throughput): a consumed line under the produced one is a group falling behind.",
        """SELECT window_start, topic || '@' || consumer_group || ' consumed' AS series, messages_consumed AS messages
           FROM gold_consume_throughput WHERE {where}
           UNION ALL
           SELECT window_start, topic || '@' || consumer_group || ' produced' AS series, messages_produced AS messages
           FROM gold_consume_throughput WHERE {where} AND messages_produced IS NOT NULL
           ORDER BY 2, 1""",
        "window_start",
        partial(figures.lines, x="window_start", y="messages", series="series", y_title="messages per window"),
        wide=True,
    ),
    Chart(
        "status",
        "Consumer status history",
        "Each group's status per window (gold_consumer_status; the rules in pipelines/marts/status.py), "
        "the evidence that decided it on hover.",
        """SELECT window_start, topic || '@' || consumer_group AS series, status, status_reason
           FROM gold_consumer_status WHERE {where} ORDER BY 2, 1""",
        "window_start",
        partial(figures.status_map, x="window_start", y="series", status="status", reason="status_reason"),
        wide=True,
    ),
    Chart(
        "regressions",
        "Regressions over time",
        "Each committed offset that went backwards, per queue: its size (messages consumed twice) and its "
        "cause (pipelines/replay/explain.py: an admin reset, a server correction, a stale commit, ...).",
        f"""SELECT detected_at, topic || '@' || consumer_group || ' ' || broker || ' q' || CAST(queue_id AS VARCHAR) AS queue_key,
                  regression_size,
                  CASE WHEN cause = '{figures.UNEXPLAINED}' THEN cause || ' (' || evidence || ')' ELSE cause END AS cause,
                  broker || ' q' || CAST(queue_id AS VARCHAR) AS queue, coalesce(client_host, '?') AS client_host,
                  CAST(stored_offset AS VARCHAR) || ' -> ' || CAST("offset" AS VARCHAR) AS moved
           FROM silver_offset_regressions WHERE {{where}} ORDER BY detected_at""",
        "detected_at",
        partial(figures.bubbles, x="detected_at", y="queue_key", size="regression_size", colour="cause",
                hover=("queue", "regression_size", "moved", "client_host")),
        wide=True,
    ),
    Chart(
        "top_groups",
        "Top offenders: groups",
        "Messages consumed twice (the regressions' sizes added up), per topic@group.",
        """SELECT topic || '@' || consumer_group AS key, sum(regression_size) AS consumed_twice
           FROM silver_offset_regressions WHERE {where} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 15""",
        "detected_at",
        partial(figures.top_bars, label="key", value="consumed_twice", value_title="messages consumed twice"),
    ),
    Chart(
        "top_hosts",
        "Top offenders: client hosts",
        "Messages consumed twice, per client host that committed the lower offset.",
        """SELECT client_host, sum(regression_size) AS consumed_twice FROM silver_offset_regressions
           WHERE {where} AND client_host IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 15""",
        "detected_at",
        partial(figures.top_bars, label="client_host", value="consumed_twice", value_title="messages consumed twice"),
    ),
    Chart(
        "snapshot_coverage",
        "Snapshot coverage per broker",
        "consumerOffset.json snapshots replayed per broker and hour (bronze_snapshot_files); an empty cell is a gap.",
        """SELECT date_trunc('hour', snapshot_at) AS snapshot_hour, "cluster" || '/' || broker AS broker,
                  count(*) AS snapshots
           FROM bronze_snapshot_files WHERE {where} AND is_replayed GROUP BY 1, 2 ORDER BY 1, 2""",
        "snapshot_at",
        partial(figures.heat_map, x="snapshot_hour", y="broker", z="snapshots", z_title="snapshots"),
        wide=True,
    ),
    Chart(
        "quality",
        "Data-quality checks",
        "The audits' checks per table by outcome (quality_check_results); the failed ones are listed below.",
        """SELECT table_name, CASE WHEN is_success THEN 'passed' ELSE 'failed (' || severity || ')' END AS outcome,
                  count(*) AS checks
           FROM quality_check_results WHERE {where} GROUP BY 1, 2 ORDER BY 2, 1""",
        "interval_start",
        partial(figures.stacked_bars, x="checks", y="table_name", stack="outcome", x_title="checks",
                colours={"passed": "#2ca02c", "failed (warn)": "#ff7f0e", "failed (error)": "#d62728"}),
        wide=True,
    ),
)  # fmt: skip

# the failed checks listed under the quality chart
FAILED_CHECKS_SQL = """SELECT run_id, check_name, severity, failing_rows, message FROM quality_check_results
    WHERE {where} AND NOT is_success ORDER BY severity, check_name, interval_start"""
