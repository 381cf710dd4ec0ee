"""The audit stage: check one interval's tables, record results and alerts, notify, report.

Runs between ``marts`` and ``publish`` (write-audit-publish): the staged gold tables are
checked before anything is published. For the interval ``[start, end)`` it

1. validates every table suite with Great Expectations (``jobs.quality.suites``),
2. runs the monitoring checks (``jobs.quality.monitoring``),
3. replaces the rows of ``quality/alerts`` and ``quality/check_results`` recorded for an
   interval with the same start (re-running an interval never duplicates them),
4. sends the alerts to the configured sink and writes ``<lake>/reports/quality/<run_id>.html``.

A failed check of severity ``error`` makes ``AuditOutcome.has_errors`` true; the command
line then exits with code 4 so the scheduler retries and pages, and publish does not run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.quality import monitoring, suites
from jobs.quality.alerts import DeliveryResult, build_sink, deliver
from jobs.quality.report import report_path, write_report
from jobs.quality.results import Alert, CheckResult, Notification
from pipelines.monitoring import CHECKS
from schemas.config import StatusSettings
from schemas.instants import utc
from schemas.quality import QualitySettings
from schemas.tables import QUALITY_ALERTS, QUALITY_CHECK_RESULTS

log = logging.getLogger("offsetlake.quality.audit")
_SAMPLE_MESSAGES = 10
_INSTANT = timedelta(microseconds=1)  # Delta timestamps are microseconds


class AuditError(ValueError):
    """The audit cannot run as asked; the message says what to fix."""


@dataclass(frozen=True)
class AuditOutcome:
    """What one audit found. ``alerts`` holds up to ``sink.max_alerts_per_check`` alerts of each
    check; ``alerts_total`` counts them all (every one is in ``quality/alerts``)."""

    results: tuple[CheckResult, ...]
    alerts: tuple[Alert, ...]
    has_errors: bool
    report_path: Path | str  # a URI when the lake is one
    alerts_total: int = 0
    delivery: DeliveryResult | None = None


def quality_settings(settings) -> QualitySettings:
    """The quality part of the deployment settings (defaults when they have none)."""
    if isinstance(settings, QualitySettings):
        return settings
    return getattr(settings, "quality", None) or QualitySettings()


def _throughput_window(settings) -> timedelta:
    replay = getattr(settings, "replay", None)
    return replay.throughput_window if replay is not None else timedelta(hours=1)


def replace_audit(lake: Lake, spec, df: DataFrame, start: datetime) -> None:
    """Replace the rows of the audit of the interval starting at ``start`` (audits of other
    intervals stay, even when a late-data replay makes this one overlap them)."""
    lake.replace_range(spec, df, start, start + _INSTANT)


def _collected_alerts(lake: Lake, start: datetime, per_check: int) -> tuple[dict[str, int], list[Alert]]:
    """Alert counts by check and the first ``per_check`` alerts of each, read back from the lake."""
    written = lake.read(QUALITY_ALERTS, start=start, end=start + _INSTANT)
    per_check_rows = Window.partitionBy("check_name")
    order = per_check_rows.orderBy(F.col("observed_at").asc_nulls_first(), "alert_id")
    picked = (
        written.withColumn("_n", F.row_number().over(order))
        .withColumn("_alerts", F.count(F.lit(1)).over(per_check_rows))
        .where(F.col("_n") <= per_check)
        .orderBy("check_name", "_n")
        .collect()
    )
    counts = {row.check_name: row["_alerts"] for row in picked}
    fields = list(Alert.__dataclass_fields__)
    return counts, [Alert(**{k: row[k] for k in fields}) for row in picked]


def _monitoring_results(
    quality: QualitySettings, counts: dict[str, int], alerts: list[Alert]
) -> list[CheckResult]:
    results = []
    for check in CHECKS:
        failing = counts.get(check.check_name, 0)
        messages = tuple(a.message for a in alerts if a.check_name == check.check_name)[:_SAMPLE_MESSAGES]
        results.append(
            CheckResult(
                check_name=check.check_name,
                check_kind="monitoring",
                table_name=f"{check.inputs[0].table.layer}.{check.inputs[0].table.name}",
                severity=quality.severity(check.check_name, check.severity),
                is_success=failing == 0,
                rows_checked=None,
                failing_rows=failing,
                message=f"{failing} alerts: {check.description}" if failing else "passed",
                sample=messages,
            )
        )
    return results


def _write_alerts(
    spark: SparkSession,
    lake: Lake,
    quality: QualitySettings,
    expectation_alerts: list[Alert],
    run_id: str,
    start,
    end,
) -> None:
    found = monitoring.find_all(lake, quality, start, end)
    frames: list[DataFrame] = [
        monitoring.to_alerts(found[c.name], c, quality.severity(c.check_name, c.severity), run_id, start, end)
        for c in CHECKS
    ]
    frames.append(
        spark.createDataFrame([a.row(run_id, start, end) for a in expectation_alerts], QUALITY_ALERTS.schema)
    )
    replace_audit(lake, QUALITY_ALERTS, reduce(DataFrame.unionByName, frames), start)


def run_audit(
    lake: Lake, settings, interval_start: datetime, interval_end: datetime, run_id: str
) -> AuditOutcome:
    """Audit ``[interval_start, interval_end)``; see the module docstring."""
    spark = lake.spark
    quality = quality_settings(settings)
    start, end = utc(interval_start), utc(interval_end)
    if not start < end:
        raise AuditError(
            f"the audit interval is empty: --from {start.isoformat()} is not before --to {end.isoformat()}"
        )
    log.info("auditing %s to %s (run %s)", start.isoformat(), end.isoformat(), run_id)

    status = getattr(settings, "status", None) or StatusSettings()
    expectation_results, expectation_alerts = suites.validate_tables(
        lake, quality, start, end, _throughput_window(settings), status.window
    )
    _write_alerts(spark, lake, quality, expectation_alerts, run_id, start, end)
    counts, alerts = _collected_alerts(lake, start, quality.sink.max_alerts_per_check)
    results = (*expectation_results, *_monitoring_results(quality, counts, alerts))
    rows = [r.row(run_id, start, end) for r in results]
    replace_audit(
        lake, QUALITY_CHECK_RESULTS, spark.createDataFrame(rows, QUALITY_CHECK_RESULTS.schema), start
    )

    has_errors = any(r.is_error for r in results)
    path = report_path(lake.root, run_id)
    notification = Notification(
        run_id=run_id,
        interval_start=start,
        interval_end=end,
        has_errors=has_errors,
        report_path=str(path),
        failed_checks=tuple(r for r in results if not r.is_success),
        alerts=tuple(alerts),
        alerts_total=sum(counts.values()),
        alert_counts=counts,
    )
    delivery = deliver(build_sink(quality.sink), notification) if alerts else None
    write_report(spark, path, notification, results, delivery)
    log.info("audit %s: %d checks, %d failed, %d alerts; report %s", notification.status, len(results),
             len(notification.failed_checks), notification.alerts_total, path)  # fmt: skip
    return AuditOutcome(tuple(results), tuple(alerts), has_errors, path, notification.alerts_total, delivery)
