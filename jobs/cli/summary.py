"""The summary printed at the end of every run: what landed, what was found, where it is."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from pyspark.sql import functions as F

from jobs.cli.answers import answer_lines
from jobs.runtime.logs import inert
from jobs.stages.context import RunContext
from schemas.instants import iso_z
from schemas.tables import ALL_TABLES, INGEST_RUNS, OFFSET_REGRESSIONS

# what an analyst asks first; each is run by tests/jobs/cli/test_examples.py
EXAMPLE_QUERIES = (
    "SELECT consumer_group, client_host, count(*) AS regressions, sum(regression_size) AS consumed_twice "
    "FROM silver_offset_regressions GROUP BY 1, 2 ORDER BY 4 DESC",
    "SELECT detected_at, topic, consumer_group, queue_id, regression_size, cause, cause_detail "
    "FROM silver_offset_regressions ORDER BY regression_size DESC LIMIT 5",
    "SELECT topic, consumer_group, max(total_lag_messages) AS worst_lag "
    "FROM gold_consumer_lag_by_group GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 10",
)


def example_commands(lake_root: str) -> list[str]:
    """The example queries as ``offsetlake sql`` command lines on the lake at ``lake_root``."""
    program = shlex.quote(_program())
    return [f'{program} sql --lake {shlex.quote(lake_root)} "{query}"' for query in EXAMPLE_QUERIES]


def _program() -> str:
    """The program as this process was started (its path), or ``offsetlake``."""
    return sys.argv[0] if sys.argv[0].endswith("offsetlake") else "offsetlake"


def report_command(outcome: RunContext) -> str:
    """``offsetlake report`` of the run's interval, as the DAG's report task writes it."""
    words = [_program(), "report", "--lake", outcome.lake.root, "--run-id", outcome.run_id]
    for option, instant in (("--from", outcome.start), ("--to", outcome.end)):
        if instant is not None:
            words += [option, iso_z(instant)]
    return shlex.join(words)


def _ingest_lines(lake, run_id: str) -> list[str]:
    runs = lake.read(INGEST_RUNS).where(F.col("run_id") == run_id)
    by_status = runs.groupBy("source_kind", "status").agg(
        F.count(F.lit(1)).alias("files"),
        F.sum("records_read").alias("read"),
        F.sum("records_landed").alias("landed"),
        F.sum("records_quarantined").alias("quarantined"),
    )
    lines = []
    for r in sorted(by_status.collect(), key=lambda r: (r.source_kind, r.status)):
        lines.append(
            f"  {r.source_kind:<15} {r.status:<10} {r.files:>6} files  {r.read:>12,} read = {r.landed:>12,} landed + {r.quarantined:>8,} quarantined"
        )
    return lines or ["  no new files"]


def _regression_lines(lake, interval) -> list[str]:
    if interval is None or not lake.exists(OFFSET_REGRESSIONS):
        return []
    found = lake.read(OFFSET_REGRESSIONS, start=interval.replayed_from, end=interval.replayed_to)
    top = found.orderBy(F.col("regression_size").desc(), "detected_at").limit(5).collect()
    lines = [f"Regressions found in the interval: {found.count():,}" + (" (largest first):" if top else "")]
    for r in top:
        who = f" by {r.client_host}" if r.client_host else ""
        why = f": {r.cause_detail}" if r.cause_detail else ""
        lines.append(inert(  # names from landed files: no line break or terminal escape gets through
            f"  {r.detected_at:%Y-%m-%d %H:%M:%S} {r.cluster}/{r.broker} {r.topic}@{r.consumer_group} q{r.queue_id}: "
            f"{r.stored_offset} -> {r.offset} ({r.regression_size} messages again, {r.evidence}{who}); {r.cause}{why}"
        ))  # fmt: skip
    return lines


def print_summary(outcome: RunContext, log_path: Path | None = None, report: Path | None = None) -> None:
    lake, interval = outcome.lake, outcome.interval
    print(
        f"\nOffsetLake run {outcome.run_id}  (Delta engine: {lake.engine_name}, Spark master: {lake.spark.sparkContext.master})"
    )
    if interval is not None:
        start, end = interval.span
        print(f"Replayed interval: [{iso_z(start)}, {iso_z(end)})")
    if outcome.ingest is not None:
        print("Files ingested this run (records read = landed + quarantined):")
        print("\n".join(_ingest_lines(lake, outcome.run_id)))
    print("Tables (rows):")
    for spec in ALL_TABLES:
        print(f"  {spec.path:<34} {lake.row_count(spec):>12,}")
    # the answers read gold: a command that published the interval has them, an earlier stage's
    # command would show the gold of a previous run, or none
    answers = answer_lines(lake, interval) if outcome.published else []
    for line in (*_regression_lines(lake, interval), *answers):
        print(line)
    if outcome.audit is not None:
        status = "FAILED (error-severity checks)" if outcome.audit.has_errors else "passed"
        print(
            f"Data quality: {status}, {outcome.audit.alerts_total:,} alerts of {outcome.audit.findings_total:,} findings; "
            f"report: {outcome.audit.report_path}"
        )
    if outcome.published:
        print("Published gold rows: " + ", ".join(f"{k} {v:,}" for k, v in outcome.published.items()))
    print("Stage timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in outcome.timings.items()))
    print(f"Lake: {lake.root}")
    if log_path is not None:
        print(f"Log (Spark's, Java's and every stage's messages): {log_path}")
    print("Query the lake in SQL (offsetlake tables --lake ... lists the tables):")
    print("\n".join(f"  {command}" for command in example_commands(lake.root)))
    if report is not None:
        print(f"Open the lake's charts in a browser: {report.resolve().as_uri()}")
    elif outcome.published:
        print(f"The lake's charts of this run (where the lake is mounted): {report_command(outcome)}")
