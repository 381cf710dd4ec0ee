"""Route each landed file to its reader and parser; gather the rows per bronze table.

| source kind    | reader                                    | parser                                       | lands in |
|----------------|-------------------------------------------|----------------------------------------------|----------|
| snapshots      | snapshot_reader.read_snapshot_documents   | snapshots.explode_snapshots / _delay_offsets | offset_snapshots, delay_offsets |
| client_offsets | snapshot_reader.read_client_offset_files  | client_offsets.explode_client_offsets        | offset_snapshots |
| commits        | readers.read_file_lines + commit_preparse | commit_events.parse_commit_events (and, on the embedded lake, reader_landing) | offset_commits |
| broker_logs    | readers.read_lines                        | broker_log.parse_broker_log                  | offset_commits, offset_resets |
| client_logs    | readers.read_lines                        | client_log.parse_client_log                  | offset_commits |
| progress       | readers.read_lines                        | admin_progress.parse_admin_progress          | queue_offsets |
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import reduce

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from jobs.landing import LandedFile
from jobs.reader_landing import FileCount, ReaderLanding, landed_counts, utc
from jobs.readers import LineColumns, TextFile, read_file_lines, read_lines
from jobs.snapshot_reader import ClientOffsetFile, SnapshotFile, read_client_offset_files, read_snapshot_documents
from pipelines.admin_progress import parse_admin_progress
from pipelines.broker_log import parse_broker_log
from pipelines.client_log import parse_client_log
from pipelines.client_offsets import explode_client_offsets
from pipelines.commit_events import CHECKED, parse_commit_events
from pipelines.commit_preparse import PREPARSED_SCHEMA, preparse
from pipelines.config_files import classify_config_file
from pipelines.quarantine import Parsed
from pipelines.snapshots import explode_delay_offsets, explode_snapshots, select_snapshot_documents
from schemas.config import Settings
from schemas.tables import DELAY_OFFSETS, OFFSET_COMMITS, OFFSET_RESETS, OFFSET_SNAPSHOTS, QUEUE_OFFSETS, TableSpec

# The source kinds whose files land rows in each table the replay reads (the table above).
COMMIT_KINDS = ("commits", "broker_logs", "client_logs")
LOG_TOLD_KINDS = ("broker_logs", "client_logs")  # commits a log tells; the others are the commit log's
SNAPSHOT_KINDS = ("snapshots", "client_offsets")
# commit events of the plain shape are pre-parsed by the reader, in Arrow
LINE_COLUMNS = {"commits": LineColumns(PREPARSED_SCHEMA, preparse, spares_line=CHECKED)}
SKIPPED_SCHEMA = StructType(
    [StructField("source_file", StringType()), StructField("status", StringType()), StructField("status_reason", StringType())]
)


@dataclass
class SourceOutput:
    """Rows per bronze table, rejected rows, per-file accounting and files not ingested."""

    landed: dict[TableSpec, DataFrame]
    rejected: DataFrame
    accounting: DataFrame  # source_file, records_landed, records_quarantined, event_min_at, event_max_at
    skipped: DataFrame  # source_file, status, status_reason
    _persisted: list[DataFrame] = field(default_factory=list)
    # tables some of whose rows the reader wrote itself, and the directory of those files
    reader_landed: dict[TableSpec, str] = field(default_factory=dict)

    def counts(self) -> dict[str, FileCount]:
        """Each file's accounting: Spark's, plus the rows the reader landed (see
        jobs.reader_landing). Collected before any write: computing it runs every read, so the
        reader's files are all there when a table's append takes them."""
        counts = {
            r.source_file: FileCount(r.records_landed, r.records_quarantined, utc(r.event_min_at), utc(r.event_max_at))
            for r in self.accounting.collect()
        }
        for directory in self.reader_landed.values():
            for source_file, landed in landed_counts(directory).items():
                counts[source_file] = counts[source_file].plus(landed) if source_file in counts else landed
        return counts

    def rejected_given(self, counts: dict) -> DataFrame:
        """The rejected rows, given the accounting's rows by file (``counts``): the accounting
        counts every rejected row, so where it counts none this is an empty frame that scans
        no parse, instead of a filter over every cached one."""
        return self.rejected if any(n.records_quarantined for n in counts.values()) else self.rejected.limit(0)

    def release(self) -> None:
        for df in self._persisted:
            df.unpersist()


class _Collector:
    """Accumulates parsers' outputs per table, tagging rejections with their source kind."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.landed: dict[TableSpec, list[DataFrame]] = {}
        self.rejected: list[DataFrame] = []
        self.counted: list[DataFrame] = []  # every parse's records, as the accounting sums them
        self.skipped: list[DataFrame] = []
        self.persisted: list[DataFrame] = []
        self.reader_landed: dict[TableSpec, str] = {}

    def keep(self, df: DataFrame) -> DataFrame:
        """Cache a frame several outputs are derived from, so its files are read or parsed once."""
        self.persisted.append(df.persist(StorageLevel.MEMORY_AND_DISK))
        return self.persisted[-1]

    def add(self, spec: TableSpec, parsed: Parsed, source_kind: str) -> None:
        """Keep ``parsed`` for the table: its writes, rejections and accounting all read the one parse."""
        parsed = parsed.cached(self.keep)
        self.landed.setdefault(spec, []).append(parsed.landed)
        self.rejected.append(parsed.rejected.withColumn("source_kind", F.lit(source_kind)))
        self.counted.append(parsed.counted(spec.event_time))

    def skip(self, rows: list[tuple[str, str, str]]) -> None:
        if rows:
            self.skipped.append(self.spark.createDataFrame(rows, SKIPPED_SCHEMA))


def _union(frames: list[DataFrame]) -> DataFrame:
    return reduce(lambda a, b: a.unionByName(b), frames)


def _text_files(files: list[LandedFile], hashes: dict[str, str], zone) -> list[TextFile]:
    return [
        TextFile(str(f.path), str(f.path), f.cluster, f.broker, f.event_at if f.time_source == "path" else None, zone(f.cluster), hashes[str(f.path)])
        for f in files
    ]


def _snapshots(spark, collector: _Collector, files: list[LandedFile], hashes: dict[str, str]) -> None:
    read, skipped = [], []
    for f in files:
        kind = classify_config_file(f.name)
        if not kind.is_read:
            skipped.append((str(f.path), "skipped", kind.skip_reason))
            continue
        read.append(SnapshotFile(str(f.path), f.cluster, f.broker or "unknown", f.event_at, kind.file_role, kind.document_kind, hashes[str(f.path)]))
    collector.skip(skipped)
    if not read:
        return
    selection = select_snapshot_documents(collector.keep(read_snapshot_documents(spark, read)))
    collector.add(OFFSET_SNAPSHOTS, explode_snapshots(selection.ingest), "snapshots")
    collector.add(DELAY_OFFSETS, explode_delay_offsets(selection.ingest), "snapshots")
    collector.skipped.append(selection.skipped.select("source_file", "status", "status_reason"))


def _client_offsets(spark, collector: _Collector, files: list[LandedFile], hashes: dict[str, str]) -> None:
    client_files = [ClientOffsetFile(str(f.path), f.cluster, f.event_at, hashes[str(f.path)]) for f in files]
    result = explode_client_offsets(read_client_offset_files(spark, client_files))
    collector.add(OFFSET_SNAPSHOTS, result.parsed, "client_offsets")
    collector.skipped.append(result.skipped.select("source_file", "status", "status_reason"))


def parse_sources(
    spark: SparkSession, settings: Settings, files: list[LandedFile], hashes: dict[str, str], landing: ReaderLanding | None = None
) -> SourceOutput:
    """Read and parse ``files`` (any kinds); see the module docstring for the routing.

    With ``landing``, the commit-event reader writes the rows of the lines it has checked
    into ``landing.directory`` itself (see jobs.reader_landing); the output names that
    directory for bronze/offset_commits (``reader_landed``).
    """
    collector = _Collector(spark)
    by_kind: dict[str, list[LandedFile]] = {}
    for f in files:
        by_kind.setdefault(f.source_kind, []).append(f)
    if by_kind.get("snapshots"):
        _snapshots(spark, collector, by_kind["snapshots"], hashes)
    if by_kind.get("client_offsets"):
        _client_offsets(spark, collector, by_kind["client_offsets"], hashes)
    zones = {
        "commits": lambda cluster: "UTC",
        "broker_logs": lambda cluster: settings.cluster(cluster).broker_log_timezone,
        "client_logs": lambda cluster: settings.cluster(cluster).client_log_timezone,
        "progress": lambda cluster: settings.cluster(cluster).admin_timezone,
    }
    for kind, zone in zones.items():
        if not by_kind.get(kind):
            continue
        text_files = _text_files(by_kind[kind], hashes, zone)
        if kind == "commits":
            # the parse is cached with each line's file number, not its file's path, hash and
            # cluster (some 140 bytes a line): the outputs join them back from the files
            columns = LINE_COLUMNS[kind] if landing is None else replace(LINE_COLUMNS[kind], lands=landing.land)
            read = read_file_lines(spark, text_files, columns)
            collector.add(OFFSET_COMMITS, parse_commit_events(read.lines, read.files), kind)
            if landing is not None:
                collector.reader_landed[OFFSET_COMMITS] = landing.directory
            continue
        lines = read_lines(spark, text_files, LINE_COLUMNS.get(kind))
        if kind == "broker_logs":
            parsed = parse_broker_log(collector.keep(lines))  # two parsers read the lines: read them once
            collector.add(OFFSET_COMMITS, parsed.commits, kind)
            collector.add(OFFSET_RESETS, parsed.resets, kind)
        elif kind == "client_logs":
            collector.add(OFFSET_COMMITS, parse_client_log(lines), kind)
        else:
            # table rows and file-level rejections are two parts: read the many small files once.
            # The parse's window is per file: the lines get as many partitions as the cores several
            # times over, which adaptive execution does not merge (it merged the 10M bench's ~20 MB
            # of lines into 3 tasks on 2 cores, the third running alone)
            by_file = collector.keep(lines).repartition(spark.sparkContext.defaultParallelism * 4, "source_file", "_file_hash")
            collector.add(QUEUE_OFFSETS, parse_admin_progress(by_file), kind)
    return _finish(spark, collector)


def _finish(spark: SparkSession, collector: _Collector) -> SourceOutput:
    # every part is cached by the collector: the unions cost nothing to recompute
    landed = {spec: _union(frames) for spec, frames in collector.landed.items()}
    rejected = _union(collector.rejected) if collector.rejected else None
    if collector.counted:
        accounting = _union(collector.counted).groupBy("source_file").agg(
            F.sum("landed").alias("records_landed"),
            F.sum("quarantined").alias("records_quarantined"),
            F.min("first_at").alias("event_min_at"),
            F.max("last_at").alias("event_max_at"),
        )
    else:
        accounting = spark.createDataFrame([], "source_file string, records_landed long, records_quarantined long, event_min_at timestamp, event_max_at timestamp")
    if rejected is None:
        from schemas.tables import REJECTED_INPUTS

        rejected = spark.createDataFrame([], REJECTED_INPUTS.schema).drop("rejected_at", "_ingest_run_id")
    skipped = _union(collector.skipped) if collector.skipped else spark.createDataFrame([], SKIPPED_SCHEMA)
    return SourceOutput(landed, rejected, accounting, skipped, collector.persisted, collector.reader_landed)
