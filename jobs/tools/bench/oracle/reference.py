"""The DuckDB reference: OffsetLake's results computed by DuckDB alone from the same landing files.

It serves two ends: a speed yardstick (a single-process columnar engine on the same cores)
and an independent cross-check of the pipeline (the same rules written again in SQL).
``compute_reference`` reads the landing directory (:mod:`jobs.tools.bench.oracle.inputs`),
replays (:mod:`jobs.tools.bench.oracle.replay`) and builds the marts (:mod:`jobs.tools.bench.oracle.marts`)
into tables named ``ref_<table>`` of one DuckDB database, timing each step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from jobs.tools.bench.oracle.inputs import load_inputs
from jobs.tools.bench.oracle.marts import build_marts
from jobs.tools.bench.oracle.replay import replay
from schemas.config import Settings

# Reference tables and the lake table each one stands for.
REFERENCE_TABLES = {
    "bronze/offset_commits": "ref_offset_commits",
    "bronze/offset_snapshots": "ref_offset_snapshots",
    "bronze/queue_offsets": "ref_queue_offsets",
    "bronze/offset_resets": "ref_offset_resets",
    "bronze/group_connections": "ref_group_connections",
    "silver/offset_commits_replayed": "ref_offset_commits_replayed",
    "silver/stored_offset_timeline": "ref_stored_offset_timeline",
    "silver/offset_regressions": "ref_offset_regressions",
    "gold/consumer_lag": "ref_consumer_lag",
    "gold/consumer_lag_by_group": "ref_consumer_lag_by_group",
    "gold/produce_throughput": "ref_produce_throughput",
    "gold/consume_throughput": "ref_consume_throughput",
    "gold/duplicate_exposure": "ref_duplicate_exposure",
    "gold/consumer_status": "ref_consumer_status",
}


@dataclass
class ReferenceRun:
    """An open DuckDB connection holding the ref_* tables, and how long each step took (seconds)."""

    con: duckdb.DuckDBPyConnection
    timings: dict[str, float] = field(default_factory=dict)
    cpu_seconds: float = 0.0  # this process's CPU time over the steps (all DuckDB threads)

    @property
    def total_seconds(self) -> float:
        return sum(self.timings.values())


def connect(database: Path | None, threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection in UTC (in memory when ``database`` is None; spills beside a database file)."""
    if database is not None:
        database.unlink(missing_ok=True)
        Path(f"{database}.wal").unlink(missing_ok=True)
    con = duckdb.connect(str(database) if database is not None else ":memory:")
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    if database is not None:
        con.execute(f"SET temp_directory = '{database.parent / 'duckdb-spill'}'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    return con


def compute_reference(
    landing: Path, settings: Settings, database: Path | None = None, threads: int | None = None
) -> ReferenceRun:
    """Every ref_* table from ``landing``; ``database`` (a file, replaced) keeps them on disk."""
    run = ReferenceRun(connect(database, threads))
    steps = (
        ("read_inputs", lambda: load_inputs(run.con, landing.resolve(), settings)),
        ("replay", lambda: replay(run.con)),
        (
            "marts",
            lambda: build_marts(run.con, settings),
        ),
    )
    cpu_began = time.process_time()
    for name, step in steps:
        began = time.perf_counter()
        step()
        run.timings[name] = time.perf_counter() - began
    run.cpu_seconds = time.process_time() - cpu_began
    return run
