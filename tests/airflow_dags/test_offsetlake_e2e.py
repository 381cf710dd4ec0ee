"""End to end: the DAG run by real Airflow (``dag.test()``) over two hourly intervals of simulated
RocketMQ evidence, each stage a real ``offsetlake`` process; then the Delta tables and alerts."""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest

from jobs.cli.shared_session import socket_path, stop
from jobs.tools.simulator import SimulationSpec, simulate

START = datetime(2026, 11, 21, tzinfo=UTC)
STAGES = ["ingest", "replay", "marts", "audit", "publish"]
QUEUE = ("cluster", "broker", "topic", "consumer_group", "queue_id")


def table(lake: Path, path: str) -> list[dict]:
    from deltalake import DeltaTable

    return DeltaTable(str(lake / path)).to_pyarrow_table().to_pylist()


@pytest.mark.slow
def test_two_intervals_through_airflow_find_the_simulated_incidents(dagbag, tmp_path, monkeypatch):
    from schemas.config import Settings

    assert "quality" in Settings.model_fields, (
        "schemas.config.Settings needs `quality: QualitySettings = QualitySettings()`"
    )
    # Small on purpose (about 50 files): every stage is a separate Spark process.
    spec = SimulationSpec(
        start=START, duration=timedelta(hours=2), topics=2, queues_per_topic=(2, 2), groups=2, clients_per_group=(2, 1),
        snapshot_interval=timedelta(minutes=10), bak_every=0, progress_interval=timedelta(minutes=30), client_logs_for=0,
        rate_scale=0.3,
    )  # fmt: skip
    manifest = simulate(spec, tmp_path / "landing")
    lake, alerts_file, config = tmp_path / "lake", tmp_path / "alerts.jsonl", tmp_path / "offsetlake.toml"
    config.write_text(
        '[spark]\nmaster = "local[2]"\ndriver_memory = "1g"\nshuffle_partitions = 2\n'
        f'[quality]\nsnapshot_interval = "PT10M"\nregression_alert_above = 0\n[quality.sink]\nkind = "file"\npath = "{alerts_file}"\n'
    )
    settings = {"COMMAND": str(Path(sys.executable).parent / "offsetlake"), "LANDING": str(tmp_path / "landing"),
                "LAKE": str(lake), "CONFIG": str(config), "RETRIES": "0", "SPARK_LOG_LEVEL": "ERROR"}  # fmt: skip
    for name, value in settings.items():
        monkeypatch.setenv(f"OFFSETLAKE_{name}", value)
    dag = dagbag().dags["offsetlake"]

    runs, timings = [], []
    try:
        for hour in (1, 2):
            began = time.perf_counter()
            run = dag.test(logical_date=START + timedelta(hours=hour))
            timings.append(time.perf_counter() - began)
            assert {ti.task_id: ti.state for ti in run.get_task_instances()} == {
                **dict.fromkeys(["session", *STAGES, "report", "maintenance_due", "end_session"], "success"),
                "maintain": "skipped",  # the daily maintenance follows the interval ending at midnight only
            }
            assert (run.data_interval_start, run.data_interval_end) == (
                START + timedelta(hours=hour - 1),
                START + timedelta(hours=hour),
            )
            runs.append(run.run_id)
        # the first interval's teardown kept its session, which served the second interval too
        # (five stages and the report an interval)
        assert socket_path(lake).exists()
    finally:
        stop(lake)
    print(f"\ndag.test() per interval: {', '.join(f'{t:.0f}s' for t in timings)}")
    sessions = sorted((lake / "logs").glob("session-*.log"))
    assert [log.read_text().count("exit code 0") for log in sessions] == [12]

    # Every check ran once per run, and none of severity error failed (publish ran).
    results = table(lake, "quality/check_results")
    assert sorted({r["run_id"] for r in results}) == sorted(runs)
    per_run = {run_id: [r for r in results if r["run_id"] == run_id] for run_id in runs}
    assert len(per_run[runs[0]]) == len(per_run[runs[1]]) > 80
    assert [r["check_name"] for r in results if not r["is_success"] and r["severity"] == "error"] == []
    assert {r["check_name"] for r in per_run[runs[1]] if not r["is_success"]} >= {
        "monitoring.large_regressions"
    }
    for run_id in runs:
        assert (lake / "reports" / "quality" / f"{run_id}.html").is_file()
        page = (lake / "reports" / "lake" / f"{run_id}.html").read_text()
        # the report task's page, which links the audit's page as that one links it
        assert "Lag per group" in page and f'href="../quality/{quote(run_id)}.html"' in page
    published = table(lake, "gold/consumer_lag")
    assert {r["observed_at"].hour for r in published} == {0, 1}

    # Every injected incident was found: as a regression (seen in commits) or as a snapshot that
    # disagrees with the replayed commits (seen only in snapshots); nothing else was reported.
    findings = [{**a, "details": json.loads(a["details"])} for a in table(lake, "quality/findings")]
    assert {a["run_id"] for a in findings} == set(runs)
    regressions = {
        (*(r[k] for k in QUEUE), r["offset"], r["stored_offset"])
        for r in table(lake, "silver/offset_regressions")
    }
    regression_alerts = {
        (*(a[k] for k in QUEUE), a["details"]["offset"], a["details"]["stored_offset"]): (a["measured_value"], a["client_host"], a["details"]["evidence"])
        for a in findings if a["check_name"] == "monitoring.large_regressions"
    }  # fmt: skip
    assert set(regression_alerts) == regressions
    mismatches = {
        (*(a[k] for k in QUEUE), a["details"]["snapshot_offset"])
        for a in findings
        if a["check_name"] == "monitoring.snapshot_commit_mismatch"
    }
    incidents = {
        (i.cluster, i.broker, i.topic, i.consumer_group, i.queue_id, i.offset, i.stored_offset_before): i
        for i in manifest.incidents
    }
    assert incidents, "the simulation injected incidents"
    for key, incident in incidents.items():
        assert key in regressions or key[:-1] in mismatches, f"incident not reported: {incident}"
    assert regressions <= set(incidents)
    assert mismatches <= {key[:-1] for key in incidents}
    for key, (size, client_host, evidence) in regression_alerts.items():
        # a commit names the client that sent it; a snapshot that went back (a failover) names none
        assert (size, client_host is None) == (key[-1] - key[-2], evidence != "commit")

    # Alerts group the findings: one per (run, check, cluster, topic, group), counting them all.
    alerts = table(lake, "quality/alerts")
    grouped = {
        (a["run_id"], a["check_name"], a["cluster"], a["topic"], a["consumer_group"]) for a in findings
    }
    assert len(alerts) == len(grouped) <= len(findings)
    assert sum(a["findings"] for a in alerts) == len(findings)

    # The file sink received the same alerts, each with its run's fields.
    sent = [json.loads(line) for line in alerts_file.read_text().splitlines()]
    assert sorted((a["run_id"], a["alert_id"]) for a in sent) == sorted(
        (a["run_id"], a["alert_id"]) for a in alerts
    )
    assert {(a["source"], a["interval_end"]) for a in sent} == {
        ("offsetlake", "2026-11-21T01:00:00Z"),
        ("offsetlake", "2026-11-21T02:00:00Z"),
    }
