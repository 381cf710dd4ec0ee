"""A small lake written without Spark (delta-rs), for the tests of what reads a lake: ``sql``,
``tables``, the report. Every queryable table exists; a few hold hand-written rows.

A row gives the columns a test cares about; the others take a placeholder of their type
(null where the column is nullable), so each row still fits its table's schema. ``vacuum_version``
removes a version's files from any lake, as a vacuum does once its retention has passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
)

from jobs.io.query import QUERYABLE_TABLES
from schemas.tables import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG_BY_GROUP,
    CONSUMER_STATUS,
    OFFSET_REGRESSIONS,
    QUALITY_CHECK_RESULTS,
    SNAPSHOT_FILES,
    TableSpec,
)

DAY = datetime(2026, 11, 21, tzinfo=UTC)
_PLACEHOLDERS = {
    StringType: "x",
    LongType: 0,
    IntegerType: 0,
    DoubleType: 0.0,
    BooleanType: False,
    TimestampType: DAY,
    DateType: DAY.date(),
}


def write_rows(
    root: Path, spec: TableSpec, rows: Sequence[Mapping[str, object]], mode: str = "error"
) -> None:
    """``rows`` as a new table ``spec`` under ``root``, or with ``mode="append"`` its next version
    (missing columns: placeholders)."""
    full = [
        {
            f.name: row[f.name] if f.name in row else None if f.nullable else _PLACEHOLDERS[type(f.dataType)]
            for f in spec.schema.fields
        }
        for row in rows
    ]
    table = pa.Table.from_pylist(full, schema=spec.arrow_schema)
    write_deltalake(f"{root}/{spec.path}", table, mode=mode, partition_by=list(spec.partition_by) or None)


def _regression(at: datetime, group: str, host: str, size: int, cause: str) -> dict:
    return {"cluster": "prod-1", "broker": "broker-a", "topic": "orders", "consumer_group": group,
            "queue_id": 1, "detected_at": at, "offset": 1000 - size, "stored_offset": 1000,
            "regression_size": size, "evidence": "commit", "client_host": host, "key_kind": "normal",
            "observation_seq": f"{at:%H%M%S}", "cause": cause, "messages_consumed_twice": size,
            "cause_detail": "reset by admin" if cause == "admin_reset" else None,
            "detected_date": at.date()}  # fmt: skip


REGRESSIONS = (
    _regression(DAY + timedelta(hours=1), "billing", "10.0.0.1:1", 300, "admin_reset"),
    _regression(DAY + timedelta(hours=2), "billing", "10.0.0.2:2", 20, "unexplained"),
    _regression(DAY + timedelta(hours=3), "shipping", "10.0.0.1:1", 5, "unexplained"),
)


def small_lake(root: Path) -> Path:
    """Every queryable table (empty but for the ones below) at ``root``; returns ``root``."""
    hours = [DAY + timedelta(hours=h) for h in range(4)]
    given: dict[TableSpec, list[dict]] = {
        OFFSET_REGRESSIONS: list(REGRESSIONS),
        CONSUMER_LAG_BY_GROUP: [
            {"cluster": "prod-1", "topic": "orders", "consumer_group": group, "observed_at": at, "queues": 4,
             "total_lag_messages": lag * (i + 1), "worst_lag_seconds": lag / 10 * (i + 1), "observed_date": at.date()}
            for group, lag in (("billing", 1500), ("shipping", 40)) for i, at in enumerate(hours)
        ],
        CONSUME_THROUGHPUT: [
            {"cluster": "prod-1", "topic": "orders", "consumer_group": group, "window_start": at,
             "window_end": at + timedelta(hours=1), "messages_consumed": rate * 3600,
             "messages_per_second": float(rate), "observations": 12, "messages_produced": 60 * 3600,
             "window_date": at.date()}
            for group, rate in (("billing", 50), ("shipping", 7)) for at in hours
        ],
        CONSUMER_STATUS: [
            {"cluster": "prod-1", "topic": "orders", "consumer_group": group, "window_start": at,
             "window_end": at + timedelta(hours=1), "status": status, "status_reason": f"{status} by construction",
             "lag_observations": 12, "commits": 10, "messages_consumed": 100, "regressions": 0,
             "window_date": at.date()}
            for group, statuses in (("billing", ("OK", "WARN", "REWIND", "STALL")), ("shipping", ("OK",) * 4))
            for at, status in zip(hours, statuses, strict=True)
        ],
        SNAPSHOT_FILES: [
            {"cluster": "prod-1", "broker": broker, "snapshot_at": at, "document_kind": "consumer_offsets",
             "snapshot_source": "main", "source_file": f"{broker}/{at:%H}", "_file_hash": f"{broker}{at:%H}",
             "selection": "main", "is_replayed": True, "snapshot_date": at.date()}
            for broker in ("broker-a", "broker-b") for at in hours
        ],
        QUALITY_CHECK_RESULTS: [
            {"run_id": "r1", "interval_start": DAY, "interval_end": DAY + timedelta(days=1), "check_name": name,
             "check_kind": "monitoring", "table_name": "silver.offset_regressions", "severity": "warn",
             "is_success": passed, "rows_checked": 3, "failing_rows": 0 if passed else 3, "message": "m"}
            for name, passed in (("monitoring.large_regressions", False), ("monitoring.negative_lag", True))
        ],
    }  # fmt: skip
    for spec in QUERYABLE_TABLES:
        write_rows(root, spec, given.get(spec, []))
    return root


def vacuum_version(table_path: str, version: int) -> None:
    """Remove the files of the Delta table at ``table_path`` as of ``version``: what a vacuum removes
    of the files a later version no longer holds, once its retention has passed."""
    for uri in DeltaTable(table_path, version=version).file_uris():
        Path(uri.removeprefix("file://")).unlink()
