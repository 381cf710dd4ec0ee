"""The HTML data-quality report: where it goes and what it shows (no Spark needed)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from jobs.quality.alerts import DeliveryResult
from jobs.quality.report import render, report_path, write_report
from jobs.quality.results import Alert, CheckResult, Notification

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
END = datetime(2026, 11, 21, 11, tzinfo=UTC)
PASSED = CheckResult(
    "bronze.offset_snapshots.keys_unique",
    "expectation",
    "bronze.offset_snapshots",
    "error",
    True,
    704,
    0,
    "passed",
)
FAILED = CheckResult(
    "gold.consumer_lag.event_time_in_interval", "expectation", "gold.consumer_lag", "error", False, 4, 1,
    "observed_at: 1 of 4 rows fail", ({"column": "observed_at", "value": "2026-11-21T11:00:00"},),
)  # fmt: skip
ALERT = Alert(
    alert_id="a1", check_name="monitoring.large_regressions", severity="warn", table_name="silver.offset_regressions",
    message="offset moved back by 100 messages", findings=1, cluster="c1", topic="<orders>", consumer_group="billing&co",
    measured_total=100, measured_max=100, first_observed_at=datetime(2026, 11, 21, 10, 5),
)  # fmt: skip


def notification(has_errors: bool, failed: tuple) -> Notification:
    return Notification("manual__2026-11-21T11:00:00+00:00", START, END, has_errors, "/lake/r.html", failed, (ALERT,), 3,
                        {"monitoring.large_regressions": 3}, findings_total=7)  # fmt: skip


def test_report_path_is_under_the_lake_and_safe_as_a_file_name():
    assert report_path("/data/lake", "manual__2026-11-21T11:00:00+00:00") == Path(
        "/data/lake/reports/quality/manual__2026-11-21T11:00:00+00:00.html"
    )
    assert report_path("/data/lake", "a/../b c") == Path("/data/lake/reports/quality/a_.._b_c.html")
    assert report_path("s3a://bucket/lake/", "r1") == "s3a://bucket/lake/reports/quality/r1.html"


def test_report_shows_status_failures_first_samples_alerts_and_delivery(tmp_path):
    page = render(
        notification(True, (FAILED,)),
        [PASSED, FAILED],
        DeliveryResult("webhook", False, 4, "HTTP 503 Service Unavailable"),
    )
    assert '<p class="status error">failed</p>' in page
    assert "2026-11-21T10:00:00Z to 2026-11-21T11:00:00Z" in page
    assert "2 run, 1 failed (1 errors)" in page
    assert page.index("gold.consumer_lag.event_time_in_interval") < page.index(
        "bronze.offset_snapshots.keys_unique"
    )
    assert "&quot;2026-11-21T11:00:00&quot;" in page  # the failing value, escaped
    assert "<td>&lt;orders&gt;</td><td>billing&amp;co</td><td>1</td>" in page and "<orders>" not in page
    assert "3 alerts (monitoring.large_regressions: 3) of 7 findings" in page
    assert "NOT delivered to the webhook sink after 4 attempt(s): HTTP 503 Service Unavailable" in page

    quiet = render(notification(False, ()), [PASSED], None)
    assert '<p class="status pass">passed</p>' in quiet and "nothing to send" in quiet


def test_report_is_written_to_a_local_path_or_through_hadoop_to_a_uri(spark, tmp_path):
    page = render(notification(False, ()), [PASSED], None)
    local = write_report(
        spark, tmp_path / "reports" / "quality" / "r.html", notification(False, ()), [PASSED], None
    )
    assert local.read_text() == page
    uri = report_path(f"file://{tmp_path}/lake", "r/2")
    assert write_report(spark, uri, notification(False, ()), [PASSED], None) == uri
    assert (tmp_path / "lake" / "reports" / "quality" / "r_2.html").read_text() == page
