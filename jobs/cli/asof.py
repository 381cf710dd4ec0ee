"""``offsetlake asof``: what each queue had stored at an instant, and which observation set it.

    offsetlake asof --lake L --at 2026-11-21T10:00:00Z --group billing
    offsetlake asof --lake L --at 2026-11-21T10:00:00Z --as-of-lake 2026-11-22T00:00:00Z   # the lake of then
    offsetlake asof --lake L --at 2026-11-21T10:00:00Z --version 12                         # the timeline's v12

The answer comes from ``silver/stored_offset_timeline``: per queue, its last observation at or
before ``--at`` in replay order (time, then ``observation_seq``), the order the replay itself
uses, so the stored offset shown is the one the broker held after that observation. A commit's
answer names its landed file, the file's content hash (which version of the path) and line; a
snapshot's, its file.
``--as-of-lake`` and ``--version`` read the tables as they were (Delta time travel): what the
lake said before a late file or a re-run changed it.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from jobs.cli.output import FORMATS, write_result
from jobs.cli.settings import check_writable_file
from jobs.io.query import open_lake_sql, sql_name
from pipelines.replay.projections import OBSERVATION_PATH_ESCAPES, OBSERVATION_SEQ_SEPARATOR
from schemas.instants import iso_z
from schemas.tables import STORED_OFFSET_TIMELINE

QUEUE = ("cluster", "broker", "topic", "consumer_group", "queue_id")


def asof_arguments(parser: argparse.ArgumentParser, utc_time) -> None:
    parser.add_argument("--lake", type=Path, required=True, help="root of the Delta lake a run wrote")
    parser.add_argument("--at", type=utc_time, required=True, help="the instant asked about (ISO-8601, UTC)")
    parser.add_argument("--group", help="only this consumer group")
    parser.add_argument("--topic", help="only this topic")
    travel = parser.add_mutually_exclusive_group()
    travel.add_argument("--as-of-lake", type=utc_time, help="read the lake as it was at this instant")
    travel.add_argument("--version", type=int, help="read this version of silver/stored_offset_timeline")
    parser.add_argument(
        "--format", choices=FORMATS, default="table", help="table (default), csv, json or parquet"
    )
    parser.add_argument("--out", type=Path, help="write the answer to this file (default: standard output)")


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _seq_part(number: int) -> str:
    return f"split_part(observation_seq, {_text(OBSERVATION_SEQ_SEPARATOR)}, {number})"


def _unescaped(path: str) -> str:
    for plain, escaped in reversed(OBSERVATION_PATH_ESCAPES):
        path = f"replace({path}, {_text(escaped)}, {_text(plain)})"
    return path


def asof_sql(at: datetime, group: str | None = None, topic: str | None = None) -> str:
    """Per queue, the timeline's last observation at or before ``at``."""
    where = [f"observed_at <= {_text(iso_z(at))}"]
    where += [f"consumer_group = {_text(group)}"] if group is not None else []
    where += [f"topic = {_text(topic)}"] if topic is not None else []
    queue = ", ".join(f'"{c}"' for c in QUEUE)
    return f"""
        SELECT {queue}, stored_offset, observed_at AS set_at, observation AS set_by,
               {_unescaped(_seq_part(2))} AS source_file,
               NULLIF({_seq_part(4)}, '') AS file_hash,
               CAST({_seq_part(3)} AS BIGINT) AS line_no
        FROM (SELECT *, row_number() OVER (PARTITION BY {queue}
                                           ORDER BY observed_at DESC, observation_seq DESC) AS latest
              FROM {sql_name(STORED_OFFSET_TIMELINE)} WHERE {" AND ".join(where)})
        WHERE latest = 1
        ORDER BY {queue}"""


def run_asof(args: argparse.Namespace) -> int:
    check_writable_file(args.out, "--out")
    versions = {STORED_OFFSET_TIMELINE: args.version} if args.version is not None else None
    queries = open_lake_sql(args.lake, as_of=args.as_of_lake, versions=versions)
    write_result(queries.run(asof_sql(args.at, args.group, args.topic)), args.format, args.out)
    return 0
