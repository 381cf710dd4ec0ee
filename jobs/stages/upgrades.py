"""Lakes written before a table was added: the table is built once from what the lake holds.

- ``bronze/snapshot_files`` (the .bak rule's stored decisions): from ops/ingest_runs' rows of
  the snapshot files ingested and quarantine/rejected_inputs' file-level rejections, with the
  same rule the ingest applies (pipelines.ingest.snapshots.select_snapshot_files).
"""

from __future__ import annotations

import logging

from pyspark.sql import functions as F

from jobs.io.lake import Lake
from pipelines.ingest.config_files import classify_config_file
from pipelines.ingest.snapshots import DOCUMENT_REASONS, select_snapshot_files
from schemas.tables import INGEST_RUNS, OFFSET_SNAPSHOTS, REJECTED_INPUTS, SNAPSHOT_FILES

log = logging.getLogger(__name__)
UPGRADE_RUN_ID = "upgrade"


def upgrade(lake: Lake) -> None:
    """Build every table a lake written by an earlier version lacks."""
    if lake.exists(OFFSET_SNAPSHOTS) and not lake.exists(SNAPSHOT_FILES):
        _snapshot_files(lake)


def _snapshot_files(lake: Lake) -> None:
    landed = (
        lake.read(INGEST_RUNS)
        .where((F.col("source_kind") == "snapshots") & F.col("status").isin("ingested", "duplicate"))
        .select("cluster", "broker", "event_at", "source_file", "_file_hash")
        .distinct()
        .collect()
    )
    rows = []
    for r in landed:
        kind = classify_config_file(r.source_file.rsplit("/", 1)[-1])
        if kind.is_read:
            rows.append(
                (
                    r.cluster,
                    r.broker or "unknown",
                    r.event_at,
                    kind.document_kind,
                    kind.file_role,
                    r.source_file,
                    r._file_hash,
                )
            )
    files = lake.spark.createDataFrame(
        rows,
        "cluster string, broker string, snapshot_at timestamp, document_kind string, snapshot_source string, "
        "source_file string, _file_hash string",
    )
    whole_file = lake.read(REJECTED_INPUTS).where(
        (F.col("source_kind") == "snapshots") & F.col("reason").isin(*DOCUMENT_REASONS)
    )
    status = whole_file.groupBy("source_file", "_file_hash").agg(F.first("reason").alias("document_status"))
    decided = select_snapshot_files(files.join(status, on=["source_file", "_file_hash"], how="left"))
    lake.merge(SNAPSHOT_FILES, decided.withColumn("_ingest_run_id", F.lit(UPGRADE_RUN_ID)))
    log.warning("built bronze/snapshot_files for a lake written before it existed (%d files)", len(rows))
