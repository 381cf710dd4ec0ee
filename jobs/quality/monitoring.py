"""Feed the lake's tables to the monitoring checks and turn their findings into alert rows.

Gold tables of the interval are read from the staging lake when the marts stage left them
there (the audit runs before publish), and from gold otherwise; history before the
interval (``QualitySettings.lookback``) always comes from published gold.
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from pipelines.monitoring import CHECKS, CheckContext, CheckInput, MonitoringCheck
from schemas.quality import QualitySettings, Severity
from schemas.tables import QUALITY_FINDINGS, TableSpec

_SUBJECT = ("cluster", "broker", "topic", "consumer_group", "queue_id", "client_host")


def interval_frame(lake: Lake, spec: TableSpec, start: datetime, end: datetime) -> DataFrame:
    """``spec``'s rows of the interval: staged ones when the table waits in staging (gold)."""
    staging = lake.staging()
    if spec.layer == "gold" and staging.exists(spec):
        return staging.read(spec, start=start, end=end)
    return lake.read(spec, start=start, end=end)


def _input(lake: Lake, wanted: CheckInput, start: datetime, end: datetime, since: datetime) -> DataFrame:
    """What a check reads of one table: the interval (staged rows for gold), and with the
    look-back the published rows from ``since`` before it."""
    interval = interval_frame(lake, wanted.table, start, end)
    if wanted.span == "interval":
        return interval
    if wanted.table.layer == "gold":
        return lake.read(wanted.table, start=since, end=start).unionByName(interval)
    return lake.read(wanted.table, start=since, end=end)


def _inputs(
    lake: Lake, check: MonitoringCheck, start: datetime, end: datetime, since: datetime
) -> list[DataFrame]:
    """The check's inputs; each emptied when the input its findings come from has no row in the
    interval (the same plan over no rows: Spark reads nothing for it)."""
    inputs = [_input(lake, i, start, end, since) for i in check.inputs]
    found_in = check.inputs[check.found_in].table if check.found_in is not None else None
    if found_in is not None and interval_frame(lake, found_in, start, end).isEmpty():
        return [df.limit(0) for df in inputs]
    return inputs


def find_all(lake: Lake, quality: QualitySettings, start: datetime, end: datetime) -> dict[str, DataFrame]:
    """Every monitoring check's offending rows for the interval, by check name."""
    context = CheckContext(start, end, quality)
    since = start - quality.lookback
    return {check.name: check.find(_inputs(lake, check, start, end, since), context) for check in CHECKS}


def _column(findings: DataFrame, name: str, dtype: str) -> Column:
    return F.col(name).cast(dtype) if name in findings.columns else F.lit(None).cast(dtype)


def to_findings(
    findings: DataFrame,
    check: MonitoringCheck,
    severity: Severity,
    run_id: str,
    start: datetime,
    end: datetime,
) -> DataFrame:
    """``quality/findings`` rows for ``check``'s offending rows; the whole row goes to ``details``."""
    details = F.to_json(F.struct(*[F.col(c) for c in findings.columns]))
    subject = {
        name: _column(findings, name, QUALITY_FINDINGS.schema[name].dataType.simpleString())
        for name in _SUBJECT
    }
    return findings.select(
        F.lit(run_id).alias("run_id"),
        F.lit(start).alias("interval_start"),
        F.lit(end).alias("interval_end"),
        F.substring(F.sha2(F.concat_ws("|", F.lit(check.check_name), details), 256), 1, 32).alias(
            "finding_id"
        ),
        F.lit(check.check_name).alias("check_name"),
        F.lit(severity).alias("severity"),
        F.lit(f"{check.inputs[0].table.layer}.{check.inputs[0].table.name}").alias("table_name"),
        *[column.alias(name) for name, column in subject.items()],
        F.col(check.time_column).cast("timestamp").alias("observed_at"),
        F.col(check.value_column).cast("long").alias("measured_value"),
        F.col("message"),
        details.alias("details"),
    )
