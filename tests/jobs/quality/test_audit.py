"""The audit stage on a small real Delta lake: results, alerts, sink, report, re-runs."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from pyspark.sql.types import StructField, StructType

from jobs.io.lake import Lake
from jobs.quality.audit import AuditError, run_audit
from pipelines.monitoring import CHECKS
from schemas import tables as t
from schemas.quality import SUITES, AlertSinkSettings, QualitySettings
from schemas.tables import QUALITY_ALERTS, QUALITY_CHECK_RESULTS, QUALITY_FINDINGS

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
END = datetime(2026, 11, 21, 11, tzinfo=UTC)
DAY = date(2026, 11, 21)
KEY = {
    "cluster": "c1",
    "broker": "broker-a",
    "topic": "orders",
    "consumer_group": "billing",
    "queue_id": 0,
    "key_kind": "normal",
}
LINEAGE = {"source_file": "f", "line_no": 1, "_file_hash": "h", "_ingest_run_id": "ingest-1"}


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, second, tzinfo=UTC)


def frame(spark, spec, rows: list[dict]):
    schema = StructType([StructField(f.name, f.dataType, True) for f in spec.schema.fields])
    return spark.createDataFrame([tuple(r.get(c) for c in spec.columns) for r in rows], schema)


def snapshot(ts, offset):
    return {
        **KEY,
        **LINEAGE,
        "line_no": None,
        "snapshot_at": ts,
        "offset": offset,
        "snapshot_source": "main",
        "snapshot_date": DAY,
    }


def commit(ts, offset, line):
    return {**KEY, **LINEAGE, "line_no": line, "committed_at": ts, "offset": offset, "evidence": "commit_log",
            "client_offset_after": offset, "is_regression": False, "commit_date": DAY}  # fmt: skip


def regression(ts, size, host):
    return {**KEY, "detected_at": ts, "offset": 1000 - size, "stored_offset": 1000, "regression_size": size, "evidence": "commit",
            "client_host": host, "commit_evidence": "commit_log", "commit_path": "update_offset", "observation_seq": "1",
            "source_file": "f", "detected_date": DAY}  # fmt: skip


def lag(ts, group, queue, broker_offset, consumer_offset):
    return {**KEY, "consumer_group": group, "queue_id": queue, "observed_at": ts, "broker_offset": broker_offset,
            "broker_min_offset": 0, "consumer_offset": consumer_offset, "consumer_offset_at": ts,
            "lag_messages": broker_offset - consumer_offset, "observed_date": ts.date()}  # fmt: skip


@pytest.fixture
def lake(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(
        t.OFFSET_SNAPSHOTS,
        frame(
            spark,
            t.OFFSET_SNAPSHOTS,
            [snapshot(at(10), 100), snapshot(at(10, 5), 110), snapshot(at(10, 10), 90)],
        ),
    )
    commits = [commit(at(9, 59, 58), 100, 1), commit(at(10, 4, 59), 110, 2), commit(at(10, 9), 120, 3)]
    lake.append(t.OFFSET_COMMITS_REPLAYED, frame(spark, t.OFFSET_COMMITS_REPLAYED, commits))
    regressions = [regression(at(10, 20), 100, "10.0.0.7:35394"), regression(at(10, 30), 5, "10.0.0.8:4000")]
    lake.append(t.OFFSET_REGRESSIONS, frame(spark, t.OFFSET_REGRESSIONS, regressions))
    history = [lag(at(8, 30), "old-reports", 0, 50, 40), lag(at(9), "old-reports", 0, 60, 40)]
    lake.append(t.CONSUMER_LAG, frame(spark, t.CONSUMER_LAG, history))
    staged = [
        lag(at(10), "billing", 0, 200, 120),
        lag(at(10), "billing", 1, 250, 300),  # negative lag
        lag(at(10, 30), "old-reports", 0, 90, 40),  # still at 40 since 08:30 while lag grew
        lag(at(11), "billing", 0, 210, 200),  # outside the interval: publish must not get it
    ]
    lake.staging().append(t.CONSUMER_LAG, frame(spark, t.CONSUMER_LAG, staged))
    return lake


def test_audit_records_results_and_alerts_and_reruns_replace_them(spark, lake, tmp_path):
    alerts_file = tmp_path / "alerts.jsonl"
    quality = QualitySettings(
        lookback="PT3H",
        regression_alert_above=50,
        sink=AlertSinkSettings(kind="file", path=alerts_file, max_alerts_per_check=5),
    )
    outcome = run_audit(lake, quality, START, END, "run-1")

    failed = {r.check_name: (r.severity, r.failing_rows) for r in outcome.results if not r.is_success}
    assert failed == {
        "gold.consumer_lag.event_time_in_interval": ("error", 1),
        "monitoring.snapshot_gaps": ("warn", 1),
        "monitoring.negative_lag": ("warn", 1),
        "monitoring.abandoned_groups": ("warn", 1),
        "monitoring.snapshot_commit_mismatch": ("warn", 1),
        "monitoring.large_regressions": ("warn", 1),
    }
    assert outcome.has_errors
    assert len(outcome.results) == sum(len(s.expectations) for s in SUITES) + len(CHECKS)
    assert outcome.alerts_total == 6 and len(outcome.alerts) == 6

    stored = lake.read(QUALITY_FINDINGS).select(
        "run_id", "check_name", "severity", "table_name", "cluster", "broker", "topic", "consumer_group", "queue_id",
        "client_host", "observed_at", "measured_value", "message",
    )  # fmt: skip
    expected = {
        ("run-1", "gold.consumer_lag.event_time_in_interval", "error", "gold.consumer_lag", None, None, None, None, None, None, None, 1,
         "gold.consumer_lag.event_time_in_interval failed: observed_at: 1 of 4 rows fail"),
        ("run-1", "monitoring.snapshot_gaps", "warn", "bronze.offset_snapshots", "c1", "broker-a", None, None, None, None,
         at(10, 10), 3000, "snapshots stopped: none for 3000s since 2026-11-21T10:10:00Z (allowed gap 900s)"),
        ("run-1", "monitoring.negative_lag", "warn", "gold.consumer_lag", "c1", "broker-a", "orders", "billing", 1, None, at(10), 50,
         "consumer offset 300 is 50 above the broker's max offset 250 (negative lag): "
         "the topic was recreated or the store wiped while the group kept its offset"),
        ("run-1", "monitoring.abandoned_groups", "warn", "gold.consumer_lag", "c1", None, "orders", "old-reports", None, None,
         at(10, 30), 40, "offsets of old-reports on orders have not moved for 7200s (since 2026-11-21T08:30:00Z) "
         "while lag grew by 40 to 50 messages over 1 queues"),
        ("run-1", "monitoring.snapshot_commit_mismatch", "warn", "bronze.offset_snapshots", "c1", "broker-a", "orders", "billing", 0,
         None, at(10, 10), -30,
         "snapshot at 2026-11-21T10:10:00Z holds offset 90 but the last commit at or before it (at 2026-11-21T10:09:00Z) is 120"),
        ("run-1", "monitoring.large_regressions", "warn", "silver.offset_regressions", "c1", "broker-a", "orders", "billing", 0,
         "10.0.0.7:35394", at(10, 20), 100, "offset moved back by 100 messages (from 1000 to 900), committed by client host 10.0.0.7:35394"),
    }  # fmt: skip
    assert {
        tuple(v.replace(tzinfo=UTC) if isinstance(v, datetime) else v for v in r) for r in stored.collect()
    } == expected
    # each check found one row here: one alert each, which tells that row's message
    alerts = lake.read(QUALITY_ALERTS).select(
        "check_name", "consumer_group", "findings", "measured_total", "message"
    )
    assert {tuple(r) for r in alerts.collect()} == {(row[1], row[7], 1, row[11], row[12]) for row in expected}

    sent = [json.loads(line) for line in alerts_file.read_text().splitlines()]
    assert sorted((a["check_name"], a["run_id"], a["interval_start"]) for a in sent) == sorted(
        (row[1], "run-1", "2026-11-21T10:00:00Z") for row in expected
    )
    regression_alert = next(a for a in sent if a["check_name"] == "monitoring.large_regressions")
    assert (regression_alert["consumer_group"], regression_alert["findings"], regression_alert["measured_max"],
            regression_alert["top_findings"][0]["client_host"]) == ("billing", 1, 100, "10.0.0.7:35394")  # fmt: skip

    page = outcome.report_path.read_text()
    assert outcome.report_path == tmp_path / "lake" / "reports" / "quality" / "run-1.html"
    assert "gold.consumer_lag.event_time_in_interval" in page and "delivered to the file sink" in page
    first_results = lake.read(QUALITY_CHECK_RESULTS).count()
    first_ids = sorted(r.alert_id for r in lake.read(QUALITY_ALERTS).collect())

    # A re-run of the interval replaces both tables' rows; here the gold check is downgraded to a warning
    # and the webhook cannot be reached: the run still completes and says so.
    rerun = QualitySettings(
        lookback="PT3H", regression_alert_above=50, severities={"gold.consumer_lag.event_time_in_interval": "warn"},
        sink=AlertSinkSettings(kind="webhook", url="http://127.0.0.1:9/", retries=0, timeout_seconds=1),
    )  # fmt: skip
    again = run_audit(lake, rerun, START, END, "run-2")
    assert not again.has_errors
    assert (again.delivery.is_delivered, again.delivery.attempts) == (False, 1)
    assert "NOT delivered to the webhook sink" in again.report_path.read_text()
    rows = lake.read(QUALITY_CHECK_RESULTS).collect()
    assert len(rows) == first_results == len(outcome.results)
    assert {r.run_id for r in rows} == {"run-2"}
    alerts = lake.read(QUALITY_ALERTS).collect()
    assert sorted(r.alert_id for r in alerts) == first_ids and {r.run_id for r in alerts} == {"run-2"}


def test_audit_of_an_empty_interval_is_refused(spark, tmp_path):
    with pytest.raises(AuditError, match="interval is empty"):
        run_audit(Lake(spark, tmp_path / "lake", engine="delta-rs"), QualitySettings(), END, START, "run-x")


def test_a_check_whose_findings_come_from_no_row_of_the_interval_reads_nothing(spark, lake):
    """No snapshot between 12:00 and 13:00: the snapshot-commit check finds nothing there, and its
    plan reads none of the commits its look-back would otherwise window (every commit of six hours)."""
    from jobs.quality.monitoring import find_all

    quiet = find_all(lake, QualitySettings(), at(12), at(13))["snapshot_commit_mismatch"]
    assert quiet.count() == 0
    assert "parquet" not in quiet._jdf.queryExecution().optimizedPlan().toString().lower()
    busy = find_all(lake, QualitySettings(), START, END)["snapshot_commit_mismatch"]
    assert busy.count() == 1
    assert "parquet" in busy._jdf.queryExecution().optimizedPlan().toString().lower()
