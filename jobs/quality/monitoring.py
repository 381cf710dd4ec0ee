"""Feed the lake's tables to the monitoring checks and turn their findings into alert rows.

Gold tables of the interval are read from the staging lake when the marts stage left them
there (the audit runs before publish), and from gold otherwise; history before the
interval (``QualitySettings.lookback``) always comes from published gold.
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.lake import Lake
from pipelines import monitoring_checks as checks
from schemas.quality import QUALITY_ALERTS, MonitoringCheck, QualitySettings, Severity
from schemas.tables import CONSUMER_LAG, OFFSET_COMMITS_REPLAYED, OFFSET_REGRESSIONS, OFFSET_SNAPSHOTS, TableSpec

_SUBJECT = ("cluster", "broker", "topic", "consumer_group", "queue_id", "client_host")


def interval_frame(lake: Lake, spec: TableSpec, start: datetime, end: datetime) -> DataFrame:
    """``spec``'s rows of the interval: staged ones when the table waits in staging (gold)."""
    staging = lake.staging()
    if spec.layer == "gold" and staging.exists(spec):
        return staging.read(spec, start=start, end=end)
    return lake.read(spec, start=start, end=end)


def find_all(lake: Lake, quality: QualitySettings, start: datetime, end: datetime) -> dict[str, DataFrame]:
    """Every monitoring check's offending rows for the interval, by check name."""
    since = start - quality.lookback
    snapshots = lake.read(OFFSET_SNAPSHOTS, start=since, end=end)
    commits = lake.read(OFFSET_COMMITS_REPLAYED, start=since, end=end)
    lag = interval_frame(lake, CONSUMER_LAG, start, end)
    lag_history = lake.read(CONSUMER_LAG, start=since, end=start).unionByName(lag)
    interval = {"interval_start": start, "interval_end": end}
    found = {
        "snapshot_gaps": checks.find_snapshot_gaps(snapshots, **interval, max_gap=quality.max_snapshot_gap),
        "negative_lag": checks.find_negative_lag(lag),
        "expired_before_consumed": checks.find_expired_before_consumed(lag),
        "abandoned_groups": checks.find_abandoned_groups(lag_history, **interval, stalled_after=quality.stalled_after),
        "snapshot_commit_mismatch": checks.find_snapshot_commit_mismatches(
            snapshots, commits, **interval, tolerance=quality.snapshot_commit_tolerance
        ),
        "large_regressions": checks.find_large_regressions(
            lake.read(OFFSET_REGRESSIONS, start=start, end=end), above=quality.regression_alert_above
        ),
    }
    return found


def _column(findings: DataFrame, name: str, dtype: str) -> Column:
    return F.col(name).cast(dtype) if name in findings.columns else F.lit(None).cast(dtype)


def to_alerts(
    findings: DataFrame, check: MonitoringCheck, severity: Severity, run_id: str, start: datetime, end: datetime
) -> DataFrame:
    """``quality/alerts`` rows for ``check``'s findings; the whole finding goes to ``details``."""
    details = F.to_json(F.struct(*[F.col(c) for c in findings.columns]))
    subject = {name: _column(findings, name, QUALITY_ALERTS.schema[name].dataType.simpleString()) for name in _SUBJECT}
    return findings.select(
        F.lit(run_id).alias("run_id"),
        F.lit(start).alias("interval_start"),
        F.lit(end).alias("interval_end"),
        F.substring(F.sha2(F.concat_ws("|", F.lit(check.check_name), details), 256), 1, 32).alias("alert_id"),
        F.lit(check.check_name).alias("check_name"),
        F.lit(severity).alias("severity"),
        F.lit(f"{check.inputs[0].layer}.{check.inputs[0].name}").alias("table_name"),
        *[column.alias(name) for name, column in subject.items()],
        F.col(check.time_column).cast("timestamp").alias("observed_at"),
        F.col(check.value_column).cast("long").alias("measured_value"),
        F.col("message"),
        details.alias("details"),
    )
