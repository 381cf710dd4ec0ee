"""The hourly interval as Airflow runs it: the DAG (airflow_dags/) run by real Airflow's ``dag.test()``.

For three hours of a cluster's commits, about ``commits_per_hour`` commit events each (the
simulator: 2 brokers, one topic@group of 8 queues per ~15,500 commits an hour, with snapshots,
admin outputs and logs), simulated into ``generated/`` and landed hour by hour as a collector
lands them (jobs.tools.bench.collected: before each interval, the files and lines written by its
end), a child process sets up Airflow (a fresh ``AIRFLOW_HOME``, a migrated SQLite metadata DB,
as the DAG tests do), parses the DAG and runs the three hourly intervals one after the
other, as the schedule does: each the shared session's setup task, five stage tasks, each
``offsetlake -v <stage>`` in its own process (served by the session), the report and the
session's teardown. The first interval starts the session; its teardown keeps it (the DAG's
default), so the next two are hours of a schedule in its steady state. Each interval's figures:
each task's wall time (Airflow's start and end), each stage's own time (the stage's ``done in``
line in the task's output), the interval's total, and each task's time in Airflow (from
dag.test() taking it up to taking up the next: the task's own process and Airflow's work around
it). The child stops the session as it ends. The child is ``python -m jobs.tools.bench.airflow_hour <request.json>``: Airflow reads its
configuration from the environment when first imported, so it is imported only there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs.cli.shared_session import stop
from jobs.sources import patterns
from jobs.tools.bench.collected import land_until
from jobs.tools.bench.pipeline_run import REPO_ROOT, PipelineRunError, offsetlake_command, settings_toml
from jobs.tools.simulator import SimulationSpec, simulate
from schemas.config import Settings

START = datetime(2026, 11, 21, tzinfo=UTC)
# the hours run, one after the other: the session's start, then hours on the kept session, whose JVM
# compiles more each hour
INTERVAL_NAMES = (
    "first hour: its session task starts the session",
    "second hour: the session kept from the hour before",
    "third hour: the session kept again",
)
INTERVALS = len(INTERVAL_NAMES)
STAGES = ("ingest", "replay", "marts", "audit", "publish")
# the interval's tasks as the bench prints them: the shared session's setup, the stages, the report
# and the session's teardown (the daily maintenance is skipped off midnight)
TASKS = ("session", *STAGES, "report", "end_session")
COMMITS_PER_GROUP_HOUR = 15_552  # 18 pairs x (1 + 0.2 pull commits) x 720 simulator ticks an hour
STAGE_DONE = re.compile(r"stage (\w+): done in ([\d.]+)s")
# dag.test()'s own line as it takes up a task: the task's time in Airflow runs from there to the next one's
TASK_TAKEN_UP = re.compile(r"^(\S+Z) \[info\s*\] \[DAG TEST\] starting task_id=(\w+)", re.MULTILINE)


def hour_spec(commits_per_hour: int, hours: int = 1) -> SimulationSpec:
    groups = max(1, round(commits_per_hour / COMMITS_PER_GROUP_HOUR))
    return SimulationSpec(
        start=START, duration=timedelta(hours=hours), topics=groups, queues_per_topic=(8,), groups=groups,
        clients_per_group=(2,),
    )  # fmt: skip


def run_airflow_hour(commits_per_hour: int, settings: Settings, case_dir: Path) -> dict:
    """Simulate the hours into ``case_dir/generated``, run their intervals through Airflow, each
    after landing its hour into ``case_dir/landing``; returns the figures (``intervals``: each
    interval's)."""
    generated, landing = case_dir / "generated", case_dir / "landing"
    lake, home = case_dir / "lake", case_dir / "airflow-home"
    for path in (generated, landing, lake, home):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    case_dir.mkdir(parents=True, exist_ok=True)
    landing.mkdir()
    manifest = simulate(hour_spec(commits_per_hour, INTERVALS), generated)
    config = case_dir / "offsetlake.toml"
    config.write_text(settings_toml(settings))
    request, result, log = (
        case_dir / "airflow.request.json",
        case_dir / "airflow.result.json",
        case_dir / "airflow.log",
    )
    request.write_text(json.dumps({"generated": str(generated), "patterns": patterns(settings),
                                   "landing": str(landing), "lake": str(lake), "home": str(home),
                                   "config": str(config), "result": str(result)}))  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    began = time.perf_counter()
    with log.open("w") as out:
        code = subprocess.call(
            [sys.executable, "-m", "jobs.tools.bench.airflow_hour", str(request)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT,
        )  # fmt: skip
    if code != 0 or not result.is_file():
        raise PipelineRunError(f"the Airflow interval failed (exit code {code}); its output is in {log}")
    figures = json.loads(result.read_text())
    text = log.read_text()
    done_lines: dict[str, list[float]] = {}
    for m in STAGE_DONE.finditer(text):
        done_lines.setdefault(m[1], []).append(float(m[2]))
    for number, interval in enumerate(figures["intervals"]):
        # each stage's n-th "done in" line is the n-th interval's
        interval["stage_seconds"] = {
            stage: lines[number] for stage, lines in done_lines.items() if number < len(lines)
        }
        interval["in_airflow_seconds"] = in_airflow_seconds(text, interval["began_at"], interval["ended_at"])
    return {
        "commits_per_hour_requested": commits_per_hour,
        "commit_events": manifest.commit_events // INTERVALS,
        "landed_files": sum(1 for p in landing.rglob("*") if p.is_file()),
        "process_seconds": time.perf_counter() - began,
        **figures,
    }


def in_airflow_seconds(log_text: str, began_at: float, ended_at: float) -> dict[str, float]:
    """Each task of the interval run from ``began_at`` to ``ended_at``: its time from dag.test()
    taking it up to taking up the next (the last: to the end), Airflow's own work for it included."""
    taken = [(datetime.fromisoformat(m[1]).timestamp(), m[2]) for m in TASK_TAKEN_UP.finditer(log_text)]
    taken = [(at, task) for at, task in taken if began_at <= at <= ended_at]
    ends = [at for at, _ in taken[1:]] + [ended_at]
    return {task: end - at for (at, task), end in zip(taken, ends, strict=True)}


def _child(request_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
    os.environ.update({
        "AIRFLOW_HOME": request["home"], "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO_ROOT / "airflow_dags"),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{request['home']}/airflow.db",
        "OFFSETLAKE_COMMAND": " ".join([*offsetlake_command(), "-v"]), "OFFSETLAKE_LANDING": request["landing"],
        "OFFSETLAKE_LAKE": request["lake"], "OFFSETLAKE_CONFIG": request["config"], "OFFSETLAKE_RETRIES": "0",
    })  # fmt: skip
    Path(request["home"]).mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    from airflow.dag_processing.dagbag import DagBag
    from airflow.utils import db

    imported = time.perf_counter()
    db.upgradedb()
    migrated = time.perf_counter()
    dag = DagBag(dag_folder=str(REPO_ROOT / "airflow_dags")).dags["offsetlake"]
    parsed = time.perf_counter()
    intervals = []
    try:
        for hour in range(1, INTERVALS + 1):
            end = START + timedelta(hours=hour)
            landed = land_until(
                Path(request["generated"]), Path(request["landing"]), end, request["patterns"]
            )
            began_at, interval_began = time.time(), time.perf_counter()
            run = dag.test(logical_date=end)
            seconds = time.perf_counter() - interval_began
            tasks = {
                ti.task_id: {
                    "state": str(ti.state),
                    "seconds": (ti.end_date - ti.start_date).total_seconds() if ti.start_date and ti.end_date else None,
                }
                for ti in run.get_task_instances()
            }  # fmt: skip
            intervals.append({
                "landed_files": landed, "interval_seconds": seconds, "began_at": began_at, "ended_at": time.time(),
                "tasks": {task: tasks.get(task) for task in TASKS},
                "succeeded": all((tasks.get(task) or {}).get("state") == "success" for task in TASKS),
            })  # fmt: skip
    finally:
        stop(request["lake"])  # the last interval's teardown kept it for an interval that does not come
    Path(request["result"]).write_text(json.dumps({
        "airflow_import_seconds": imported - began, "migrate_seconds": migrated - imported,
        "parse_seconds": parsed - migrated, "intervals": intervals,
        "succeeded": all(interval["succeeded"] for interval in intervals),
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
