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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from jobs.cli import asof, maintain, report, shared_session, sql
from jobs.cli.progress import progress_for
from jobs.cli.settings import check_interval, check_lake, new_run_id, settings_from
from jobs.cli.summary import print_summary
from jobs.io.engines import RetentionTooShortError
from jobs.io.lake import LakeError
from jobs.io.lake_lock import LakeBusyError
from jobs.io.landing import LandingError
from jobs.io.query import QueryError
from jobs.report.page import quality_link, report_location, write_report
from jobs.runtime.java import JavaMissingError
from jobs.runtime.logs import attach_log_file, configure_console, inert, log_file
from jobs.runtime.shipping import ShippingError
from jobs.stages.context import RunContext, StageOrderError
from jobs.stages.runner import STAGE_NAMES, STAGES, run_stages
from schemas.config import ConfigError, Settings
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


def run_with_display(
    settings: Settings,
    lake: Path,
    landing: Path | None,
    args: argparse.Namespace,
    stages: Sequence[str] = STAGE_NAMES,
    start: datetime | None = None,
    end: datetime | None = None,
) -> RunContext:
    """``run_stages`` with a progress display, its log file (everything but progress and results
    goes there, unless ``-v``) and the summary printed at its end."""
    run_id = getattr(args, "run_id", None) or new_run_id()
    log_path = attach_log_file(log_file(str(lake), settings.logs.directory, run_id))
    verbose = bool(getattr(args, "verbose", False))
    with progress_for(sys.stderr.isatty(), verbose) as observer:
        context = run_stages(settings, lake, landing, start, end, run_id, stages,
                             observer=observer, output=None if verbose else log_path)  # fmt: skip
    # a stage run alone (as each Airflow task runs one) leaves the page to ``offsetlake report``
    whole_run = tuple(stages) == STAGE_NAMES
    report = _lake_report(context) if whole_run and context.published else None
    print_summary(context, log_path, report)
    return context


def _lake_report(context: RunContext) -> Path | None:
    """The run's lake report (jobs.report) over the run's interval (all history for a run without
    one), as the DAG's report task writes an interval's, beside its quality report; None for a lake
    given as a URI."""
    if "://" in context.lake.root:
        log.info(
            "no lake report: the report reads local lakes (run offsetlake report where the lake is mounted)"
        )
        return None
    out = report_location(context.lake.root, context.run_id)
    links = quality_link(context.lake.root, context.run_id, out)
    return write_report(context.lake.root, out, context.start, context.end, links)


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
        context = run_with_display(settings, args.lake, landing, args, stages, args.start, args.end)
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
    Command("sql", "query the lake's tables in SQL (in this process; --engine spark for Spark SQL)",
            sql.sql_arguments, sql.run_sql),
    Command("report", "write the lake's charts (lag, rates, regressions, coverage, quality) into one HTML file",
            lambda p: report.report_arguments(p, utc_time), report.run_report),
    Command("tables", "list the lake's tables: SQL name, rows, latest version, grain", sql.tables_arguments, sql.run_tables),
    Command("asof", "what each queue had stored at an instant, and the commit or snapshot that set it",
            lambda p: asof.asof_arguments(p, utc_time), asof.run_asof),
    Command("maintain", "compact every table's small files, checkpoint its Delta log and vacuum old files",
            lambda p: maintain.maintain_arguments(p, settings_options), maintain.run_maintain),
    Command("session", "start, stop or show a Spark session that the stage commands on one lake share (an interval's Airflow tasks)",
            lambda p: shared_session.session_arguments(p, settings_options), shared_session.run_session),
)  # fmt: skip


def build_parser(commands: Sequence[Command] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsetlake",
        description="History, exact replay and regression analysis of RocketMQ consumer offsets, on Spark and Delta Lake.",
    )
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show every log line and what Spark and Java print, not only progress and results")  # fmt: skip
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        command.add_arguments(subcommands.add_parser(command.name, help=command.help))
    return parser


def main(argv: list[str] | None = None, commands: Sequence[Command] = COMMANDS) -> int:
    args = build_parser(commands).parse_args(argv)
    configure_console(verbose=args.verbose, interactive=sys.stderr.isatty())
    chosen = next(c for c in commands if c.name == args.command)
    try:
        return chosen.run(args)
    except ConfigError as error:
        print(f"offsetlake: configuration error: {inert(error)}", file=sys.stderr)
        return EXIT_USAGE
    except QueryError as error:
        print(f"offsetlake: query error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except RetentionTooShortError as error:
        print(f"offsetlake: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (LandingError, LakeError, JavaMissingError, ShippingError, StageOrderError) as error:
        print(f"offsetlake: {inert(error)}", file=sys.stderr)
        return EXIT_INPUT
    except LakeBusyError as error:
        print(f"offsetlake: {error}", file=sys.stderr)
        return EXIT_BUSY


if __name__ == "__main__":
    sys.exit(main())
