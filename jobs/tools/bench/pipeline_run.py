"""One measured run of every stage on a landing directory, into a lake: ``offsetlake run`` as a user runs it.

A run covers the whole landing by default, or an interval (``start``/``end``, as the CLI's
``--from``/``--to``) on a lake that may already hold earlier runs (the incremental case).

``run_whole`` runs the ``offsetlake run`` command in a child process (its own Python and JVM, the
bench's settings in a TOML file given by ``--config``) and times it from launch to exit; each
stage's span comes from the run's own log, its ``stage X: started`` and ``done in`` lines (the
runner times the stages; the ops tables record only some of them). This process samples the
child's tree meanwhile (:mod:`jobs.tools.bench.memory`). ``run_measured`` runs the same stages in
this process (tests use it with their Spark session).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from deltalake import DeltaTable

from jobs.cli.main import exit_code
from jobs.cli.summary import print_summary
from jobs.runtime.session import build_session
from jobs.stages.runner import STAGE_NAMES, run_stages
from jobs.tools.bench.memory import TreeSampler, high_water_marks
from schemas.config import Settings

RUN_ID = "bench"
REPO_ROOT = Path(__file__).resolve().parents[3]
# the runner's log lines (jobs.stages.runner) under the CLI's format (jobs.runtime.logs.FORMAT)
STAGE_LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) INFO (?:[\w.]+: )?stage (?P<stage>\w+): (?P<what>started|done in)"
)


class PipelineRunError(RuntimeError):
    """The pipeline run failed; the message says where its output is."""


@dataclass
class PipelineRun:
    """Timings of one run: start-up, then each stage from ``started_at`` (epoch seconds) on, then
    the summary; ``wall_seconds`` is the whole run's (in a child process: launch to exit)."""

    session_seconds: float  # start-up: in a child process, from its launch to the first stage's start
    started_at: float
    stage_seconds: dict[str, float]
    summary_seconds: float  # the run summary printed after the stages (it counts every table's rows)
    published: dict[str, int]
    exit_code: int
    high_water_bytes: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0

    def stage_spans(self) -> dict[str, tuple[float, float]]:
        """(start, end) epoch seconds of each stage, in order (stages run back to back)."""
        spans, at = {}, self.started_at
        for stage, seconds in self.stage_seconds.items():
            spans[stage] = (at, at + seconds)
            at += seconds
        return spans


@dataclass(frozen=True)
class Interval:
    """What one run covers: ``start``/``end`` (None: unbounded) and its run id."""

    start: datetime | None = None
    end: datetime | None = None
    run_id: str = RUN_ID

    def to_json(self) -> dict:
        return {"start": _iso(self.start), "end": _iso(self.end), "run_id": self.run_id}

    @classmethod
    def from_json(cls, data: dict) -> Interval:
        return cls(_parse(data["start"]), _parse(data["end"]), data["run_id"])


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _parse(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def run_measured(
    settings: Settings, landing: Path, lake: Path, interval: Interval = Interval(), stages=STAGE_NAMES
) -> PipelineRun:
    """Run ``stages`` (default: every one) over ``interval`` on ``landing`` into ``lake`` in this process."""
    began = time.perf_counter()
    build_session(settings.spark)
    session_seconds = time.perf_counter() - began
    called_at = time.time()
    outcome = run_stages(
        settings, lake.resolve(), landing.resolve(), interval.start, interval.end, interval.run_id, stages
    )
    stages_ended_at = time.time()
    print_summary(outcome)
    ended = time.perf_counter()
    return PipelineRun(
        session_seconds=session_seconds,
        # the stages ran back to back and ended when run_stages returned
        started_at=max(called_at, stages_ended_at - sum(outcome.timings.values())),
        stage_seconds=dict(outcome.timings),
        summary_seconds=time.time() - stages_ended_at,
        published=dict(outcome.published),
        exit_code=exit_code(outcome),
        high_water_bytes=high_water_marks(os.getpid()),
        wall_seconds=ended - began,
    )


def settings_toml(settings: Settings) -> str:
    """The settings that differ from the defaults, as a TOML file ``--config`` reads."""
    lines: list[str] = []

    def key(name: str) -> str:
        return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)

    def table(path: list[str], values: dict) -> None:
        scalars = {k: v for k, v in values.items() if not isinstance(v, dict) and v is not None}
        if scalars or not path:
            lines.extend([f"[{'.'.join(map(key, path))}]"] if path else [])
            lines.extend(f"{key(k)} = {json.dumps(v)}" for k, v in scalars.items())
        for name, value in values.items():
            if isinstance(value, dict):
                table([*path, name], value)

    table([], settings.model_dump(mode="json", exclude_defaults=True))
    return "\n".join(lines) + "\n"


def offsetlake_command() -> list[str]:
    """The installed ``offsetlake`` program beside this Python, else the same entry point by module."""
    script = Path(sys.executable).parent / "offsetlake"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "jobs.console"]


def stage_spans(log_text: str) -> dict[str, tuple[float, float]]:
    """(start, end) epoch seconds of each stage the run's log shows started and done, in order."""
    started, spans = {}, {}
    for line in log_text.splitlines():
        match = STAGE_LINE.match(line)
        if match is None:
            continue
        at = time.mktime(time.strptime(match["at"][:19], "%Y-%m-%d %H:%M:%S")) + int(match["at"][20:]) / 1000
        if match["what"] == "started":
            started[match["stage"]] = at
        elif match["stage"] in started:
            spans[match["stage"]] = (started[match["stage"]], at)
    return spans


def every_stage(spans: dict[str, tuple[float, float]], log: Path) -> dict[str, tuple[float, float]]:
    """``spans`` when it holds every stage of a run; raises PipelineRunError naming the missing ones."""
    missing = [stage for stage in STAGE_NAMES if stage not in spans]
    if missing:
        raise PipelineRunError(f"stages {missing} of the run are missing from its log {log}")
    return spans


def _published_rows(lake: Path, run_id: str) -> dict[str, int]:
    path = lake / "ops" / "publish_runs"
    if not DeltaTable.is_deltatable(str(path)):
        return {}
    runs = DeltaTable(str(path)).to_pyarrow_table(columns=["run_id", "gold_rows"]).to_pylist()
    return {"gold": sum(r["gold_rows"] for r in runs if r["run_id"] == run_id)}


def run_whole(
    settings: Settings,
    landing: Path,
    lake: Path,
    run_dir: Path,
    interval: Interval = Interval(),
    sampler_interval: float = 0.2,
) -> tuple[PipelineRun, TreeSampler]:
    """``offsetlake run`` in a child process, its output in ``run_dir/pipeline.log`` (module docstring).

    Raises PipelineRunError when the run fails or a stage of the run is missing from its log.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    config, log = run_dir / "offsetlake.toml", run_dir / "pipeline.log"
    config.write_text(settings_toml(settings))
    command = [*offsetlake_command(), "-v", "run", "--landing", str(landing), "--lake", str(lake),
               "--run-id", interval.run_id, "--config", str(config)]  # fmt: skip
    for option, at in (("--from", interval.start), ("--to", interval.end)):
        command += [option, at.isoformat()] if at is not None else []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    with log.open("w") as out:
        launched, began = time.time(), time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT)
        with TreeSampler(child.pid, sampler_interval) as sampler:
            code = child.wait()
        wall = time.perf_counter() - began
    if code != 0:
        raise PipelineRunError(f"offsetlake run failed (exit code {code}); its output is in {log}")
    spans = every_stage(stage_spans(log.read_text()), log)
    first, last = spans[STAGE_NAMES[0]][0], spans[STAGE_NAMES[-1]][1]
    return PipelineRun(
        session_seconds=first - launched,
        started_at=first,
        stage_seconds={stage: end - start for stage, (start, end) in spans.items()},
        summary_seconds=launched + wall - last,
        published=_published_rows(lake, interval.run_id),
        exit_code=code,
        wall_seconds=wall,
    ), sampler
