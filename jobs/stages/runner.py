"""The stages of a run, in order, on one SparkSession.

    ingest -> replay -> marts -> audit -> publish

Each stage is a module of this package with one entry, ``run(context)``, that reads what the
earlier stages left in the :class:`~jobs.stages.context.RunContext` (or in the lake, when it
runs alone with the same ``--run-id``) and records its own result there. A failed audit
(a check of severity ``error``) stops the run before publish.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Protocol

from pyspark.sql import SparkSession

from jobs.io.lake import Lake
from jobs.io.lake_lock import LakeLock
from jobs.runtime.logs import STAGE_LOGGER
from jobs.runtime.session import build_session
from jobs.stages import audit, ingest, marts, publish, replay
from jobs.stages.context import RunContext
from jobs.stages.upgrades import upgrade
from schemas.config import Settings


@dataclass(frozen=True)
class Stage:
    name: str
    help: str
    run: Callable[[RunContext], None]
    reads_landing: bool = False


STAGES = (
    Stage("ingest", "land new files of the landing directory into the bronze tables (bad input is quarantined)", ingest.run,
          reads_landing=True),
    Stage("replay", "replay commits and snapshots of the interval into the silver tables", replay.run),
    Stage("marts", "compute the gold lag and throughput rows of the replayed interval into staging", marts.run),
    Stage("audit", "run the data-quality checks and alerts on the interval; exit 4 on an error-severity failure", audit.run),
    Stage("publish", "publish the audited gold rows of the interval", publish.run),
)  # fmt: skip
STAGE_NAMES = tuple(stage.name for stage in STAGES)
SESSION_STEP = "spark"  # the session's start, shown before the stages
log = logging.getLogger(STAGE_LOGGER)


class StageObserver(Protocol):
    """What a display is told: each step (the session's start, then each stage) as it starts and ends."""

    def started(self, step: str, spark: SparkSession | None) -> None: ...

    def finished(self, step: str, seconds: float, outcome: str) -> None: ...


class _Unobserved:
    def started(self, step: str, spark: SparkSession | None) -> None:
        pass

    def finished(self, step: str, seconds: float, outcome: str) -> None:
        pass


def outcome(step: str, context: RunContext | None) -> str:
    """One line on what ``step`` did, from what it left in ``context``."""
    if context is None:
        return "started"
    if step == "ingest" and context.ingest is not None:
        ingest = context.ingest
        return f"{ingest.files_ingested:,} new files ({ingest.files_already_ingested:,} already in the lake)"
    if step == "replay" and context.interval is not None:
        start, end = context.interval.span
        return f"{start:%Y-%m-%d %H:%M:%S} to {end:%Y-%m-%d %H:%M:%S} UTC"
    if step == "marts":
        return "gold rows staged for the audit"
    if step == "audit" and context.audit is not None:
        verdict = "FAILED" if context.audit.has_errors else "passed"
        return f"{verdict}, {context.audit.alerts_total:,} alerts"
    if step == "publish" and context.published:
        return f"{sum(context.published.values()):,} gold rows"
    return "done"


def run_stages(
    settings: Settings,
    lake_root: Path | str,
    landing: Path | None,
    start: datetime | None,
    end: datetime | None,
    run_id: str,
    stages: Sequence[str] = STAGE_NAMES,
    *,
    observer: StageObserver | None = None,
    output: Path | None = None,
) -> RunContext:
    """Run ``stages`` (names, in STAGES' order) and return what they found; ``observer`` hears
    of each step, and a JVM started here writes what it prints to ``output`` (when given)."""
    unknown = sorted(set(stages) - set(STAGE_NAMES))
    if unknown:
        raise ValueError(f"unknown stages {unknown}; expected some of {STAGE_NAMES}")
    observer = observer or _Unobserved()
    began = time.perf_counter()
    observer.started(SESSION_STEP, None)
    interval = end - start if start and end else None
    rows_taken = partial(replay.rows_taken, lake_root, start, end) if "replay" in stages else None
    spark = build_session(settings.spark, output, interval, rows_taken=rows_taken)
    context = RunContext(
        run_id, Lake(spark, lake_root, settings.spark.delta_engine), settings, landing, start, end
    )
    with LakeLock(context.lake.root, run_id):
        context.lake.discard_unfinished_writes()
        upgrade(context.lake)
        observer.finished(SESSION_STEP, time.perf_counter() - began, f"master {spark.sparkContext.master}")
        for stage in STAGES:
            if stage.name not in stages:
                continue
            observer.started(stage.name, spark)
            log.info("stage %s: started (run %s)", stage.name, run_id)
            began = time.perf_counter()
            stage.run(context)
            context.timings[stage.name] = time.perf_counter() - began
            log.info("stage %s: done in %.1fs", stage.name, context.timings[stage.name])
            observer.finished(stage.name, context.timings[stage.name], outcome(stage.name, context))
            if context.quality_failed:
                break
    return context
