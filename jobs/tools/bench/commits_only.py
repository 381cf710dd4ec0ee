"""The commits-only case's inputs: plain JSON-lines commit events, nothing else, written by DuckDB.

The simulator models a whole estate (snapshots, admin outputs, logs) and writes a few hundred
queues; a team that captures only the commit stream lands files like these instead. For
``events`` commit events (one cluster, ``prod-1``):

- ``min(8000, events // 1000)`` queues (a multiple of 16, at least 16): 2 brokers x 8 queues
  of each topic@group pair; each queue commits every 5 s at its own millisecond;
- offsets grow at each queue's own rate; about one commit in 1,000 goes back below the one
  before it (a regression), the next one is back on course;
- ``COMMIT_FILES`` files in time order, ``commits/prod-1/2026-11-21/commits-<n>.jsonl``.

Deterministic for a count (DuckDB's ``hash`` of the event number), and fast: 10M events in a
few seconds. The spec is kept in ``MANIFEST_NAME`` so that unchanged inputs are reused.
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import datetime
from pathlib import Path

from jobs.tools.bench.oracle.reference import connect

MANIFEST_NAME = "_commits_only_manifest.json"
COMMIT_FILES = 4
CLUSTER = "prod-1"
TICK_SECONDS = 5
REGRESSION_EVERY = 1000  # about one commit in this many regresses
MAX_QUEUES = 8000


def queue_count(events: int) -> int:
    """Queues for ``events`` commit events (module docstring)."""
    return max(16, min(MAX_QUEUES, events // 1000) // 16 * 16)


def _events_sql(events: int, queues: int, start: datetime) -> str:
    """One row per commit event, its fields in the contract's names; ``file_no`` and ``i`` for writing."""
    ticks = -(-events // queues)
    return f"""
        WITH e AS (
            SELECT i, i // {queues} AS tick, i % {queues} AS q FROM range({events}) t(i)
        ), shaped AS (
            SELECT i, tick, q, q // 16 AS pair,
                   1 + hash(q, 'rate') % 40 AS rate, 1000000 + hash(q, 'base') % 1000000 AS base,
                   tick > 0 AND hash(i, 'regress') % {REGRESSION_EVERY} = 0 AS regresses
            FROM e
        )
        SELECT i, tick * {COMMIT_FILES} // {ticks} AS file_no,
               strftime(TIMESTAMP '{start:%Y-%m-%d %H:%M:%S}' + to_milliseconds(
                   tick * {TICK_SECONDS * 1000} + hash(q, 'ms') % {TICK_SECONDS * 1000}),
                   '%Y-%m-%dT%H:%M:%S.%gZ') AS committed_at,
               'broker-' || chr(CAST(97 + q % 2 AS INTEGER)) AS broker,
               '10.1.' || (pair % 200) || '.' || (10 + q % 2) || ':' || (40000 + pair) AS client_host,
               'topic-' || lpad(CAST(pair % 100 AS VARCHAR), 3, '0') AS topic,
               'group-' || lpad(CAST(pair // 100 AS VARCHAR), 3, '0') AS consumer_group,
               CAST((q // 2) % 8 AS INTEGER) AS queue_id,
               CAST(CASE WHEN regresses THEN base + tick * rate - rate - 1 - hash(i, 'size') % 500
                         ELSE base + tick * rate END AS BIGINT) AS "offset",
               CASE WHEN hash(i, 'path') % 5 = 0 THEN 'pull_piggyback' ELSE 'update_offset' END AS path
        FROM shaped
    """


def generate(events: int, start: datetime, landing: Path) -> dict:
    """Write the case's files into ``landing`` unless it holds them already; returns the bench's
    input figures (as :func:`jobs.tools.bench.runner.prepare_landing` does)."""
    spec = {
        "events": events,
        "start": start.isoformat(),
        "queues": queue_count(events),
        "files": COMMIT_FILES,
    }
    manifest = landing / MANIFEST_NAME
    reused = manifest.is_file() and json.loads(manifest.read_text()) == spec
    began = time.perf_counter()
    if not reused:
        shutil.rmtree(landing, ignore_errors=True)
        folder = landing / "commits" / CLUSTER / f"{start:%Y-%m-%d}"
        folder.mkdir(parents=True)
        con = connect(None)
        try:
            con.execute("SET preserve_insertion_order = true")
            con.execute(f"CREATE TABLE generated AS {_events_sql(events, spec['queues'], start)}")
            for n in range(COMMIT_FILES):
                con.execute(f"""
                    COPY (SELECT * EXCLUDE (i, file_no) FROM generated WHERE file_no = {n} ORDER BY i)
                    TO '{folder / f"commits-{n}.jsonl"}' (FORMAT JSON)
                """)  # fmt: skip
        finally:
            con.close()
        manifest.write_text(json.dumps(spec))
    files = sorted(landing.glob("commits/**/*.jsonl"))
    return {
        "reused": reused,
        "generate_seconds": 0.0 if reused else time.perf_counter() - began,
        "landing_bytes": sum(f.stat().st_size for f in files),
        "commit_events": events,
        "commit_files": len(files),
        "snapshot_files": 0,
        "progress_files": 0,
        "log_files": 0,
        "incidents": 0,
        "queues": spec["queues"],
    }
