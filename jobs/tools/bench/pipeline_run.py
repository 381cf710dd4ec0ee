"""One measured run of the pipeline's stages on a landing directory, into a lake.

A run covers the whole landing by default, or an interval (``start``/``end``, as the CLI's
``--from``/``--to``) on a lake that may already hold earlier runs (the incremental case).

``run_measured`` runs in this process (tests use it with their Spark session); ``run_isolated``
runs it in a child Python process with its own JVM, so that each benchmark case starts
from the same state and its memory is its own, while this process samples the child's
tree (:mod:`jobs.tools.bench.memory`). The child is ``python -m jobs.tools.bench.pipeline_run <request.json>``.

The audit stage (data-quality suites) is not run: the benchmark times ingest, replay,
marts and publish.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.cli.main import exit_code
from jobs.cli.summary import print_summary
from jobs.runtime.session import build_session
from jobs.stages.runner import run_stages
from jobs.tools.bench.memory import TreeSampler, high_water_marks
from schemas.config import Settings

TIMED_STAGES = ("ingest", "replay", "marts", "publish")
RUN_ID = "bench"
REPO_ROOT = Path(__file__).resolve().parents[3]


class PipelineRunError(RuntimeError):
    """The pipeline run failed; the message says where its output is."""


@dataclass
class PipelineRun:
    """Timings of one run: Spark start-up, then each stage from ``started_at`` (epoch seconds) on."""

    session_seconds: float
    started_at: float
    stage_seconds: dict[str, float]
    summary_seconds: float  # the run summary printed after the stages (it counts every table's rows)
    published: dict[str, int]
    exit_code: int
    high_water_bytes: dict[str, int] = field(default_factory=dict)

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
    settings: Settings, landing: Path, lake: Path, interval: Interval = Interval(), stages=TIMED_STAGES
) -> PipelineRun:
    """Run ``stages`` over ``interval`` on ``landing`` into ``lake`` in this process."""
    began = time.perf_counter()
    build_session(settings.spark)
    session_seconds = time.perf_counter() - began
    called_at = time.time()
    outcome = run_stages(
        settings, lake.resolve(), landing.resolve(), interval.start, interval.end, interval.run_id, stages
    )
    stages_ended_at = time.time()
    print_summary(outcome)
    return PipelineRun(
        session_seconds=session_seconds,
        # the stages ran back to back and ended when run_stages returned
        started_at=max(called_at, stages_ended_at - sum(outcome.timings.values())),
        stage_seconds=dict(outcome.timings),
        summary_seconds=time.time() - stages_ended_at,
        published=dict(outcome.published),
        exit_code=exit_code(outcome),
        high_water_bytes=high_water_marks(os.getpid()),
    )


def run_isolated(
    settings: Settings,
    landing: Path,
    lake: Path,
    log: Path,
    interval: Interval = Interval(),
    sampler_interval: float = 0.2,
):
    """``run_measured`` in a child process; returns (PipelineRun, TreeSampler of the child's tree).

    The child's output (Spark's log and the run summary) goes to ``log``.
    """
    request = log.with_suffix(".request.json")
    result = log.with_suffix(".result.json")
    result.unlink(missing_ok=True)
    request.write_text(json.dumps({
        "settings": json.loads(settings.model_dump_json()), "landing": str(landing), "lake": str(lake), "result": str(result),
        "interval": interval.to_json(),
    }))  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    with log.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "jobs.tools.bench.pipeline_run", str(request)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO_ROOT,
        )
        with TreeSampler(child.pid, sampler_interval) as sampler:
            code = child.wait()
    if code != 0 or not result.is_file():
        raise PipelineRunError(f"the pipeline run failed (exit code {code}); its output is in {log}")
    return PipelineRun(**json.loads(result.read_text())), sampler


def _child(request_path: str) -> int:
    request = json.loads(Path(request_path).read_text())
    settings = Settings.model_validate(request["settings"])
    run = run_measured(
        settings, Path(request["landing"]), Path(request["lake"]), Interval.from_json(request["interval"])
    )
    Path(request["result"]).write_text(json.dumps(asdict(run)))
    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()  # flushes the event log
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
