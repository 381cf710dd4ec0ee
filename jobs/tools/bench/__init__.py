"""``offsetlake bench``: the whole ``offsetlake run`` and each of its stages measured, against two DuckDB jobs.

For each case (an empty start-up run, each commit-event count of ``--sizes``, the last hour
or so of the smallest count spanning two hours run on a lake of its history unless
``--skip-incremental``, and a busy broker's day of snapshots unless ``--skip-snapshots``; or,
with ``--case commits-only``, plain commit events of each count of ``--sizes``) it generates
the inputs, runs ``offsetlake run`` (every stage, audit and publish included) in a child
process while sampling its memory, computes the same tables with DuckDB from the same files
(the oracle), checks that both agree row for row, runs the lean DuckDB job a user would write
by hand (:mod:`jobs.tools.bench.lean`) and, in the commits-only case, the same job written for
Spark (:mod:`jobs.tools.bench.lean_spark`), prints one table per case (the whole run, each stage,
the oracle's and the lean jobs' times, and the ratios) and writes every figure to ``<workdir>/bench-<timestamp>.json``.
With ``--case airflow-hour``, each count of ``--sizes`` is a cluster's commits an hour, and three
hourly intervals run one after the other through the DAG on real Airflow (:mod:`jobs.tools.bench.airflow_hour`). With ``--repeat N`` each commits and snapshots case
runs N times (pipeline, then DuckDB), and its figures are the median run's. Exit code 1 when
any table differs.

DuckDB is a benchmark-only dependency (the ``bench`` extra): it is imported only here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jobs.cli.main import Command, settings_options
from jobs.cli.settings import settings_from
from jobs.tools.simulator.spec import MIN_COMMIT_EVENTS
from schemas.config import ConfigError, Settings


def parse_sizes(text: str) -> list[int]:
    """``"1000000,10000000"`` -> [1000000, 10000000]; each at least ``MIN_COMMIT_EVENTS``, no repeats."""
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise ConfigError(
            f"--sizes takes commit-event counts separated by commas, such as 1000000,10000000; got {text!r}"
        ) from error
    if not sizes or any(n < MIN_COMMIT_EVENTS for n in sizes) or len(set(sizes)) != len(sizes):
        raise ConfigError(
            f"--sizes needs distinct commit-event counts of at least {MIN_COMMIT_EVENTS:,} each; got {text!r}"
        )
    return sizes


def run_bench(args: argparse.Namespace, settings: Settings) -> int:
    """Entry point of ``offsetlake bench`` (see the module docstring); returns the exit code."""
    try:
        import duckdb  # noqa: F401
    except ImportError as error:
        raise ConfigError(
            "offsetlake bench needs DuckDB: install the 'bench' extra (pip install 'offsetlake[bench]')"
        ) from error
    from jobs.tools.bench.runner import (  # imports DuckDB: only once it is known to be there
        bench,
        commits_only_cases,
        default_cases,
    )

    sizes = parse_sizes(args.sizes)
    if args.case == "airflow-hour":
        from jobs.tools.bench.airflow_run import bench_airflow_hours

        return bench_airflow_hours(sizes, settings, args.workdir)
    if args.case == "commits-only":
        cases = commits_only_cases(sizes)
    else:
        cases = default_cases(sizes, args.skip_snapshots, args.skip_incremental)
    _, _, exit_code = bench(cases, settings, args.workdir, repeat=args.repeat)
    return exit_code


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="1000000,10000000", help="commit-event counts, comma separated")
    parser.add_argument(
        "--workdir", type=Path, default=Path("bench-results"), help="where inputs, lakes and figures go"
    )
    parser.add_argument(
        "--case", choices=("landing", "commits-only", "airflow-hour"), default="landing",
        help="landing: the simulator's full landings (default); commits-only: plain JSON-lines commit events only; "
        "airflow-hour: three hourly intervals of --sizes commits an hour through the DAG on real Airflow (dag.test())",
    )  # fmt: skip
    parser.add_argument("--skip-snapshots", action="store_true", help="skip the busy-broker day of snapshots")
    parser.add_argument(
        "--skip-incremental",
        action="store_true",
        help="skip the incremental case (the last hour's run on the history's lake)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="run each commits and snapshots case N times, pipeline then DuckDB, and judge the median run (default 1)",
    )  # fmt: skip
    settings_options(parser)


COMMAND = Command(
    "bench",
    "measure the whole run and every stage at several sizes and compare with DuckDB",
    _arguments,
    lambda args: run_bench(args, settings_from(args)),
)
