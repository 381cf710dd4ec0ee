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
from jobs.tools.simulator import Incident, SimulationSpec, simulate
from schemas.config import Settings
from schemas.instants import from_collected
from schemas.tables import OFFSET_REGRESSIONS


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
    found = outcome.lake.read(OFFSET_REGRESSIONS).collect()
    print("Injected incidents and the cause the lake found for the regression each left:")
    for incident in manifest.incidents:
        regression = regression_of(incident, found, spec.snapshot_interval)
        cause = regression.cause if regression is not None else "(no regression found)"
        verdict = "" if cause == incident.cause else f"  (expected {incident.cause})"
        print(
            f"  {incident.occurred_at:%Y-%m-%d %H:%M:%S} {incident.kind:<17} {incident.cluster}/{incident.broker} "
            f"{incident.topic}@{incident.consumer_group} q{incident.queue_id}: {incident.stored_offset_before} -> "
            f"{incident.offset}  cause found: {cause}{verdict}"
        )
    # the two next steps last, where a person looks
    print(f"Query the lake:   {example_commands(str(lake))[0]}")
    print(f"Open its report:  {report_location(outcome.lake.root, outcome.run_id).resolve().as_uri()}")
    return exit_code(outcome)


def regression_of(incident: Incident, regressions: list, within: timedelta):
    """The first regression of the incident's queue from its time to ``within`` later (the next
    snapshot shows what no commit shows), or None."""
    key = (incident.cluster, incident.broker, incident.topic, incident.consumer_group, incident.queue_id)
    since, until = incident.occurred_at, incident.occurred_at + within
    mine = [
        r
        for r in regressions
        if (r.cluster, r.broker, r.topic, r.consumer_group, r.queue_id) == key
        and since <= from_collected(r.detected_at) <= until
    ]
    return min(mine, key=lambda r: (r.detected_at, r.observation_seq), default=None)


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
