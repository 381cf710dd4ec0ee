"""What each ``offsetlake`` command does: settings, checks before any table is touched, stages."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from jobs.cli import EXIT_OK, EXIT_QUALITY, new_run_id
from jobs.lake import Lake, LakeError
from jobs.landing import LandingError
from schemas.config import ConfigError, Settings, load_settings


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings file, then command-line overrides."""
    settings = load_settings(args.config)
    spark = settings.spark
    if getattr(args, "master", None):
        spark = spark.model_copy(update={"master": args.master})
    if getattr(args, "delta_engine", None):
        spark = spark.model_copy(update={"delta_engine": args.delta_engine})
    return settings.model_copy(update={"spark": spark})


def check_lake(root: Path) -> None:
    """The lake must be a writable directory, or creatable."""
    probe = root
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise LakeError(f"lake path {root} is not a directory ({probe} is a file): choose another --lake")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise LakeError(f"lake path {root} is not writable ({probe}): fix its permissions or choose another --lake")


def check_interval(args: argparse.Namespace) -> None:
    if args.start and args.end and not args.start < args.end:
        raise ConfigError(f"--from ({args.start.isoformat()}) must be before --to ({args.end.isoformat()})")


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from jobs.demo import run_demo

        return run_demo(args.workdir, args.start, args.hours, settings_from(args))
    if args.command == "bench":
        from jobs.bench import run_bench

        return run_bench(args, settings_from(args))
    settings = settings_from(args)
    check_interval(args)
    check_lake(args.lake)
    landing = args.landing if args.command in ("ingest", "run") else None
    if landing is not None and not landing.is_dir():
        raise LandingError(f"landing directory {landing} does not exist: pass the directory your collectors write to")
    stages = ("ingest", "replay", "marts", "audit", "publish") if args.command == "run" else (args.command,)
    outcome = run_stages(settings, args.lake, landing, args.start, args.end, args.run_id or new_run_id(), stages)
    return outcome.exit_code


class StagesOutcome:
    def __init__(self, run_id: str, lake: Lake):
        self.run_id, self.lake = run_id, lake
        self.exit_code = EXIT_OK
        self.ingest = None
        self.window = None
        self.audit = None
        self.published: dict[str, int] = {}
        self.timings: dict[str, float] = {}


def run_stages(settings: Settings, lake_root: Path, landing: Path | None, start, end, run_id: str, stages) -> StagesOutcome:
    """Run ``stages`` in order on one SparkSession; prints the run summary."""
    from jobs.spark import build_session
    from jobs.summary import print_summary

    spark = build_session(settings.spark)
    lake = Lake(spark, lake_root, settings.spark.delta_engine)
    outcome = StagesOutcome(run_id, lake)
    for stage in stages:
        began = time.perf_counter()
        _run_stage(stage, outcome, settings, lake, landing, start, end)
        outcome.timings[stage] = time.perf_counter() - began
        if outcome.exit_code != EXIT_OK:
            break
    print_summary(outcome, settings)
    return outcome


def _run_stage(stage: str, outcome: StagesOutcome, settings: Settings, lake: Lake, landing, start, end) -> None:
    from jobs.marts_stage import build_marts, publish
    from jobs.replay_stage import last_replay, run_replay

    run_id = outcome.run_id
    if stage == "ingest":
        from jobs.ingest_stage import run_ingest

        outcome.ingest = run_ingest(lake, settings, landing, start, end, run_id)
    elif stage == "replay":
        outcome.window = run_replay(lake, settings, start, end, run_id)
    elif stage == "marts":
        outcome.window = build_marts(lake, settings, run_id)
    elif stage == "audit":
        from jobs.quality.audit import run_audit

        window = outcome.window or last_replay(lake, run_id)
        if window is None:
            raise LakeError(f"no replay recorded for run {run_id}: run the replay stage first (same --run-id)")
        outcome.audit = run_audit(lake.spark, lake, settings, window.replayed_from, window.replayed_to, run_id)
        if outcome.audit.has_errors:
            outcome.exit_code = EXIT_QUALITY
    elif stage == "publish":
        outcome.published = publish(lake, settings, run_id)
