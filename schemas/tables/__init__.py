"""Every Delta table OffsetLake writes: its place in the lake, grain, keys and columns.

This module is the public contract analysts query. Each table lives at
``<lake>/<layer>/<name>``; ``keys`` are unique at the stated grain (the data-quality
suite checks it) and ``event_time`` is the column a run's ``[from, to)`` interval
selects, so re-running an interval replaces exactly the rows it produced.
Columns starting with ``_`` are pipeline metadata. The staging lake (``<lake>/_staging``) holds
``STAGING_TABLES`` the same way: gold rows waiting for their audit, and whose they are.
"""

from __future__ import annotations

from schemas.tables.bronze import (
    DELAY_OFFSETS,
    GROUP_CONNECTIONS,
    OFFSET_COMMITS,
    OFFSET_RESETS,
    OFFSET_SNAPSHOTS,
    QUEUE_OFFSETS,
    SNAPSHOT_FILES,
)
from schemas.tables.gold import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG,
    CONSUMER_LAG_BY_GROUP,
    CONSUMER_STATUS,
    DUPLICATE_EXPOSURE,
    PRODUCE_THROUGHPUT,
)
from schemas.tables.ops import INGEST_RUNS, PUBLISH_RUNS, REJECTED_INPUTS, REPLAY_RUNS, STAGED_GOLD
from schemas.tables.quality import QUALITY_ALERTS, QUALITY_CHECK_RESULTS, QUALITY_FINDINGS
from schemas.tables.silver import (
    OFFSET_COMMITS_REPLAYED,
    OFFSET_REGRESSIONS,
    REPLAY_CHECKPOINTS,
    STORED_OFFSET_TIMELINE,
)
from schemas.tables.spec import QUEUE_KEY, TableSpec

BRONZE_TABLES = (
    OFFSET_SNAPSHOTS,
    SNAPSHOT_FILES,
    OFFSET_COMMITS,
    QUEUE_OFFSETS,
    OFFSET_RESETS,
    DELAY_OFFSETS,
    GROUP_CONNECTIONS,
)
SILVER_TABLES = (OFFSET_COMMITS_REPLAYED, STORED_OFFSET_TIMELINE, OFFSET_REGRESSIONS, REPLAY_CHECKPOINTS)
GOLD_TABLES = (
    CONSUMER_LAG,
    CONSUMER_LAG_BY_GROUP,
    PRODUCE_THROUGHPUT,
    CONSUME_THROUGHPUT,
    CONSUMER_STATUS,
    DUPLICATE_EXPOSURE,
)
OPS_TABLES = (INGEST_RUNS, REPLAY_RUNS, PUBLISH_RUNS)
QUALITY_TABLES = (QUALITY_CHECK_RESULTS, QUALITY_FINDINGS, QUALITY_ALERTS)
# the tables of the staging lake (<lake>/_staging): gold rows waiting for their audit, and whose
STAGING_TABLES = (*GOLD_TABLES, STAGED_GOLD)
# the tables a run writes (the quality tables are the audit's)
ALL_TABLES = (*BRONZE_TABLES, REJECTED_INPUTS, *OPS_TABLES, *SILVER_TABLES, *GOLD_TABLES)

__all__ = [
    "ALL_TABLES",
    "BRONZE_TABLES",
    "CONSUMER_LAG",
    "CONSUMER_LAG_BY_GROUP",
    "CONSUMER_STATUS",
    "CONSUME_THROUGHPUT",
    "DELAY_OFFSETS",
    "DUPLICATE_EXPOSURE",
    "GOLD_TABLES",
    "GROUP_CONNECTIONS",
    "INGEST_RUNS",
    "OFFSET_COMMITS",
    "OFFSET_COMMITS_REPLAYED",
    "OFFSET_REGRESSIONS",
    "OFFSET_RESETS",
    "OFFSET_SNAPSHOTS",
    "OPS_TABLES",
    "PRODUCE_THROUGHPUT",
    "PUBLISH_RUNS",
    "QUALITY_ALERTS",
    "QUALITY_CHECK_RESULTS",
    "QUALITY_FINDINGS",
    "QUALITY_TABLES",
    "QUEUE_KEY",
    "QUEUE_OFFSETS",
    "REJECTED_INPUTS",
    "REPLAY_CHECKPOINTS",
    "REPLAY_RUNS",
    "SILVER_TABLES",
    "SNAPSHOT_FILES",
    "STAGED_GOLD",
    "STAGING_TABLES",
    "STORED_OFFSET_TIMELINE",
    "TableSpec",
]
