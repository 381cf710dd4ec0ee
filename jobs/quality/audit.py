"""The audit stage: check one interval's tables, record results and alerts, notify, report.

Runs between ``marts`` and ``publish`` (write-audit-publish): the staged gold tables are
checked before anything is published. For the interval ``[start, end)`` it

1. measures every table suite, one pass per table (``jobs.quality.suites``),
2. runs the monitoring checks (``jobs.quality.monitoring``),
3. replaces the rows of ``quality/findings`` (every offending row), ``quality/alerts`` (the
   findings grouped per check, cluster, topic and group: pipelines.monitoring.alerts) and
   ``quality/check_results`` recorded for an interval with the same start (re-running an
   interval never duplicates them),
4. sends the alerts to the configured sink and writes ``<lake>/reports/quality/<run_id>.html``.

A failed check of severity ``error`` makes ``AuditOutcome.has_errors`` true; the command
line then exits with code 4 so the scheduler retries and pages, and publish does not run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.quality import monitoring, suites
from jobs.quality.alerts import DeliveryResult, build_sink, deliver
from jobs.quality.report import report_path, write_report
from jobs.quality.results import Alert, CheckResult, Finding, Notification
from jobs.runtime.concurrent import side_by_side
from pipelines.monitoring import CHECKS
from pipelines.monitoring.alerts import alerts_of
from pipelines.unions import union_all
from schemas.config import StatusSettings
from schemas.instants import utc
from schemas.quality import QualitySettings
from schemas.tables import QUALITY_ALERTS, QUALITY_CHECK_RESULTS, QUALITY_FINDINGS

log = logging.getLogger("offsetlake.quality.audit")
_SAMPLE_MESSAGES = 10
RUN_COLUMNS = ("run_id", "interval_start", "interval_end")
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
    findings_total: int = 0


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
    """Alert counts by check and the ``per_check`` alerts of each with the most findings, read back."""
    written = lake.read(QUALITY_ALERTS, start=start, end=start + _INSTANT)
    per_check_rows = Window.partitionBy("check_name")
    order = per_check_rows.orderBy(
        F.col("findings").desc(), F.col("measured_total").desc_nulls_last(), "alert_id"
    )
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
    quality: QualitySettings, findings: dict[str, int], alerts: list[Alert]
) -> list[CheckResult]:
    results = []
    for check in CHECKS:
        failing = findings.get(check.check_name, 0)
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
                message=f"{failing} findings: {check.description}" if failing else "passed",
                sample=messages,
            )
        )
    return results


def _monitoring_findings(lake: Lake, quality: QualitySettings, run_id: str, start, end) -> list[DataFrame]:
    """The monitoring checks' quality/findings rows of the interval, one frame per check (planned, not run)."""
    found = monitoring.find_all(lake, quality, start, end)
    return [
        monitoring.to_findings(
            found[c.name], c, quality.severity(c.check_name, c.severity), run_id, start, end
        )
        for c in CHECKS
    ]


def _write_findings_and_alerts(
    lake: Lake,
    quality: QualitySettings,
    monitoring_findings: list[DataFrame],
    expectation_findings: list[Finding],
    run_id: str,
    start,
    end,
) -> dict[str, int]:
    """Write the interval's quality/findings and quality/alerts; findings by check."""
    spark = lake.spark
    frames = list(monitoring_findings)
    frames.append(
        spark.createDataFrame(
            [f.row(run_id, start, end) for f in expectation_findings], QUALITY_FINDINGS.schema
        )
    )
    replace_audit(lake, QUALITY_FINDINGS, union_all(frames), start)
    findings = lake.read(QUALITY_FINDINGS, start=start, end=start + _INSTANT)
    own = [c.check_name for c in CHECKS if c.alert_per_finding]
    alerts = alerts_of(findings, own, top=quality.sink.top_findings, by=RUN_COLUMNS)
    replace_audit(lake, QUALITY_ALERTS, alerts, start)
    return {
        r.check_name: r.n for r in findings.groupBy("check_name").agg(F.count(F.lit(1)).alias("n")).collect()
    }


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
    # the suites' Spark jobs run while the monitoring checks are planned (an hour's audit is mostly planning)
    (expectation_results, expectation_findings), monitoring_findings = side_by_side(
        lambda: suites.validate_tables(
            lake, quality, start, end, _throughput_window(settings), status.window
        ),
        lambda: _monitoring_findings(lake, quality, run_id, start, end),
    )
    findings = _write_findings_and_alerts(
        lake, quality, monitoring_findings, expectation_findings, run_id, start, end
    )
    counts, alerts = _collected_alerts(lake, start, quality.sink.max_alerts_per_check)
    results = (*expectation_results, *_monitoring_results(quality, findings, alerts))
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
        findings_total=sum(findings.values()),
    )
    delivery = deliver(build_sink(quality.sink), notification) if alerts else None
    write_report(spark, path, notification, results, delivery)
    log.info("audit %s: %d checks, %d failed, %d alerts; report %s", notification.status, len(results),
             len(notification.failed_checks), notification.alerts_total, path)  # fmt: skip
    return AuditOutcome(
        tuple(results),
        tuple(alerts),
        has_errors,
        path,
        notification.alerts_total,
        delivery,
        notification.findings_total,
    )
