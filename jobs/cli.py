"""``offsetlake``: the command line of the pipeline.

Exit codes: 0 success; 1 unexpected failure; 2 bad usage or configuration; 3 missing
input or unusable lake; 4 a data-quality check of severity ``error`` failed.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

from schemas.config import ConfigError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INPUT, EXIT_QUALITY = 0, 1, 2, 3, 4
STAGES = ("ingest", "replay", "marts", "audit", "publish")
log = logging.getLogger("offsetlake")


def utc_time(text: str) -> datetime:
    """ISO-8601 in UTC (``2026-11-21T10:00:00Z``; a time without offset is taken as UTC)."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time such as 2026-11-21T10:00:00Z") from error
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _common(parser: argparse.ArgumentParser, *, landing: bool) -> None:
    parser.add_argument(
        "--landing", type=Path, required=landing,
        help="landing directory the brokers' files are collected into" + ("" if landing else " (read by ingest only)"),
    )
    parser.add_argument("--lake", type=Path, required=True, help="root of the Delta lake (tables at <lake>/<layer>/<table>)")
    parser.add_argument(
        "--from", dest="start", type=utc_time, help="start of the event-time interval [from, to), ISO-8601 UTC; "
        "default: where the previous run ended"
    )
    parser.add_argument("--to", dest="end", type=utc_time, help="end (exclusive) of the interval, ISO-8601 UTC; default: the latest event landed")
    parser.add_argument("--run-id", help="identifier shared by the stages of one run (default: a new one); the stages of one "
                        "scheduled run must use the same id")
    _settings_options(parser)


def _settings_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="TOML settings file (Spark, landing patterns, clusters, quality); see README")
    parser.add_argument("--master", help="Spark master URL; default: what spark-submit set, else the embedded local[*]")
    parser.add_argument("--delta-engine", choices=("auto", "spark", "delta-rs"),
                        help="Delta engine: native Spark Delta, delta-rs, or auto (native when its extension is loaded)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsetlake",
        description="History, exact replay and regression analysis of RocketMQ consumer offsets, on Spark and Delta Lake.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress of every stage")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run every stage (ingest, replay, marts, audit, publish) over an interval")
    _common(run, landing=True)
    stage_help = {
        "ingest": "land new files of the landing directory into the bronze tables (bad input is quarantined)",
        "replay": "replay commits and snapshots of the interval into the silver tables",
        "marts": "compute the gold lag and throughput rows of the replayed interval into staging",
        "audit": "run the data-quality checks and alerts on the interval; exit 4 on an error-severity failure",
        "publish": "publish the audited gold rows of the interval",
    }
    for stage, text in stage_help.items():
        _common(commands.add_parser(stage, help=text), landing=stage == "ingest")

    demo = commands.add_parser("demo", help="simulate a day of a RocketMQ cluster, run every stage, print what the lake holds")
    demo.add_argument("--workdir", type=Path, default=Path("demo"), help="where landing/ and lake/ are created (default: ./demo)")
    demo.add_argument("--start", type=utc_time, default=utc_time("2026-11-21T00:00:00Z"), help="first simulated instant (UTC)")
    demo.add_argument("--hours", type=int, default=24, help="simulated duration in hours (default 24)")
    _settings_options(demo)

    bench = commands.add_parser("bench", help="measure every stage at several sizes and compare with DuckDB")
    bench.add_argument("--sizes", default="1000000,10000000", help="commit-event counts, comma separated")
    bench.add_argument("--workdir", type=Path, default=Path("bench-results"), help="where inputs, lakes and figures go")
    bench.add_argument("--skip-snapshots", action="store_true", help="skip the busy-broker day of snapshots")
    bench.add_argument(
        "--skip-incremental", action="store_true", help="skip the incremental case (the last hour's run on the history's lake)"
    )
    bench.add_argument(
        "--repeat", type=int, default=1,
        help="run each commits and snapshots case N times, pipeline then DuckDB, and judge the median run (default 1)",
    )  # fmt: skip
    _settings_options(bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    from jobs.lake import LakeError
    from jobs.landing import LandingError
    from jobs.marts_stage import StageOrderError
    from jobs.spark import JavaMissingError

    try:
        from jobs.commands import dispatch

        return dispatch(args)
    except ConfigError as error:
        print(f"offsetlake: configuration error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (LandingError, LakeError, JavaMissingError, StageOrderError) as error:
        print(f"offsetlake: {error}", file=sys.stderr)
        return EXIT_INPUT


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


if __name__ == "__main__":
    sys.exit(main())
