"""``offsetlake demo``: a simulated day of a RocketMQ cluster through every stage.

Creates ``<workdir>/landing`` (the simulator writes brokers' files in their real formats)
and ``<workdir>/lake`` (the Delta lake), runs ingest, replay, marts, audit and publish on
the embedded default, and prints what each table holds and the incidents it found.
"""

from __future__ import annotations

import shutil
import time
from argparse import Namespace
from datetime import datetime, timedelta
from pathlib import Path

from jobs.cli.main import Command, exit_code, run_with_display, settings_options, utc_time
from jobs.cli.settings import check_lake, settings_from
from jobs.cli.summary import example_commands
from jobs.report.page import report_location
from jobs.tools.simulator import SimulationSpec, simulate
from schemas.config import Settings


def run_demo(workdir: Path, start: datetime, hours: int, settings: Settings, args: Namespace) -> int:
    landing, lake = workdir / "landing", workdir / "lake"
    check_lake(lake)
    # a demo starts afresh: the same simulated day into an empty lake
    for directory in (landing, lake):
        shutil.rmtree(directory, ignore_errors=True)
    began = time.perf_counter()
    spec = SimulationSpec.demo(start).model_copy(update={"duration": timedelta(hours=hours)})
    manifest = simulate(spec, landing)
    print(
        f"Simulated {hours} h from {start:%Y-%m-%dT%H:%M:%SZ} in {time.perf_counter() - began:.1f}s: "
        f"{manifest.commit_events:,} commit events, {manifest.snapshot_files:,} snapshots, "
        f"{manifest.progress_files:,} admin-tool outputs, {manifest.notifyme_lines:,} NOTIFYME lines, "
        f"{len(manifest.incidents)} injected incidents -> {landing}"
    )
    outcome = run_with_display(settings, lake, landing, args)
    print("Injected incidents (what the regressions above should explain):")
    for incident in manifest.incidents:
        print(
            f"  {incident.occurred_at:%Y-%m-%d %H:%M:%S} {incident.kind:<22} {incident.cluster}/{incident.broker} "
            f"{incident.topic}@{incident.consumer_group} q{incident.queue_id}: {incident.stored_offset_before} -> {incident.offset}"
        )
    # the two next steps last, where a person looks
    print(f"Query the lake:   {example_commands(str(lake))[0]}")
    print(f"Open its report:  {report_location(outcome.lake.root, outcome.run_id).resolve().as_uri()}")
    return exit_code(outcome)


def _arguments(parser) -> None:
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path("demo"),
        help="where landing/ and lake/ are created (default: ./demo)",
    )
    parser.add_argument(
        "--start",
        type=utc_time,
        default=utc_time("2026-11-21T00:00:00Z"),
        help="first simulated instant (UTC)",
    )
    parser.add_argument("--hours", type=int, default=24, help="simulated duration in hours (default 24)")
    settings_options(parser)


COMMAND = Command(
    "demo",
    "simulate a day of a RocketMQ cluster, run every stage, print what the lake holds",
    _arguments,
    lambda args: run_demo(args.workdir, args.start, args.hours, settings_from(args), args),
)
