"""``offsetlake``: the command line of the pipeline.

Exit codes: 0 success; 1 unexpected failure; 2 bad usage or configuration; 3 missing
input or unusable lake; 4 a data-quality check of severity ``error`` failed; 5 another run
holds the lake.

Each command is a :class:`Command` (its name, help, arguments and what it runs). The
product's commands are :data:`COMMANDS`; the ``offsetlake`` program (jobs.console) adds the
tools' (``demo``, ``bench``) to them.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jobs.cli.settings import check_interval, check_lake, settings_from
from jobs.cli.summary import print_summary
from jobs.io.lake import LakeError
from jobs.io.lake_lock import LakeBusyError
from jobs.io.landing import LandingError
from jobs.runtime.java import JavaMissingError
from jobs.stages.context import RunContext, StageOrderError
from jobs.stages.runner import STAGE_NAMES, STAGES, run_stages
from schemas.config import ConfigError
from schemas.instants import parse_utc

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INPUT, EXIT_QUALITY, EXIT_BUSY = 0, 1, 2, 3, 4, 5
log = logging.getLogger("offsetlake")


@dataclass(frozen=True)
class Command:
    """A subcommand: ``add_arguments`` declares its options, ``run`` does it and returns the exit code."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def utc_time(text: str) -> datetime:
    """ISO-8601 in UTC (``2026-11-21T10:00:00Z``; a time without offset is taken as UTC)."""
    try:
        return parse_utc(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO-8601 time such as 2026-11-21T10:00:00Z"
        ) from error


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def settings_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        help="TOML settings file (Spark, landing patterns, clusters, quality); see README",
    )
    parser.add_argument(
        "--master", help="Spark master URL; default: what spark-submit set, else the embedded local[*]"
    )
    parser.add_argument("--delta-engine", choices=("auto", "spark", "delta-rs"),
                        help="Delta engine: native Spark Delta, delta-rs, or auto (native when its extension is loaded)")  # fmt: skip


def _stage_options(parser: argparse.ArgumentParser, *, landing: bool) -> None:
    parser.add_argument(
        "--landing", type=Path, required=landing,
        help="landing directory the brokers' files are collected into" + ("" if landing else " (read by ingest only)"),
    )  # fmt: skip
    parser.add_argument(
        "--lake", type=Path, required=True, help="root of the Delta lake (tables at <lake>/<layer>/<table>)"
    )
    parser.add_argument(
        "--from",
        dest="start",
        type=utc_time,
        help="start of the event-time interval [from, to), ISO-8601 UTC; default: where the previous run ended",
    )
    parser.add_argument(
        "--to",
        dest="end",
        type=utc_time,
        help="end (exclusive) of the interval, ISO-8601 UTC; default: the latest event landed",
    )
    parser.add_argument("--run-id", help="identifier shared by the stages of one run (default: a new one); the stages of one "
                        "scheduled run must use the same id")  # fmt: skip
    settings_options(parser)


def run_command(stages: Sequence[str]) -> Callable[[argparse.Namespace], int]:
    """What ``offsetlake run`` (every stage) or ``offsetlake <stage>`` does."""

    def run(args: argparse.Namespace) -> int:
        settings = settings_from(args)
        check_interval(args)
        check_lake(args.lake)
        landing = args.landing if "ingest" in stages else None
        if landing is not None and not landing.is_dir():
            raise LandingError(
                f"landing directory {landing} does not exist: pass the directory your collectors write to"
            )
        context = run_stages(
            settings, args.lake, landing, args.start, args.end, args.run_id or new_run_id(), stages
        )
        print_summary(context)
        return exit_code(context)

    return run


def exit_code(context: RunContext) -> int:
    return EXIT_QUALITY if context.quality_failed else EXIT_OK


COMMANDS: tuple[Command, ...] = (
    Command("run", "run every stage (ingest, replay, marts, audit, publish) over an interval",
            lambda p: _stage_options(p, landing=True), run_command(STAGE_NAMES)),
    *(
        Command(stage.name, stage.help, lambda p, s=stage: _stage_options(p, landing=s.reads_landing), run_command((stage.name,)))
        for stage in STAGES
    ),
)  # fmt: skip


def build_parser(commands: Sequence[Command] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsetlake",
        description="History, exact replay and regression analysis of RocketMQ consumer offsets, on Spark and Delta Lake.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress of every stage")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        command.add_arguments(subcommands.add_parser(command.name, help=command.help))
    return parser


def main(argv: list[str] | None = None, commands: Sequence[Command] = COMMANDS) -> int:
    args = build_parser(commands).parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    chosen = next(c for c in commands if c.name == args.command)
    try:
        return chosen.run(args)
    except ConfigError as error:
        print(f"offsetlake: configuration error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (LandingError, LakeError, JavaMissingError, StageOrderError) as error:
        print(f"offsetlake: {error}", file=sys.stderr)
        return EXIT_INPUT
    except LakeBusyError as error:
        print(f"offsetlake: {error}", file=sys.stderr)
        return EXIT_BUSY


if __name__ == "__main__":
    sys.exit(main())
