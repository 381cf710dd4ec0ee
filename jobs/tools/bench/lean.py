"""The lean DuckDB job: what a user would write by hand instead of OffsetLake, the bench's yardstick.

One DuckDB process over the landing's canonical commit events (``commits/<cluster>/**/*.jsonl*``):

1. read the JSON lines with a declared schema and write them to Parquet (the bronze table);
2. replay both semantics with window functions per queue, ordered by commit time (then file and
   offset): the broker's stored offset before each commit (the previous commit's offset) and the
   client's offset after it (the highest committed so far); write the replayed rows to Parquet;
3. the regressions (a commit below the stored offset before it) and the hourly throughput (the
   stored offset's growth per cluster, topic, group and hour) to Parquet.

It reads the commit stream only: snapshots, admin outputs and logs, and the rules that use them
(the oracle's, :mod:`jobs.tools.bench.oracle`), are not in it. Its regressions equal OffsetLake's
on a landing of commit events only (the commits-only case), which the bench checks.

Run as ``python -m jobs.tools.bench.lean <landing> <out>`` so that the bench times it as it times
``offsetlake run``: a process's wall time, start-up included. It prints one JSON line of counts, with
the seconds of its steps (``steps``: ``read_write``, ``replay``, ``outputs``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import duckdb

QUEUE = "cluster, broker, topic, consumer_group, queue_id"
COLUMNS = {
    "committed_at": "TIMESTAMPTZ", "broker": "VARCHAR", "client_host": "VARCHAR", "topic": "VARCHAR",
    "consumer_group": "VARCHAR", "queue_id": "INTEGER", "offset": "BIGINT", "path": "VARCHAR",
}  # fmt: skip
REGRESSION_COLUMNS = (
    "cluster", "broker", "topic", "consumer_group", "queue_id", "detected_at", "offset", "stored_offset",
    "regression_size",
)  # fmt: skip


def commit_files(landing: Path) -> list[Path]:
    return sorted(p for p in (landing / "commits").glob("*/**/*.jsonl*") if p.is_file())


class Steps:
    """The seconds of a job's steps, each from the end of the one before (or from the start)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name], self._last = now - self._last, now


def run(landing: Path, out: Path, steps: Steps | None = None) -> dict:
    """Steps 1-3 of the module docstring into ``out``, timed into ``steps``; returns the rows of each output."""
    steps = steps or Steps()
    out.mkdir(parents=True, exist_ok=True)
    files = commit_files(landing)
    if not files:
        return {"commits": 0, "regressions": 0, "throughput_rows": 0}
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    columns = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in COLUMNS.items()) + "}"
    listed = "[" + ", ".join(f"'{f}'" for f in files) + "]"
    con.execute(f"""
        COPY (
            SELECT regexp_extract(filename, '/commits/([^/]+)/', 1) AS cluster, * EXCLUDE (filename),
                   filename AS source_file
            FROM read_json({listed}, format = 'newline_delimited', columns = {columns}, filename = true)
        ) TO '{out / "commits.parquet"}' (FORMAT PARQUET)
    """)  # fmt: skip
    steps.done("read_write")
    con.execute(f"""
        COPY (
            SELECT *,
                lag("offset") OVER queue_order AS stored_offset_before,
                max("offset") OVER (queue_order ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
                    AS client_offset_after
            FROM read_parquet('{out / "commits.parquet"}')
            WINDOW queue_order AS (PARTITION BY {QUEUE} ORDER BY committed_at, source_file, "offset")
        ) TO '{out / "replayed.parquet"}' (FORMAT PARQUET)
    """)  # fmt: skip
    steps.done("replay")
    replayed = f"read_parquet('{out / 'replayed.parquet'}')"
    con.execute(f"""
        COPY (
            SELECT {QUEUE}, committed_at AS detected_at, "offset", stored_offset_before AS stored_offset,
                   stored_offset_before - "offset" AS regression_size, client_host, path
            FROM {replayed} WHERE "offset" < stored_offset_before
        ) TO '{out / "regressions.parquet"}' (FORMAT PARQUET)
    """)  # fmt: skip
    con.execute(f"""
        COPY (
            SELECT cluster, topic, consumer_group, date_trunc('hour', committed_at) AS hour_start,
                   sum(greatest("offset" - stored_offset_before, 0)) AS consumed_messages, count(*) AS commits
            FROM {replayed} GROUP BY ALL
        ) TO '{out / "throughput.parquet"}' (FORMAT PARQUET)
    """)  # fmt: skip
    steps.done("outputs")
    counts = {
        name: con.execute(f"SELECT count(*) FROM read_parquet('{out / file}')").fetchone()[0]
        for name, file in (
            ("commits", "commits.parquet"),
            ("regressions", "regressions.parquet"),
            ("throughput_rows", "throughput.parquet"),
        )
    }
    con.close()
    return counts


if __name__ == "__main__":
    timed = Steps()
    print(json.dumps({**run(Path(sys.argv[1]), Path(sys.argv[2]), timed), "steps": timed.seconds}))
