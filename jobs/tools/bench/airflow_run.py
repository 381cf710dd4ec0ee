"""``offsetlake bench --case airflow-hour``: each size's hourly interval through Airflow, printed and saved."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from jobs.cli.main import EXIT_FAILED, EXIT_OK
from jobs.tools.bench.airflow_hour import INTERVAL_NAMES, INTERVALS, TASKS, run_airflow_hour
from jobs.tools.bench.report import write_report
from schemas.config import Settings


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_airflow_hour(figures: dict) -> None:
    """A table per interval: each task's wall time, the stage's own time in it, the rest (the task's fixed cost)."""
    print(
        f"-- airflow-hour-{figures['commits_per_hour_requested']}: {figures['commit_events']:,} commit events an hour, "
        f"{figures['landed_files']:,} files for {len(figures['intervals'])} hours; machine load (1-min average) "
        f"{figures['load_before']:.1f} before, {figures['load_after']:.1f} after; Airflow's import "
        f"{figures['airflow_import_seconds']:.1f}s, DB migration {figures['migrate_seconds']:.1f}s, DAG parse "
        f"{figures['parse_seconds']:.1f}s (in no interval)"
    )  # fmt: skip
    # a failed call may have run fewer intervals than it meant to
    for name, interval in zip(INTERVAL_NAMES, figures["intervals"], strict=False):
        landed = interval.get("landed_files")
        print(f"   {name}" + (f"; {landed:,} files landed or grown before it" if landed is not None else ""))
        print(f"   {'task':<12} {'state':<9} {'task wall s':>11} {'stage s':>8} {'rest s':>7}")
        for stage in TASKS:
            task = interval["tasks"].get(stage) or {}
            own = interval["stage_seconds"].get(stage)
            rest = task["seconds"] - own if task.get("seconds") is not None and own is not None else None
            print(
                f"   {stage:<12} {task.get('state', '-'):<9} {_seconds(task.get('seconds')):>11} {_seconds(own):>8} {_seconds(rest):>7}"
            )
        tasks = sum(t["seconds"] for t in interval["tasks"].values() if t and t["seconds"] is not None)
        print(
            f"   {'tasks':<12} {'':<9} {tasks:>11.1f} {sum(interval['stage_seconds'].values()):>8.1f}   "
            f"dag.test() of the interval {interval['interval_seconds']:.1f}s"
        )  # fmt: skip


def bench_airflow_hours(sizes: list[int], settings: Settings, workdir: Path) -> int:
    """Each size's interval in ``<workdir>/airflow-hour-<n>/``; figures in ``<workdir>/airflow-<timestamp>.json``."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"airflow-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    cases = []
    for n in sorted(sizes):
        print(
            f"\n== airflow-hour-{n}: simulating {INTERVALS} hours, then their intervals through Airflow ...",
            flush=True,
        )
        load_before = os.getloadavg()[0]
        figures = run_airflow_hour(n, settings, (workdir / f"airflow-hour-{n}").resolve())
        cases.append({**figures, "load_before": load_before, "load_after": os.getloadavg()[0]})
        print_airflow_hour(cases[-1])
        write_report(
            {"created_at": datetime.now(UTC).isoformat(), "cpus": os.cpu_count(), "cases": cases}, path
        )
    print(f"   figures: {path}")
    return EXIT_OK if all(c["succeeded"] for c in cases) else EXIT_FAILED
