"""``offsetlake maintain``: compact, checkpoint and vacuum every table of a lake (the DAG runs it daily).

    offsetlake maintain --lake L                      # vacuum retention PT168H, Delta's default
    offsetlake maintain --lake L --retention P30D --zorder

Prints one line per table: active files and their bytes before and after, the Delta log's
size before and after, the files the vacuum removed. A retention shorter than the safe
minimum is refused (exit code 2) before any table is touched; a run holding the lake makes
the maintenance refuse too (exit code 5), as a second run would.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jobs.cli.durations import iso_duration
from jobs.cli.settings import check_lake, new_run_id, settings_from
from jobs.io.engines import MIN_RETENTION, TableMaintenance, check_retention
from jobs.runtime.logs import attach_log_file, log_file
from jobs.stages.maintenance import maintain_lake


def maintain_arguments(parser: argparse.ArgumentParser, settings_options) -> None:
    parser.add_argument("--lake", type=Path, required=True, help="root of the Delta lake a run wrote")
    hours = int(MIN_RETENTION.total_seconds() // 3600)
    parser.add_argument("--retention", type=iso_duration, default=MIN_RETENTION,
                        help=f"keep files removed less than this long ago, ISO-8601 (default and minimum PT{hours}H): "
                        "every version younger than it stays readable")  # fmt: skip
    parser.add_argument("--zorder", action="store_true",
                        help="cluster each table's rows by the queue key (cluster, broker, topic, group, queue) as it is compacted")  # fmt: skip
    parser.add_argument(
        "--run-id", help="the identifier the lake's lock shows while the maintenance holds it"
    )
    settings_options(parser)


def _size(count: int | None) -> str:
    if count is None:
        return "?"
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1000
    return str(count)


def table_line(result: TableMaintenance) -> str:
    """``bronze/offset_commits  files 212 → 3  bytes 1.2 MB → 1.1 MB  log 380.2 kB → 12.4 kB  vacuumed 0``."""
    return (
        f"{result.table:<40} files {result.files_before:>5,} → {result.files_after:<5,} "
        f"bytes {_size(result.bytes_before)} → {_size(result.bytes_after)}  "
        f"log {_size(result.log_bytes_before)} → {_size(result.log_bytes_after)}  "
        f"vacuumed {result.vacuumed_files:,}" + ("  (Z-ordered)" if result.zordered else "")
    )


def run_maintain(args: argparse.Namespace) -> int:
    check_retention(args.retention)
    settings = settings_from(args)
    check_lake(args.lake)
    run_id = args.run_id or f"maintain-{new_run_id()}"
    log_path = attach_log_file(log_file(str(args.lake), settings.logs.directory, run_id))
    results = maintain_lake(
        settings, args.lake, run_id, args.retention, zorder=args.zorder,
        output=None if args.verbose else log_path, on_table=lambda r: print(table_line(r), flush=True),
    )  # fmt: skip
    before = sum(r.files_before for r in results)
    after = sum(r.files_after for r in results)
    print(
        f"{len(results)} tables maintained: {before:,} → {after:,} active files; log in {log_path}",
        file=sys.stderr,
    )
    return 0
