"""Broker offset snapshots: ``consumerOffset.json`` (and ``.bak``), ``lmqConsumerOffset.json``, ``delayOffset.json``.

Other ``store/config`` files found beside them are skipped with the reason
(pipelines.ingest.config_files). The .bak rule is decided here, once, and stored in
bronze/snapshot_files (pipelines.ingest.snapshots.select_snapshot_files): the replay replays
the files it marks.
"""

from __future__ import annotations

from datetime import timedelta

from pyspark.sql import DataFrame

from jobs.io.landing import LandedFile
from jobs.io.snapshot_files import BROKER_DOCUMENT_KINDS, SnapshotFile, read_snapshot_documents
from jobs.sources.collector import ParseContext
from jobs.sources.source import SNAPSHOTS, Source
from pipelines.ingest.config_files import classify_config_file
from pipelines.ingest.quarantine import REJECTED_COLUMNS, Parsed
from pipelines.ingest.snapshots import (
    DELAY_COLUMNS,
    explode_delay_offsets,
    explode_snapshots,
    select_snapshot_documents,
)
from schemas.tables import DELAY_OFFSETS, OFFSET_SNAPSHOTS, REJECTED_INPUTS, SNAPSHOT_FILES

CLIENT_OFFSETS_REASON = (
    "a client's offsets.json, not a broker's store file: a client's offsets are read where the "
    "client_offsets pattern finds them"
)


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    read, skipped = [], []
    for f in files:
        kind = classify_config_file(f.name)
        if not kind.is_read:
            skipped.append((str(f.path), "skipped", kind.skip_reason))
            continue
        if kind.document_kind not in BROKER_DOCUMENT_KINDS:  # a client's offsets.json among broker files
            skipped.append((str(f.path), "skipped", CLIENT_OFFSETS_REASON))
            continue
        path = str(f.path)
        read.append(
            SnapshotFile(
                path,
                f.cluster,
                f.broker or "unknown",
                f.event_at,
                kind.file_role,
                kind.document_kind,
                context.hashes[path],
            )
        )
    collector = context.collector
    collector.skip(skipped)
    if not read:
        return
    documents = collector.keep(read_snapshot_documents(context.spark, read))
    # the .bak rule looks at the files of the same snapshots that landed before too
    instants = [f.snapshot_at for f in read]
    earlier = context.lake.read(
        SNAPSHOT_FILES, start=min(instants), end=max(instants) + timedelta(microseconds=1)
    )
    selection = select_snapshot_documents(documents, earlier)
    collector.decide(SNAPSHOT_FILES, selection.files)
    collector.add(OFFSET_SNAPSHOTS, explode_snapshots(selection.ingest), SOURCE.kind)
    collector.add(DELAY_OFFSETS, _delay_offsets(context, read, selection.ingest), SOURCE.kind)
    collector.skipped.append(selection.skipped.select("source_file", "status", "status_reason"))


def _delay_offsets(context: ParseContext, read: list[SnapshotFile], documents: DataFrame) -> Parsed:
    """bronze/delay_offsets' rows of the batch. They come from delayOffset.json files alone, so
    a batch without one has none, and their parse is not built: every step built is the driver's
    and the JVM's time before the ingest's one action. The table still gets its empty append."""
    if any(f.document_kind == "delay_offsets" for f in read):
        return explode_delay_offsets(documents)
    spark = context.spark
    return Parsed(
        landed=spark.createDataFrame([], DELAY_OFFSETS.schema).select(*DELAY_COLUMNS),
        rejected=spark.createDataFrame([], REJECTED_INPUTS.schema).select(*REJECTED_COLUMNS),
    )


SOURCE = Source(
    kind="snapshots",
    default_pattern="snapshots/{cluster}/{broker}/{time}/*",
    description="consumerOffset.json (and .bak), lmqConsumerOffset.json, delayOffset.json of the 3.x, 4.x and 5.x "
    "shapes; other store/config files are skipped with a logged reason",
    lands=(OFFSET_SNAPSHOTS, DELAY_OFFSETS, SNAPSHOT_FILES),
    parse=parse,
    replay_role=SNAPSHOTS,
    time_in_path=True,
    identified_by="snapshot",
)
