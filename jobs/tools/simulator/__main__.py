"""Write a simulated landing directory from the command line.

    python -m jobs.tools.simulator landing/ --preset demo --start 2026-11-21T00:00:00Z
    python -m jobs.tools.simulator /tmp/bench --preset events --events 10000000 --gzip
    python -m jobs.tools.simulator /tmp/busy --preset busy

Prints what was written as JSON (without the incident list, which is in the manifest file).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from jobs.tools.simulator import MANIFEST_NAME, SimulationSpec, simulate


def _spec(args: argparse.Namespace) -> SimulationSpec:
    start = datetime.fromisoformat(args.start.replace("Z", "+00:00"))
    if args.preset == "events":
        spec = SimulationSpec.for_commit_events(args.events, start, seed=args.seed)
    elif args.preset == "busy":
        spec = SimulationSpec.busy_broker_day(start, seed=args.seed)
    else:
        spec = SimulationSpec.demo(start, seed=args.seed)
    changes = {"gzip_commits": args.gzip or spec.gzip_commits}
    if args.no_incidents:
        changes["incidents"] = False
    return SimulationSpec.model_validate({**spec.model_dump(), **changes})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobs.tools.simulator", description=__doc__.splitlines()[0]
    )
    parser.add_argument("landing", type=Path)
    parser.add_argument("--preset", choices=("demo", "events", "busy"), default="demo")
    parser.add_argument("--events", type=int, default=1_000_000, help="commit events for --preset events")
    today = datetime.now(UTC).strftime("%Y-%m-%dT00:00:00Z")
    parser.add_argument("--start", default=today, help="ISO-8601 UTC start (default: today 00:00)")
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--gzip", action="store_true", help="gzip the commit files")
    parser.add_argument("--no-incidents", action="store_true")
    args = parser.parse_args(argv)
    try:
        spec = _spec(args)
    except (ValueError, ValidationError) as error:
        print(f"invalid simulation: {error}", file=sys.stderr)
        return 2
    began = time.monotonic()
    manifest = simulate(spec, args.landing)
    summary = manifest.model_dump(mode="json", exclude={"incidents", "spec"})
    summary.update(incidents=len(manifest.incidents), seconds=round(time.monotonic() - began, 1))
    summary["manifest"] = str(args.landing / MANIFEST_NAME)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
