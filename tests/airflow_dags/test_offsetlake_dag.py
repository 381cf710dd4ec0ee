"""DagBag integrity of the OffsetLake DAG, and real ``dag.test()`` runs with a recording command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DAG_ID = "offsetlake"
STAGES = ["ingest", "replay", "marts", "audit", "publish"]
TASKS = ["session", *STAGES, "report", "maintenance_due", "maintain", "end_session"]
SKIPPED_OFF_MIDNIGHT = {"maintenance_due": "success", "maintain": "skipped"}
SESSION_TASKS = {"session": "success", "end_session": "success"}


def test_dagbag_loads_the_dag_with_its_schedule_retries_and_task_order(dagbag):
    bag = dagbag()
    assert bag.import_errors == {}
    assert list(bag.dags) == [DAG_ID]
    dag = bag.dags[DAG_ID]
    assert type(dag.timetable).__name__ == "CronDataIntervalTimetable"
    assert (dag.timetable.expression, str(dag.timetable.timezone)) == ("0 * * * *", "UTC")
    assert (dag.catchup, dag.max_active_runs, dag.start_date) == (True, 1, datetime(2026, 1, 1, tzinfo=UTC))
    assert {"offsetlake", "rocketmq"} <= set(dag.tags)
    assert [t.task_id for t in dag.topological_sort()] == TASKS
    assert {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks} == {
        "session": [], "ingest": ["session"], "replay": ["ingest"], "marts": ["replay"], "audit": ["marts"],
        "publish": ["audit"], "report": ["publish"], "end_session": ["report", "session"],
        "maintenance_due": ["report"], "maintain": ["maintenance_due"],
    }  # fmt: skip
    assert {t.task_id for t in dag.tasks if t.is_setup} == {"session"}
    assert {t.task_id for t in dag.tasks if t.is_teardown} == {"end_session"}
    assert {t.task_id: (t.retries, t.depends_on_past, t.retry_exponential_backoff) for t in dag.tasks} == {
        task: (2, task in STAGES or task == "report", True) for task in TASKS
    }


def test_the_maintenance_is_due_once_a_day_after_the_interval_that_ends_at_or_crosses_midnight(airflow):
    from airflow_dags.offsetlake_dag import maintenance_due

    def at(day: int, hour: int, minute: int = 0) -> datetime:
        return datetime(2026, 3, day, hour, minute, tzinfo=UTC)

    assert maintenance_due(at(1, 23), at(2, 0))
    assert not maintenance_due(at(2, 0), at(2, 1)) and not maintenance_due(at(1, 10), at(1, 11))
    assert maintenance_due(at(1, 23, 30), at(2, 0, 30))  # a half-hourly schedule's interval across midnight
    assert maintenance_due(at(1, 0), at(2, 0))  # a daily schedule: every run


def test_publish_declares_the_gold_tables_as_assets_downstream_dags_can_wait_for(dagbag):
    from schemas.tables import GOLD_TABLES

    dag = dagbag().dags[DAG_ID]
    outlets = {t.task_id: sorted(a.name for a in t.outlets) for t in dag.tasks if t.outlets}
    assert outlets == {"publish": sorted(f"offsetlake.gold.{spec.name}" for spec in GOLD_TABLES)}


def test_parsing_imports_no_heavy_library_and_reads_the_environment(airflow, tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "import airflow_dags.offsetlake_dag as module\n"
        "heavy = sorted(m for m in ('pyspark', 'great_expectations', 'deltalake', 'jobs', 'pipelines') if m in sys.modules)\n"
        "print(json.dumps({'heavy': heavy, 'schedule': module.SCHEDULE, 'retries': module.RETRIES,\n"
        "                  'delay': module.RETRY_DELAY.total_seconds(), 'start': module.START_DATE.isoformat()}))\n"
    )
    env = {**os.environ, "OFFSETLAKE_SCHEDULE": "*/30 * * * *", "OFFSETLAKE_RETRIES": "5",
           "OFFSETLAKE_RETRY_DELAY_SECONDS": "60", "OFFSETLAKE_START_DATE": "2025-06-01T00:00:00Z"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(probe)], env=env, capture_output=True, text=True, timeout=300, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "heavy": [], "schedule": "*/30 * * * *", "retries": 5, "delay": 60.0, "start": "2025-06-01T00:00:00+00:00"
    }  # fmt: skip


def run_interval(dag, interval_end: datetime):
    """``dag.test()`` of the hourly interval ending at ``interval_end``; its DagRun and task states."""
    run = dag.test(logical_date=interval_end)
    return run, {ti.task_id: ti.state for ti in run.get_task_instances()}


def test_each_stage_runs_with_the_templated_interval_and_one_run_id(
    dagbag, stage_recorder, monkeypatch, tmp_path
):
    command, log, _ = stage_recorder
    from airflow.models.variable import Variable

    Variable.set("offsetlake_landing", "/data/landing")  # a Variable wins over the environment
    monkeypatch.setenv("OFFSETLAKE_LANDING", "/ignored")
    monkeypatch.setenv("OFFSETLAKE_LAKE", str(tmp_path / "lake dir"))
    monkeypatch.setenv("OFFSETLAKE_CONFIG", "/etc/offsetlake.toml")
    monkeypatch.setenv("OFFSETLAKE_COMMAND", command)
    monkeypatch.setenv("OFFSETLAKE_RETRIES", "0")
    try:
        run, states = run_interval(dagbag().dags[DAG_ID], datetime(2026, 3, 1, 11, tzinfo=UTC))
    finally:
        Variable.delete("offsetlake_landing")
    assert (run.state, states) == (
        "success",
        {**dict.fromkeys(STAGES + ["report"], "success"), **SKIPPED_OFF_MIDNIGHT, **SESSION_TASKS},
    )
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    interval = [
        "--from",
        "2026-03-01T10:00:00+00:00",
        "--to",
        "2026-03-01T11:00:00+00:00",
        "--run-id",
        run.run_id,
    ]
    lake = ["--lake", str(tmp_path / "lake dir")]
    assert calls == [
        ["session", "start", *lake, "--optional", "--config", "/etc/offsetlake.toml"],
        ["ingest", *lake, "--landing", "/data/landing", *interval, "--config", "/etc/offsetlake.toml"],
        *[[stage, *lake, *interval, "--config", "/etc/offsetlake.toml"] for stage in STAGES[1:]],
        ["report", *lake, *interval],
        ["session", "release", *lake, "--idle", "PT2H"],  # the teardown: kept for the next interval
    ]


def test_a_failed_audit_stops_publish(dagbag, stage_recorder, monkeypatch, tmp_path):
    command, log, codes = stage_recorder
    codes.write_text(json.dumps({"audit": 4}))  # the CLI's data-quality exit code
    for name, value in {
        "COMMAND": command,
        "LANDING": "/data/landing",
        "LAKE": "/data/lake",
        "RETRIES": "0",
    }.items():
        monkeypatch.setenv(f"OFFSETLAKE_{name}", value)
    monkeypatch.delenv("OFFSETLAKE_CONFIG", raising=False)
    run, states = run_interval(dagbag().dags[DAG_ID], datetime(2026, 3, 2, 11, tzinfo=UTC))
    assert run.state == "failed"
    assert states == {
        **SESSION_TASKS,  # the teardown runs whatever the stages did
        "ingest": "success",
        "replay": "success",
        "marts": "success",
        "audit": "failed",
        "publish": "upstream_failed",
        "report": "upstream_failed",
        "maintenance_due": "upstream_failed",
        "maintain": "upstream_failed",
    }
    assert [json.loads(line)[0] for line in log.read_text().splitlines()] == [
        "session",
        "ingest",
        "replay",
        "marts",
        "audit",
        "session",
    ]


def test_missing_lake_setting_fails_the_first_task_without_retrying(dagbag, stage_recorder, monkeypatch):
    command, log, _ = stage_recorder
    monkeypatch.setenv("OFFSETLAKE_COMMAND", command)
    monkeypatch.setenv("OFFSETLAKE_LANDING", "/data/landing")
    monkeypatch.delenv("OFFSETLAKE_LAKE", raising=False)
    monkeypatch.setenv("OFFSETLAKE_RETRY_DELAY_SECONDS", "1")  # retries stay 2: they must not be used
    run, states = run_interval(dagbag().dags[DAG_ID], datetime(2026, 3, 3, 11, tzinfo=UTC))
    assert (run.state, states["session"], states["ingest"], states["publish"]) == (
        "failed", "failed", "upstream_failed", "upstream_failed",
    )  # fmt: skip
    assert [ti.try_number for ti in run.get_task_instances() if ti.task_id == "session"] == [1]
    assert not log.exists()


def test_the_interval_ending_at_midnight_maintains_the_lake_after_its_report(
    dagbag, stage_recorder, monkeypatch, tmp_path
):
    command, log, _ = stage_recorder
    for name, value in {"COMMAND": command, "LANDING": "/data/landing", "LAKE": "/data/lake", "RETRIES": "0",
                        "RETENTION": "P30D", "KEEP_SESSION": "off"}.items():  # fmt: skip
        monkeypatch.setenv(f"OFFSETLAKE_{name}", value)
    monkeypatch.delenv("OFFSETLAKE_CONFIG", raising=False)
    run, states = run_interval(dagbag().dags[DAG_ID], datetime(2026, 3, 4, 0, tzinfo=UTC))
    assert (run.state, states) == ("success", dict.fromkeys(TASKS, "success"))
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [call[0] for call in calls][:7] == ["session", *STAGES, "report"]
    assert sorted(call[:2] for call in calls[7:]) == [["maintain", "--lake"], ["session", "stop"]]  # kept off
    assert next(c for c in calls if c[0] == "maintain") == ["maintain", "--lake", "/data/lake", "--run-id", f"{run.run_id}-maintain",
                         "--retention", "P30D"]  # fmt: skip
