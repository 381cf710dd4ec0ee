"""Read broker offset snapshots, and files read whole (broadcast clients' ``offsets.json``, saved
``mqadmin consumerConnection`` outputs), into Spark.

The documents never come to the driver: Spark parses them, the driver only looks at
each file's status (size, existence) and builds one small metadata row per file.

``read_snapshot_documents`` returns one row per ``SnapshotFile`` (``DOCUMENT_COLUMNS``),
including files that are empty, missing, corrupt or binary, for
``pipelines.ingest.snapshots`` to explode or reject. ``read_whole_files`` returns one
row per ``WholeFile`` with the raw bytes for ``pipelines.ingest.client_offsets`` and
``pipelines.ingest.group_connections``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal
from urllib.parse import urlsplit

from py4j.java_gateway import is_instance_of
from py4j.protocol import Py4JJavaError
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
    VariantType,
)

from pipelines.ingest.snapshots import FASTJSON_OPTIONS

CORRUPT_RECORD = "corrupt_record"
# Values are variants so that one bad entry (a string offset, a queue map that is not an
# object) is rejected on its own while the rest of the file lands; see pipelines.ingest.snapshots.
SNAPSHOT_JSON_SCHEMA = StructType(
    [
        StructField("offsetTable", MapType(StringType(), VariantType())),
        StructField("lmqOffsetTable", MapType(StringType(), VariantType())),
        StructField(CORRUPT_RECORD, StringType()),
    ]
)
_JSON_OPTIONS = {
    "multiLine": "true",  # one document per file, pretty-printed over many lines
    **FASTJSON_OPTIONS,
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": CORRUPT_RECORD,
    # A file deleted after listing, or an unreadable gzip stream, yields no row instead of
    # failing the run; the metadata join below still gives that file its row.
    "ignoreMissingFiles": "true",
    "ignoreCorruptFiles": "true",
}
_PATH_KEY = "_path_key"

_FILE_META = [
    StructField("source_file", StringType(), False),
    StructField("cluster", StringType(), False),
]
DOCUMENT_COLUMNS = (
    "source_file",
    "cluster",
    "broker",
    "snapshot_at",
    "snapshot_source",
    "document_kind",
    "_file_hash",
    "file_size",
    "json_values",
    "offset_table",
    "lmq_offset_table",
    CORRUPT_RECORD,
)
CLIENT_FILE_COLUMNS = ("source_file", "cluster", "snapshot_at", "_file_hash", "file_size", "content")


# The documents of a broker's store/config directory this reader reads (a client's offsets.json
# has a reader of its own: jobs.sources.client_offsets)
BROKER_DOCUMENT_KINDS = ("consumer_offsets", "lmq", "delay_offsets")


@dataclass(frozen=True)
class SnapshotFile:
    """One landed broker file: where it is, whose it is, when it was taken, what it holds."""

    path: str
    cluster: str
    broker: str
    snapshot_at: datetime
    snapshot_source: Literal["main", "bak"]
    document_kind: Literal["consumer_offsets", "lmq", "delay_offsets"]
    file_hash: str

    def __post_init__(self) -> None:
        _require_utc(self.snapshot_at, self.path)
        if self.snapshot_source not in ("main", "bak"):
            raise ValueError(
                f"{self.path}: snapshot_source must be 'main' or 'bak', not {self.snapshot_source!r}"
            )
        if self.document_kind not in BROKER_DOCUMENT_KINDS:
            raise ValueError(f"{self.path}: unknown document_kind {self.document_kind!r}")


@dataclass(frozen=True)
class WholeFile:
    """One landed file read whole, and its time (``snapshot_at``): a broadcast consumer's
    ``offsets.json`` (or ``.bak``), whose path must keep the client's layout
    ``.../<clientIP>@<instanceName>/<group>/offsets.json`` (client id and group are read from it),
    or an ``mqadmin consumerConnection`` output."""

    path: str
    cluster: str
    snapshot_at: datetime
    file_hash: str

    def __post_init__(self) -> None:
        _require_utc(self.snapshot_at, self.path)


def _require_utc(moment: datetime, path: str) -> None:
    if moment.tzinfo is None or moment.utcoffset() != timedelta(0):
        raise ValueError(f"{path}: snapshot_at must be an aware UTC datetime, got {moment!r}")


def normalised_path(uri: Column) -> Column:
    """A file URI as the join key: ``file:///x`` and ``file:/x`` both become ``/x``."""
    return F.regexp_replace(uri, r"^file:/+", "/")


def _normalise(uri: str) -> str:
    return re.sub(r"^file:/+", "/", uri)


def _escape_glob(path: str) -> str:
    """Spark expands glob characters in the paths it is given; landed names are literal."""
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", path)


@dataclass(frozen=True)
class _FileStatus:
    uri: str  # URI-encoded, as Spark's _metadata.file_path reports it
    path: str  # decoded, as binaryFile's path column reports it
    size: int | None  # None: the file does not exist


def _file_system_key(path: str) -> str:
    """The scheme and authority of ``path`` (``""`` for a path without a scheme)."""
    parts = urlsplit(path)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme else ""


def _statuses(spark: SparkSession, paths: list[str]) -> list[_FileStatus]:
    """Qualify each path and read its size through Hadoop's file system (metadata only).

    The JVM's classes and each file system are looked up once, not per file: every call into
    the JVM is a round trip (docs/experiments.md, "Hadoop look-ups once per file system").
    """
    jvm = spark.sparkContext._jvm  # type: ignore[union-attr]
    gateway = spark.sparkContext._gateway  # type: ignore[union-attr]
    hadoop_path = jvm.org.apache.hadoop.fs.Path  # type: ignore[union-attr]
    conf = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    systems: dict[str, object] = {}
    statuses = []
    for path in paths:
        raw = hadoop_path(path)
        key = _file_system_key(path)
        if key not in systems:
            systems[key] = raw.getFileSystem(conf)
        fs = systems[key]
        qualified = fs.makeQualified(raw)
        try:
            size = fs.getFileStatus(qualified).getLen()
        except Py4JJavaError as error:
            if not is_instance_of(gateway, error.java_exception, "java.io.FileNotFoundException"):
                raise
            size = None  # gone since the landing was listed
        statuses.append(_FileStatus(uri=qualified.toUri().toString(), path=qualified.toString(), size=size))
    return statuses


_SNAPSHOT_META = StructType(
    [
        *_FILE_META,
        StructField("broker", StringType(), False),
        StructField("snapshot_at", TimestampType(), False),
        StructField("snapshot_source", StringType(), False),
        StructField("document_kind", StringType(), False),
        StructField("_file_hash", StringType(), False),
        StructField("file_size", LongType(), True),
        StructField(_PATH_KEY, StringType(), False),
    ]
)


_PARSED_SCHEMA = StructType(
    [
        StructField(_PATH_KEY, StringType()),
        StructField("json_values", IntegerType()),
        StructField("offset_table", MapType(StringType(), VariantType())),
        StructField("lmq_offset_table", MapType(StringType(), VariantType())),
        StructField(CORRUPT_RECORD, StringType()),
    ]
)


def _parse_json(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Spark's parse of each file, one row per file (``_PARSED_SCHEMA``)."""
    return (
        spark.read.schema(SNAPSHOT_JSON_SCHEMA)
        .options(**_JSON_OPTIONS)
        .json(paths)
        .select(normalised_path(F.col("_metadata.file_path")).alias(_PATH_KEY), "*")
        # A top-level JSON array gives several rows for one file: keep one row and the
        # count, which rejects the file.
        .groupBy(_PATH_KEY)
        .agg(
            F.count(F.lit(1)).cast(IntegerType()).alias("json_values"),
            F.first("offsetTable").alias("offset_table"),
            F.first("lmqOffsetTable").alias("lmq_offset_table"),
            F.first(CORRUPT_RECORD).alias(CORRUPT_RECORD),
        )
    )


def read_snapshot_documents(spark: SparkSession, files: list[SnapshotFile]) -> DataFrame:
    """One row per file (``DOCUMENT_COLUMNS``): its metadata and Spark's parse of it.

    ``file_size`` is null when the file is gone; ``json_values`` counts the top-level JSON
    values Spark found (0: empty or blank or unreadable, 1: a document, more: a top-level
    array); ``offset_table``/``lmq_offset_table`` map each key to its value as a variant;
    ``corrupt_record`` holds the raw text of a file that does not parse.
    """
    statuses = _statuses(spark, [f.path for f in files])
    meta = spark.createDataFrame(
        [
            (
                f.path,
                f.cluster,
                f.broker,
                f.snapshot_at,
                f.snapshot_source,
                f.document_kind,
                f.file_hash,
                s.size,
                _normalise(s.uri),
            )
            for f, s in zip(files, statuses, strict=True)
        ],
        _SNAPSHOT_META,
    )
    readable = sorted({_escape_glob(s.path) for s in statuses if s.size})
    parsed = _parse_json(spark, readable) if readable else spark.createDataFrame([], _PARSED_SCHEMA)
    return (
        meta.join(parsed, on=_PATH_KEY, how="left")
        .withColumn("json_values", F.coalesce("json_values", F.lit(0)))
        .select(*DOCUMENT_COLUMNS)
    )


_CLIENT_META = StructType(
    [
        *_FILE_META,
        StructField("snapshot_at", TimestampType(), False),
        StructField("_file_hash", StringType(), False),
        StructField("file_size", LongType(), True),
        StructField(_PATH_KEY, StringType(), False),
    ]
)


def read_whole_files(spark: SparkSession, files: list[WholeFile]) -> DataFrame:
    """One row per file (``CLIENT_FILE_COLUMNS``) with its raw bytes in ``content``.

    ``content`` is null when the file is empty, missing or unreadable (``file_size`` tells
    which). The bytes are parsed by ``pipelines.ingest.client_offsets``: no JSON reader accepts
    the JSON objects these files use as map keys.
    """
    statuses = _statuses(spark, [f.path for f in files])
    meta = spark.createDataFrame(
        [
            (f.path, f.cluster, f.snapshot_at, f.file_hash, s.size, _normalise(s.path))
            for f, s in zip(files, statuses, strict=True)
        ],
        _CLIENT_META,
    )
    readable = sorted({_escape_glob(s.path) for s in statuses if s.size})
    if not readable:
        return meta.withColumn("content", F.lit(None).cast(BinaryType())).select(*CLIENT_FILE_COLUMNS)
    contents = (
        spark.read.format("binaryFile")
        .options(ignoreMissingFiles="true", ignoreCorruptFiles="true")
        .load(readable)
        .select(normalised_path(F.col("path")).alias(_PATH_KEY), "content")
    )
    return meta.join(contents, on=_PATH_KEY, how="left").select(*CLIENT_FILE_COLUMNS)
