"""``offsetlake sql`` and ``offsetlake tables``: the lake in SQL, without writing Python.

    offsetlake sql --lake L "SELECT consumer_group, count(*) FROM silver_offset_regressions GROUP BY 1"
    offsetlake sql --lake L --format csv --out regressions.csv "SELECT * FROM silver_offset_regressions"
    offsetlake sql --lake L                  # a prompt (statements end with ';', history kept)
    offsetlake tables --lake L               # every table: grain, rows, latest version

The in-process engine (DataFusion) answers without starting a JVM; ``--engine spark`` registers
the same names in Spark SQL. A query that names no table of the lake, or is not SQL, is a
usage error (exit 2) with the engine's message.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

from jobs.cli.output import FORMATS, render_aligned, write_result
from jobs.cli.settings import check_writable_file, new_run_id, settings_from
from jobs.io.query import LakeSql, QueryError, describe_tables, open_lake_sql, open_spark_sql
from jobs.runtime.logs import log_file
from jobs.runtime.session import build_session
from schemas.config import ConfigError

HISTORY_FILE = Path(os.environ.get("OFFSETLAKE_HISTORY", Path.home() / ".offsetlake_history"))
PROMPT, CONTINUATION = "offsetlake> ", "       ...> "


def _lake_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lake", type=Path, required=True, help="root of the Delta lake a run wrote")


def sql_arguments(parser: argparse.ArgumentParser) -> None:
    _lake_option(parser)
    parser.add_argument(
        "query", nargs="?", help="one SQL statement; none: statements from standard input, or a prompt"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (aligned text, the default), csv, json (an object a line) or parquet",
    )
    parser.add_argument("--out", type=Path, help="write the result to this file (default: standard output)")
    parser.add_argument("--engine", choices=("datafusion", "spark"), default="datafusion",
                        help="datafusion: in this process, no JVM (default); spark: Spark SQL, as on a cluster")  # fmt: skip
    parser.add_argument("--config", type=Path, help="TOML settings file (for --engine spark)")
    parser.add_argument("--master", help="Spark master URL (for --engine spark)")


def open_queries(args: argparse.Namespace) -> LakeSql:
    if args.engine == "spark":
        settings = settings_from(args)
        # the JVM's start-up notes and warnings go to a log file, as a run's do (jobs.runtime.logs)
        output = (
            None if args.verbose else log_file(str(args.lake), settings.logs.directory, f"sql-{new_run_id()}")
        )
        spark = build_session(settings.spark, output)
        return open_spark_sql(spark, args.lake, settings.spark.delta_engine)
    return open_lake_sql(args.lake)


def run_sql(args: argparse.Namespace) -> int:
    if args.format == "parquet" and args.out is None and sys.stdout.isatty():
        raise ConfigError("parquet is binary: give --out FILE, or redirect standard output")
    check_writable_file(args.out, "--out")
    queries = open_queries(args)
    if args.query is not None:
        write_result(queries.run(args.query), args.format, args.out)
        return 0
    if sys.stdin.isatty():
        return prompt(queries, args.format, args.out)
    for statement in statements(sys.stdin.read()):
        write_result(queries.run(statement), args.format, args.out)
    return 0


def statements(text: str) -> list[str]:
    """The SQL statements of ``text``, split at each ';' outside quotes (a last one may lack it).

    >>> statements("SELECT 'a;b' AS x; SELECT 2;")
    ["SELECT 'a;b' AS x", 'SELECT 2']
    """
    found, current, quote = [], [], None
    for char in text:
        if quote is None and char == ";":
            found.append("".join(current))
            current = []
            continue
        if char in "'\"`":
            quote = None if quote == char else char if quote is None else quote
        current.append(char)
    found.append("".join(current))
    return [statement.strip() for statement in found if statement.strip()]


def is_complete(text: str) -> bool:
    """True when ``text`` ends a statement: its last character outside quotes is ';'."""
    return text.rstrip().endswith(";") and statements(text + " x")[-1] == "x"


def prompt(queries: LakeSql, fmt: str, out: Path | None, read: Callable[[str], str] = input) -> int:
    """Read statements at a prompt until end of input (Ctrl-D) or ``.quit``; an error is shown and
    the prompt goes on. Lines are kept in HISTORY_FILE between sessions."""
    history = _open_history()
    print(f"{len(queries.tables)} tables of {queries.root} ({queries.engine}); end statements with ';', "
          "'.tables' lists them, Ctrl-D or '.quit' leaves", file=sys.stderr)  # fmt: skip
    pending: list[str] = []
    try:
        while True:
            try:
                line = read(CONTINUATION if pending else PROMPT)
            except EOFError:
                print(file=sys.stderr)
                return 0
            except KeyboardInterrupt:
                pending = []
                print(file=sys.stderr)
                continue
            if not pending and line.strip() in (".quit", ".exit", "\\q"):
                return 0
            if not pending and line.strip() == ".tables":
                print("\n".join(queries.tables))
                continue
            pending.append(line)
            if not is_complete("\n".join(pending)):
                continue
            text, pending = "\n".join(pending), []
            for statement in statements(text):
                try:
                    write_result(queries.run(statement), fmt, out)
                except QueryError as error:
                    print(f"error: {error}", file=sys.stderr)
    finally:
        history()


def _open_history() -> Callable[[], None]:
    """Load the prompt's history (where readline exists); the returned call saves it."""
    try:
        import readline
    except ImportError:  # no readline on this platform: a prompt without history
        return lambda: None
    with contextlib.suppress(OSError):  # the first session has no history yet
        readline.read_history_file(HISTORY_FILE)
    readline.set_history_length(1000)

    def save() -> None:
        try:
            readline.write_history_file(HISTORY_FILE)
        except OSError as error:
            print(f"offsetlake: history not saved to {HISTORY_FILE}: {error}", file=sys.stderr)

    return save


def tables_arguments(parser: argparse.ArgumentParser) -> None:
    _lake_option(parser)


def run_tables(args: argparse.Namespace) -> int:
    rows = [
        {
            "table": info.sql_name,
            "rows": info.rows,
            "version": info.version,
            "grain": info.spec.grain if info.rows is not None else f"(not written yet) {info.spec.grain}",
        }
        for info in describe_tables(args.lake)
    ]
    print(render_aligned(rows, ("table", "rows", "version", "grain")))
    return 0
