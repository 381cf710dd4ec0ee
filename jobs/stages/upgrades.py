"""Lakes written before a table was added: the table is built once from what the lake holds.

- ``bronze/snapshot_files`` (the .bak rule's stored decisions): from ops/ingest_runs' rows of
  the snapshot files ingested and quarantine/rejected_inputs' file-level rejections, with the
  same rule the ingest applies (pipelines.ingest.snapshots.select_snapshot_files).
- ``quality/findings`` and grouped ``quality/alerts``: from the one-row-per-finding
  ``quality/alerts`` of earlier versions.

A column added since is filled where the lake's files still tell it:

- ``ops/ingest_runs``' content of the growing files ingested before it was recorded
  (``content_head``; ``content_size``, ``content_hash`` of a compressed one), from each file still
  landed as it was, so that a later copy of another path continues it (jobs.io.growth).
"""

from __future__ import annotations

import logging
from pathlib import Path

from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from jobs.io.growth import content_digest, content_head, head_digest, is_compressed
from jobs.io.lake import Lake
from jobs.io.landing import still_landed
from jobs.quality.audit import RUN_COLUMNS
from jobs.sources import BY_KIND
from pipelines.ingest.config_files import classify_config_file
from pipelines.ingest.snapshots import DOCUMENT_REASONS, select_snapshot_files
from pipelines.monitoring import CHECKS
from pipelines.monitoring.alerts import alerts_of
from schemas.tables import (
    INGEST_RUNS,
    OFFSET_SNAPSHOTS,
    QUALITY_ALERTS,
    QUALITY_FINDINGS,
    REJECTED_INPUTS,
    SNAPSHOT_FILES,
    TableSpec,
)

log = logging.getLogger(__name__)
UPGRADE_RUN_ID = "upgrade"
# quality/alerts as earlier versions wrote it: a finding per row, under the alert's name
EARLIER_ALERTS = TableSpec(
    layer=QUALITY_ALERTS.layer,
    name=QUALITY_ALERTS.name,
    grain=QUALITY_FINDINGS.grain,
    keys=("interval_start", "alert_id"),
    event_time="interval_start",
    schema=StructType(
        [
            StructField("alert_id", f.dataType, f.nullable) if f.name == "finding_id" else f
            for f in QUALITY_FINDINGS.schema.fields
        ]
    ),
)


def upgrade(lake: Lake) -> None:
    """Build every table a lake written by an earlier version lacks."""
    if lake.exists(OFFSET_SNAPSHOTS) and not lake.exists(SNAPSHOT_FILES):
        _snapshot_files(lake)
    if lake.exists(QUALITY_ALERTS) and "findings" not in lake.stored_columns(QUALITY_ALERTS):
        _alerts_into_findings(lake)
    if lake.exists(INGEST_RUNS) and "content_head" not in lake.stored_columns(INGEST_RUNS):
        _growing_file_contents(lake)


CONTENT_COLUMNS = ("content_size", "content_hash", "content_head")


def _growing_file_contents(lake: Lake) -> None:
    """ops/ingest_runs' rows of the growing files ingested before their content's head was recorded
    get it, with a compressed file's content when that was not recorded either: from the file, when
    it is still landed with the size and modification time it was ingested with. Any other such copy
    is compared as before: by its path, and as a compressed file's possible prefix."""
    grows = [kind for kind, source in BY_KIND.items() if source.grows]
    ingested = lake.read(INGEST_RUNS).where(
        F.col("source_kind").isin(*grows) & (F.col("status") == "ingested")
    )
    filled = []
    for r in ingested.collect():
        path = Path(r.source_file)
        if not still_landed(path, r.file_size, r.file_mtime_ns):
            continue  # gone or replaced: the copy keeps what it recorded
        compressed = is_compressed(path)
        if compressed and r.content_hash is None and r.records_landed == 0:
            # an earlier reader may have landed none of a damaged archive's lines: a copy that
            # continues it is read whole, as before (it has no row to land twice)
            continue
        content = (r.content_size, r.content_hash) if r.content_hash else None
        if content is None:
            content = content_digest(path) if compressed else (r.file_size, r._file_hash)
        if content is None:
            continue  # no line of it could be read
        recorded = content if compressed else (None, None)  # a plain file's content is the file
        filled.append((r.batch_id, r.identity, *recorded, head_digest(content_head(path), content[0])))
    # merged even with nothing found: the table then declares the columns, and this runs once
    found = lake.spark.createDataFrame(
        filled,
        "batch_id string, identity string, content_size long, content_hash string, content_head string",
    )
    rows = ingested.drop(*CONTENT_COLUMNS).join(found, on=["batch_id", "identity"])
    lake.merge(INGEST_RUNS, rows.select(*INGEST_RUNS.columns))
    if filled:
        log.warning("recorded the content of %d growing files ingested before it was recorded", len(filled))


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


def _alerts_into_findings(lake: Lake) -> None:
    """quality/alerts held one row per finding before alerts were grouped: those rows become
    quality/findings, and each audited interval's alerts are grouped from them."""
    old = lake.read(EARLIER_ALERTS).withColumnRenamed("alert_id", "finding_id")
    lake.overwrite(QUALITY_FINDINGS, old.select(*QUALITY_FINDINGS.columns))
    lake.drop(QUALITY_ALERTS)  # its rows are findings now: it is created again with the alerts' columns
    stored = lake.read(QUALITY_FINDINGS)
    own = [c.check_name for c in CHECKS if c.alert_per_finding]
    lake.overwrite(QUALITY_ALERTS, alerts_of(stored, own, by=RUN_COLUMNS))
    log.warning(
        "quality/alerts of a lake written before alerts were grouped: its rows are now quality/findings"
    )
