"""Kill ``offsetlake run`` at spread points, then run it to the end: every table must equal a lake that never crashed.

    python -m jobs.tools.crash_trial --workdir crash-trial [--kills 8] [--hours 2]

1. Simulates ``--hours`` of the demo cluster into ``<workdir>/landing``.
2. Runs ``offsetlake run`` once on a fresh lake (the reference) and times it.
3. On a second lake, ``--kills`` times: starts ``offsetlake run`` in a process group of its own
   and kills the whole group (driver, JVM, Python workers) with SIGKILL inside a chosen stage:
   the kill points are spread over the stages in order, each a share into its stage as long as
   the reference took for it (the run's ``-v`` log says when each stage starts), each on the
   lake the previous kill left (which the next run resumes).
4. Starts two runs at the same instant on that lake: one must refuse (exit code 5, the lake
   is held) or both must end well; then runs once more to the end.
5. Compares every bronze, silver, gold and quarantine table with the reference, row for row
   (jobs.tools.lake_compare; ops and quality tables record the runs themselves, which differ;
   of the replay checkpoints, the last: each run that finds nothing new checkpoints again, a
   microsecond later), and checks that no unfinished write was left behind.

Prints one line per kill and the comparison, writes ``<workdir>/crash-trial.json``, and exits
1 when a table differs or a final run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs.tools.lake_compare import compare_table, delta_tables
from jobs.tools.simulator import SimulationSpec, simulate

COMPARED_LAYERS = ("bronze", "silver", "gold", "quarantine")
START = datetime(2026, 11, 21, tzinfo=UTC)
_STAGE_STARTED = re.compile(r"stage (\w+): started")
_STAGE_DONE = re.compile(r"stage (\w+): done in ([0-9.]+)s")
STAGES = ("ingest", "replay", "marts", "audit", "publish")
POLL_SECONDS = 0.1


@dataclass
class Kill:
    target: str  # the stage the kill was aimed at
    seconds_into: float
    stage: str | None  # the last stage the run had started (None: before the first)
    finished_before: bool  # the run ended before the kill came


@dataclass
class TrialReport:
    commit_events: int
    reference_seconds: float
    kills: list[Kill] = field(default_factory=list)
    concurrent_exit_codes: list[int] = field(default_factory=list)
    final_exit_codes: list[int] = field(default_factory=list)
    tables: dict[str, str] = field(default_factory=dict)  # table -> "same N rows" or what differs
    leftover_writes: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return (
            all(line.startswith("same") for line in self.tables.values())
            and not self.leftover_writes
            and all(code == 0 for code in self.final_exit_codes)
            and set(self.concurrent_exit_codes) <= {0, 5}
            and 0 in self.concurrent_exit_codes
        )


def _command(landing: Path, lake: Path) -> list[str]:
    return [sys.executable, "-m", "jobs.console", "-v", "run", "--landing", str(landing), "--lake", str(lake)]


def _start(landing: Path, lake: Path, log: Path) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(
            _command(landing, lake), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _run(landing: Path, lake: Path, log: Path) -> int:
    return _start(landing, lake, log).wait()


def _started(log: Path) -> list[str]:
    return _STAGE_STARTED.findall(log.read_text(errors="replace")) if log.is_file() else []


def stage_seconds(log: Path) -> dict[str, float]:
    """How long each stage took, from a finished run's ``-v`` log."""
    return {stage: float(seconds) for stage, seconds in _STAGE_DONE.findall(log.read_text(errors="replace"))}


def kill_points(reference: dict[str, float], kills: int) -> list[tuple[str, float]]:
    """``kills`` (stage, seconds into it) points over every stage: each stage gets kills // 5 of
    them, the longest stages one more each until all are given, spread evenly inside the stage."""
    share = dict.fromkeys(STAGES, kills // len(STAGES))
    for stage in sorted(STAGES, key=lambda s: -reference.get(s, 0.0))[: kills % len(STAGES)]:
        share[stage] += 1
    return [
        (stage, reference.get(stage, 0.0) * (n + 0.5) / share[stage])
        for stage in STAGES
        for n in range(share[stage])
    ]


def kill_in(landing: Path, lake: Path, log: Path, stage: str, seconds: float) -> Kill:
    """Run, and kill the run's whole process group ``seconds`` after it starts ``stage``
    (unless it ended first)."""
    run = _start(landing, lake, log)
    started_at = None
    while run.poll() is None:
        if started_at is None and stage in _started(log):
            started_at = time.monotonic()
        if started_at is not None and time.monotonic() - started_at >= seconds:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
            reached = _started(log)
            return Kill(stage, seconds, reached[-1] if reached else None, finished_before=False)
        time.sleep(POLL_SECONDS)
    reached = _started(log)
    return Kill(stage, seconds, reached[-1] if reached else None, finished_before=True)


def leftover_writes(lake: Path) -> list[str]:
    """Unfinished writes' directories still in the lake (none may be left after a complete run)."""
    return sorted(str(p.relative_to(lake)) for p in lake.glob("*/*/_offsetlake_writes/*"))


def trial(workdir: Path, kills: int, hours: float) -> TrialReport:
    landing, reference, crashed, logs = (
        workdir / n for n in ("landing", "reference-lake", "crashed-lake", "logs")
    )
    logs.mkdir(parents=True, exist_ok=True)
    if not (landing / "_simulation_manifest.json").is_file():
        simulate(SimulationSpec.demo(START).model_copy(update={"duration": timedelta(hours=hours)}), landing)
    manifest = json.loads((landing / "_simulation_manifest.json").read_text())
    began = time.monotonic()
    if _run(landing, reference, logs / "reference.log") != 0:
        raise RuntimeError(f"the reference run failed: see {logs / 'reference.log'}")
    report = TrialReport(manifest["commit_events"], time.monotonic() - began)
    for n, (stage, seconds) in enumerate(kill_points(stage_seconds(logs / "reference.log"), kills), start=1):
        kill = kill_in(landing, crashed, logs / f"kill-{n}.log", stage, seconds)
        report.kills.append(kill)
        where = "the run had ended" if kill.finished_before else f"killed in {kill.stage}"
        print(f"kill {n}: {seconds:.1f}s into {stage}: {where}", flush=True)
    pair = [_start(landing, crashed, logs / f"concurrent-{n}.log") for n in (1, 2)]
    report.concurrent_exit_codes = sorted(run.wait() for run in pair)
    report.final_exit_codes = [_run(landing, crashed, logs / "final.log")]
    for path in sorted({*delta_tables(reference), *delta_tables(crashed)}):
        if path.split("/")[0] in COMPARED_LAYERS:
            latest = "as_of" if path == "silver/replay_checkpoints" else None
            report.tables[path] = compare_table(reference, crashed, path, latest_of=latest).line().strip()
    report.leftover_writes = leftover_writes(crashed)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobs.tools.crash_trial", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--workdir", type=Path, default=Path("crash-trial"))
    parser.add_argument("--kills", type=int, default=8, help="kills, spread over a run's time (default 8)")
    parser.add_argument(
        "--hours", type=float, default=2.0, help="simulated hours of the demo cluster (default 2)"
    )
    args = parser.parse_args(argv)
    report = trial(args.workdir.resolve(), args.kills, args.hours)
    print(
        f"two runs started together: exit codes {report.concurrent_exit_codes}; the final run: {report.final_exit_codes}"
    )
    for line in report.tables.values():
        print(f"  {line}")
    if report.leftover_writes:
        print(f"unfinished writes left: {report.leftover_writes}")
    print(
        ("AGREES" if report.agrees else "DIFFERS")
        + f": {len(report.tables)} tables, {sum(not k.finished_before for k in report.kills)} kills"
    )
    (args.workdir / "crash-trial.json").write_text(
        json.dumps({**asdict(report), "agrees": report.agrees}, indent=2)
    )
    return 0 if report.agrees else 1


if __name__ == "__main__":
    sys.exit(main())
