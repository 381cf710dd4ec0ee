"""``offsetlake report``: the lake's charts in one HTML file that opens offline.

offsetlake report --lake L --out report.html                       # all history
offsetlake report --lake L --from 2026-11-21T00:00:00Z --to 2026-11-22T00:00:00Z --run-id R
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jobs.cli.settings import check_writable_file
from jobs.report.page import quality_link, report_location, write_report
from schemas.config import ConfigError


def report_arguments(parser: argparse.ArgumentParser, utc_time) -> None:
    parser.add_argument("--lake", type=Path, required=True, help="root of the Delta lake a run wrote")
    parser.add_argument(
        "--from", dest="start", type=utc_time, help="first instant shown, ISO-8601 UTC (default: all)"
    )
    parser.add_argument(
        "--to", dest="end", type=utc_time, help="end (exclusive) of what is shown (default: all)"
    )
    parser.add_argument(
        "--out", type=Path, help="the HTML file to write (default: <lake>/reports/lake/<run-id>.html)"
    )
    parser.add_argument(
        "--run-id",
        help="the run this report belongs to: names the default --out, and links the run's quality report when it wrote one",
    )


def run_report(args: argparse.Namespace) -> int:
    if args.start and args.end and not args.start < args.end:
        raise ConfigError(f"--from ({args.start.isoformat()}) must be before --to ({args.end.isoformat()})")
    if args.out is None and not args.run_id:
        raise ConfigError("give --out FILE (or --run-id, for <lake>/reports/lake/<run-id>.html)")
    out = args.out or report_location(args.lake, args.run_id)
    check_writable_file(out, "--out")
    links = quality_link(args.lake, args.run_id, out) if args.run_id else None
    print(f"Report: {write_report(args.lake, out, args.start, args.end, links)}")
    return 0
