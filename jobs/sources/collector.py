"""What the sources of one ingest batch parse, gathered per bronze table (see jobs.sources)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from jobs.io.checked_commits import CheckedCommitWriter
from jobs.io.growth import FROM_START, ResumePoint
from jobs.io.lake import Lake
from jobs.io.landing import LandedFile
from jobs.io.text_lines import LINE_ERROR, TextFile, read_lines
from jobs.io.worker_files import FileCount, landed_counts
from pipelines.ingest.local_times import clock_change_near, clocks_change
from pipelines.ingest.quarantine import Parsed
from pipelines.unions import union_all
from schemas.config import Settings
from schemas.instants import from_collected
from schemas.tables import REJECTED_INPUTS, TableSpec

SKIPPED_SCHEMA = StructType(
    [
        StructField("source_file", StringType()),
        StructField("status", StringType()),
        StructField("status_reason", StringType()),
    ]
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
    worker_written: dict[TableSpec, str] = field(default_factory=dict)
    # rows upserted on their table's keys: decisions a file landing later may change
    decided: dict[TableSpec, DataFrame] = field(default_factory=dict)

    def counts(self) -> dict[str, FileCount]:
        """Each file's accounting: Spark's, plus the rows the reader landed (see
        jobs.io.worker_files). Collected before any write: computing it runs every read, so the
        reader's files are all there when a table's append takes them."""
        counts = {
            r.source_file: FileCount(
                r.records_landed,
                r.records_quarantined,
                from_collected(r.event_min_at),
                from_collected(r.event_max_at),
            )
            for r in self.accounting.collect()
        }
        for directory in self.worker_written.values():
            for source_file, landed in landed_counts(directory).items():
                counts[source_file] = counts[source_file].plus(landed) if source_file in counts else landed
        return counts

    def rejected_given(self, counts: dict) -> DataFrame:
        """The rejected rows, given the accounting's rows by file (``counts``): the accounting
        counts every rejected row, so where it counts none this is an empty frame that scans
        no parse, instead of a filter over every cached one."""
        return (
            self.rejected if any(n.records_quarantined for n in counts.values()) else self.rejected.limit(0)
        )

    def release(self) -> None:
        for df in self._persisted:
            df.unpersist()


class Collector:
    """Accumulates parsers' outputs per table, tagging rejections with their source kind."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.landed: dict[TableSpec, list[DataFrame]] = {}
        self.rejected: list[DataFrame] = []
        self.counted: list[DataFrame] = []  # every parse's records, as the accounting sums them
        self.skipped: list[DataFrame] = []
        self.persisted: list[DataFrame] = []
        self.worker_written: dict[TableSpec, str] = {}
        self.decided: dict[TableSpec, DataFrame] = {}

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

    def decide(self, spec: TableSpec, rows: DataFrame) -> None:
        """Rows of ``spec`` to upsert on its keys (not records of any file: the accounting skips them)."""
        self.decided[spec] = self.keep(rows)

    def skip(self, rows: list[tuple[str, str, str]]) -> None:
        if rows:
            self.skipped.append(self.spark.createDataFrame(rows, SKIPPED_SCHEMA))


@dataclass(frozen=True)
class ParseContext:
    """What a source's parse needs besides its files: the session and settings, each file's
    content hash (by path), where the rows go, and (the embedded lake) where the commit reader
    writes the lines it has checked itself."""

    lake: Lake
    settings: Settings
    hashes: dict[str, str]
    collector: Collector
    checked_commits: CheckedCommitWriter | None = None
    # files that grew since an ingested copy: where their new lines begin (by path)
    resumes: Mapping[str, ResumePoint] = field(default_factory=dict)

    @property
    def spark(self) -> SparkSession:
        return self.lake.spark

    def text_files(self, files: list[LandedFile], zone_of, whole: Collection[str] = ()) -> list[TextFile]:
        """``files`` as the text reader takes them (``zone_of(cluster)``: the zone of their local
        times; ``whole``: the paths read from their start, grown ones too: see ``first_lines``)."""
        resumes = [
            FROM_START if str(f.path) in whole else self.resumes.get(str(f.path), FROM_START) for f in files
        ]
        # a file's time is its path's, else its modification time (jobs.io.landing), as for every
        # source: an admin-tool output saved under a folder time that is not read is observed then
        return [
            TextFile(str(f.path), str(f.path), f.cluster, f.broker, f.event_at, zone_of(f.cluster),
                     self.hashes[str(f.path)], resume.skip_bytes, resume.first_line, f.size)
            for f, resume in zip(files, resumes, strict=True)
        ]  # fmt: skip

    def log_lines(self, files: list[LandedFile], zone_of, keep: bool = False) -> tuple[DataFrame, bool]:
        """The lines of ``files`` (logs of local times in ``zone_of(cluster)``), and whether some
        zone of theirs changes its clocks (pipelines.ingest.local_times then places the hour it
        repeats). Near a change a file is read whole, a grown one too, its lines marked by
        ``first_lines``; the lines are kept (read once) then, or when ``keep`` asks."""
        changing, near = daylight_saving(files, zone_of)
        # a copy that an ingested one holds whole has no line to place: it is not read
        whole = {path for path in near if not self.resumes.get(path, FROM_START).nothing_new}
        lines = read_lines(self.spark, self.text_files(files, zone_of, whole))
        if changing:
            lines = self.first_lines(lines, whole)
        return (self.collector.keep(lines) if keep or changing else lines), changing

    def first_lines(self, lines: DataFrame, whole: Collection[str]) -> DataFrame:
        """``lines`` with ``_first_line``: where a grown file read whole (``whole``) has its new
        lines, the lines before it being the continued copy's (pipelines.ingest.local_times places
        the hour a zone repeats with them, then drops those that copy landed); 1 for the others,
        and for a file's read error (the whole file's, not one of the lines the copy held)."""
        firsts = [(path, self.resumes[path].first_line) for path in whole if path in self.resumes]
        first = F.lit(1)
        if firsts:
            by_path = F.create_map(*[F.lit(v) for item in firsts for v in item])[F.col("source_file")]
            file_error = F.col("read_error").isNotNull() & ~F.col("read_error").startswith(LINE_ERROR)
            first = F.when(file_error, F.lit(1)).otherwise(F.coalesce(by_path, F.lit(1)))
        return lines.withColumn("_first_line", first.cast("long"))


def daylight_saving(files: list[LandedFile], zone_of) -> tuple[bool, set[str]]:
    """Whether some of ``files`` (logs) are in a zone whose clocks change, so that their lines of
    the hour it repeats are placed by their order (pipelines.ingest.local_times), and the paths
    of those taken near a change: read whole, a grown one too, so that every line orders it."""
    changing = any(clocks_change(zone_of(f.cluster)) for f in files)
    near = {
        str(f.path)
        for f in files
        if changing and clock_change_near(zone_of(f.cluster), datetime.fromtimestamp(f.mtime_ns / 1e9, UTC))
    }
    return changing, near


def finish(spark: SparkSession, collectors: list[Collector]) -> SourceOutput:
    """What ``collectors`` (one per source, in SOURCES' order) gathered, as one output."""
    landed_frames: dict[TableSpec, list[DataFrame]] = {}
    for collector in collectors:
        for spec, frames in collector.landed.items():
            landed_frames.setdefault(spec, []).extend(frames)
    rejected_frames = [df for collector in collectors for df in collector.rejected]
    counted = [df for collector in collectors for df in collector.counted]
    skipped_frames = [df for collector in collectors for df in collector.skipped]
    # every part is cached by the collectors: the unions cost nothing to recompute
    landed = {spec: union_all(frames) for spec, frames in landed_frames.items()}
    rejected = union_all(rejected_frames) if rejected_frames else None
    if counted:
        accounting = (
            union_all(counted)
            .groupBy("source_file")
            .agg(
                F.sum("landed").alias("records_landed"),
                F.sum("quarantined").alias("records_quarantined"),
                F.min("first_at").alias("event_min_at"),
                F.max("last_at").alias("event_max_at"),
            )
        )
    else:
        accounting = spark.createDataFrame(
            [],
            "source_file string, records_landed long, records_quarantined long, event_min_at timestamp, event_max_at timestamp",
        )
    if rejected is None:
        rejected = spark.createDataFrame([], REJECTED_INPUTS.schema).drop("rejected_at", "_ingest_run_id")
    skipped = union_all(skipped_frames) if skipped_frames else spark.createDataFrame([], SKIPPED_SCHEMA)
    return SourceOutput(
        landed,
        rejected,
        accounting,
        skipped,
        [df for collector in collectors for df in collector.persisted],
        {spec: d for collector in collectors for spec, d in collector.worker_written.items()},
        {spec: df for collector in collectors for spec, df in collector.decided.items()},
    )
