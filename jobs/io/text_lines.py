"""Read landed text files into one row per line, with exact line numbers, on the executors.

Spark's text source cannot say which line of its file a row was, and fails a whole job
on one corrupt ``.gz``. So text files are read by a vectorised Arrow function
(``mapInArrow``) on the executors: each file is split into lines at its newline offsets
(numpy finds them, Arrow slices the lines out of the file's bytes), its lines numbered
from 1, a trailing ``\\r`` removed (CRLF logs), and every failure becomes a row with
``read_error`` instead of an exception: a corrupt gzip stream (lines before the damage
are kept), a line that is not valid UTF-8, a file that vanished.

A source may add columns computed from each batch of lines in the same pass
(:class:`LineColumns`, e.g. commit events' vectorised pre-parse), and leave behind the
text of the lines those columns say all of. What every line of a file shares (its path,
cluster, hash, times) does not cross from the workers: a broadcast join adds it.
"""

from __future__ import annotations

import gzip
import heapq
import os
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType, TimestampType

from jobs.io.growth import FROM_START, content_blocks, is_compressed
from pipelines.ingest.quarantine import FILE_NUMBER

# a line's own read error begins so; the others are the whole file's (cannot read it, a corrupt gzip stream)
LINE_ERROR = "invalid UTF-8"

# Small files' lines leave a worker together, in batches of at least this many lines: Spark
# takes each Arrow batch from the worker at a cost of its own, and thousands of mqadmin
# outputs of some 20 lines each would be as many batches (docs/experiments.md, "Small files'
# lines in larger batches")
BATCH_LINES = 8192
TASKS_PER_CORE = 8  # read tasks per core: small enough groups to even out the cores' work

LINES_SCHEMA = StructType(
    [
        StructField("source_file", StringType(), False),
        StructField("line_no", LongType(), False),
        StructField("line", StringType(), True),
        StructField("read_error", StringType(), True),
        StructField("cluster", StringType(), False),
        StructField("broker", StringType(), True),
        StructField("event_at", TimestampType(), True),
        StructField("source_timezone", StringType(), False),
        StructField("_file_hash", StringType(), False),
    ]
)
# What a file's every line carries: the workers send its number, a broadcast join adds these.
FILE_COLUMNS = ("source_file", "cluster", "broker", "event_at", "source_timezone", "_file_hash")
FILES_SCHEMA = StructType(
    [StructField(FILE_NUMBER, LongType(), False), *[LINES_SCHEMA[c] for c in FILE_COLUMNS]]
)
# what the workers get (a file to read) and send (its lines)
TASK_SCHEMA = StructType(
    [
        StructField(FILE_NUMBER, LongType(), False),
        StructField("path", StringType(), False),
        StructField("skip_bytes", LongType(), False),
        StructField("first_line", LongType(), False),
        StructField("end_bytes", LongType(), True),
    ]
)
READ_SCHEMA = StructType(
    [
        StructField(FILE_NUMBER, LongType(), False),
        *[f for f in LINES_SCHEMA.fields if f.name not in FILE_COLUMNS],
    ]
)


@dataclass(frozen=True)
class TextFile:
    """A text file to read, with what the landing path said about it."""

    path: str
    source_file: str
    cluster: str
    broker: str | None
    event_at: datetime | None
    source_timezone: str
    file_hash: str
    # a file that grew since an earlier copy was read (jobs.io.growth): read from this byte on,
    # numbering its lines from ``first_line``
    skip_bytes: int = FROM_START.skip_bytes
    first_line: int = FROM_START.first_line
    # a plain file's size when it was found and hashed: lines written on after that are read with
    # its next copy, as the file grown (None: to its end)
    size: int | None = None


@dataclass(frozen=True)
class LineColumns:
    """Columns a source computes from a batch of lines, next to them (``compute`` returns one
    array per field of ``schema``, as long as the lines).

    ``spares_line`` names a boolean column of ``schema``: where it is true, the columns say
    all the parser needs of the line, and the line's text is not sent on (it is null, with a
    null ``read_error``). Every byte of a line would otherwise cross from the Python worker
    to Spark and be copied into Spark's row.
    """

    schema: StructType
    compute: Callable[[pa.Array], list[pa.Array]]
    spares_line: str | None = None
    # writes some lines' table rows itself (jobs.io.checked_commits): given a batch of lines with the computed
    # columns and each file number's (source_file, cluster, _file_hash), returns the lines it
    # did not write, which alone go on to Spark
    writes: Callable[[pa.RecordBatch, Mapping[int, tuple[str, str, str]]], pa.RecordBatch] | None = None

    def add(self, lines: pa.Array) -> tuple[pa.Array, list[pa.Array]]:
        """The lines as sent on, and the computed columns."""
        columns = self.compute(lines)
        if self.spares_line is None:
            return lines, columns
        spared = columns[self.schema.names.index(self.spares_line)]
        return pc.if_else(spared, pa.scalar(None, lines.type), lines), columns


def _open(path: str):
    return gzip.open(path, "rb") if is_compressed(path) else open(path, "rb")


class _Upto:
    """A plain file's handle that ends at byte ``end`` (``read1``, as content_blocks reads)."""

    def __init__(self, handle, end: int):
        self.handle, self.left = handle, end - handle.tell()

    def read1(self, n: int) -> bytes:
        piece = self.handle.read1(max(0, min(n, self.left)))
        self.left -= len(piece)
        return piece


def _chunks(path: str, skip_bytes: int = 0, end_bytes: int | None = None) -> Iterator[bytes]:
    """The file's (decompressed) bytes in large blocks, split only after a newline; a plain
    file's from byte ``skip_bytes`` on, up to byte ``end_bytes`` (its size when it was hashed).
    A damaged stream raises after the whole lines before the damage (the line it cut is not
    yielded)."""
    pending = b""
    with _open(path) as handle:
        if skip_bytes:
            handle.seek(skip_bytes)
        if end_bytes is not None and not isinstance(handle, gzip.GzipFile):
            handle = _Upto(handle, end_bytes)
        for block in content_blocks(handle):
            data = pending + block
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                continue
            pending = data[cut + 1 :]
            yield data[: cut + 1]
    if pending:
        yield pending + b"\n"


def _decode(raw: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Lines as UTF-8 strings; undecodable lines become null with an error message."""
    try:
        return raw.cast(pa.string()), pa.nulls(len(raw), pa.string())
    except pa.ArrowInvalid:
        # rare: find the offending lines one by one
        lines, errors = [], []
        for value in raw.to_pylist():
            try:
                lines.append(value.decode("utf-8"))
                errors.append(None)
            except UnicodeDecodeError as error:
                lines.append(None)
                errors.append(f"{LINE_ERROR} at byte {error.start} of the line")
        return pa.array(lines, pa.string()), pa.array(errors, pa.string())


def _batch(meta: dict, first_line: int, lines: pa.Array, errors: pa.Array) -> pa.RecordBatch:
    n = len(lines)
    return pa.RecordBatch.from_arrays(
        [
            pa.repeat(pa.scalar(meta[FILE_NUMBER], pa.int64()), n),
            pa.array(np.arange(first_line, first_line + n, dtype=np.int64)),
            lines,
            errors,
        ],
        schema=READ_ARROW_SCHEMA,
    )


def _split_lines(chunk: bytes) -> pa.Array:
    """The lines of ``chunk`` (which ends in a newline), without their ``\\n`` or ``\\r\\n``."""
    ends = np.flatnonzero(np.frombuffer(chunk, np.uint8) == ord("\n"))
    offsets = np.empty(len(ends) + 1, np.int64)
    offsets[0], offsets[1:] = 0, ends + 1
    with_newline = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(ends), [None, pa.py_buffer(offsets), pa.py_buffer(chunk)]
    )
    raw = pc.binary_slice(with_newline, 0, -1)
    if b"\r" in chunk:
        raw = pc.replace_substring_regex(raw, pattern="\r$", replacement="")
    return raw.cast(pa.binary())


def _read_file(meta: dict) -> Iterator[pa.RecordBatch]:
    next_line = meta["first_line"]
    try:
        for chunk in _chunks(meta["path"], meta["skip_bytes"], meta["end_bytes"]):
            lines, errors = _decode(_split_lines(chunk))
            yield _batch(meta, next_line, lines, errors)
            next_line += len(lines)
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        yield _batch(meta, next_line, pa.nulls(1, pa.string()), pa.array([f"corrupt gzip stream: {error}"]))
    except OSError as error:
        yield _batch(meta, next_line, pa.nulls(1, pa.string()), pa.array([f"cannot read file: {error}"]))


def _gathered(batches: Iterator[pa.RecordBatch], lines: int = BATCH_LINES) -> Iterator[pa.RecordBatch]:
    """``batches`` in order, runs of small ones concatenated into batches of at least ``lines``
    rows (a batch that size or larger passes as it is)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        pending.append(batch)
        count += batch.num_rows
        if count >= lines:
            yield _joined(pending)
            pending, count = [], 0
    if pending:
        yield _joined(pending)


def _joined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


def _read_partition(
    batches: Iterator[pa.RecordBatch],
    extra: LineColumns | None = None,
    files: Mapping[int, tuple[str, str, str]] | None = None,
) -> Iterator[pa.RecordBatch]:
    schema = None if extra is None else _arrow_schema(READ_SCHEMA.fields + extra.schema.fields)
    tasks = (meta for batch in batches for meta in batch.to_pylist())
    for lines in _gathered(piece for meta in tasks for piece in _read_file(meta)):
        if extra is None:
            yield lines
            continue
        read = lines.columns
        read[LINE], columns = extra.add(read[LINE])
        batch = pa.RecordBatch.from_arrays([*read, *columns], schema=schema)
        if extra.writes is not None:
            batch = extra.writes(batch, files or {})
        if batch.num_rows:
            yield batch


def balanced_bins(sizes: Sequence[int], bins: int) -> list[list[int]]:
    """Indices of ``sizes`` split into at most ``bins`` groups of similar total size, largest
    group first (greedy: each file, largest first, joins the lightest group)."""
    lightest_first: list[tuple[int, int, list[int]]] = [
        (0, slot, []) for slot in range(max(1, min(bins, len(sizes))))
    ]
    for index in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        total, slot, members = heapq.heappop(lightest_first)
        members.append(index)
        heapq.heappush(lightest_first, (total + sizes[index], slot, members))
    return [members for _, _, members in sorted(lightest_first, key=lambda g: -g[0]) if members]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # the reader reports it as a row with read_error


@dataclass(frozen=True)
class FileLines:
    """Lines with their file's number (``FILE_NUMBER``) in place of ``FILE_COLUMNS``, and the files
    (``FILES_SCHEMA``: the number and those columns)."""

    lines: DataFrame
    files: DataFrame

    def joined(self) -> DataFrame:
        """The lines with their file's columns (``LINES_SCHEMA``, then the computed columns)."""
        computed = [c for c in self.lines.columns if c not in READ_SCHEMA.names]
        return self.lines.join(F.broadcast(self.files), FILE_NUMBER).select(*LINES_SCHEMA.names, *computed)


def read_file_lines(
    spark: SparkSession, files: Sequence[TextFile], extra: LineColumns | None = None
) -> FileLines:
    """One row per line of ``files`` (``READ_SCHEMA``, then ``extra``'s columns), read in
    parallel by the executors, and the files' own columns by number.

    Files go to tasks in groups of similar total size, the heaviest first, so that no core
    is left reading a large share alone at the end (a task per file when there are few).
    The workers send each line with its file's number, not the file's path, cluster, hash
    and times (which would more than double a commit line's bytes).
    """
    extra_fields = extra.schema.fields if extra else []
    described = spark.createDataFrame(
        [
            (n, f.source_file, f.cluster, f.broker, f.event_at, f.source_timezone, f.file_hash)
            for n, f in enumerate(files)
        ],
        FILES_SCHEMA,
    )
    if not files:
        return FileLines(spark.createDataFrame([], StructType(READ_SCHEMA.fields + extra_fields)), described)
    tasks = [(n, f.path, f.skip_bytes, f.first_line, f.size) for n, f in enumerate(files)]
    bins = balanced_bins(
        [max(0, (_size(f.path) if f.size is None else f.size) - f.skip_bytes) for f in files],
        spark.sparkContext.defaultParallelism * TASKS_PER_CORE,
    )
    grouped = spark.sparkContext.parallelize([[tasks[i] for i in members] for members in bins], len(bins))
    listing = spark.createDataFrame(grouped.flatMap(lambda group: group), TASK_SCHEMA)
    named = (
        {n: (f.source_file, f.cluster, f.file_hash) for n, f in enumerate(files)}
        if extra and extra.writes
        else None
    )
    read = partial(_read_partition, extra=extra, files=named)
    return FileLines(listing.mapInArrow(read, StructType(READ_SCHEMA.fields + extra_fields)), described)


def read_lines(spark: SparkSession, files: Sequence[TextFile], extra: LineColumns | None = None) -> DataFrame:
    """One row per line of ``files`` (see LINES_SCHEMA, then ``extra``'s columns): the lines of
    :func:`read_file_lines`, a broadcast join of the files adding each line's file columns."""
    return read_file_lines(spark, files, extra).joined()


_ARROW_TYPES = {
    StringType: pa.string(),
    LongType: pa.int64(),
    TimestampType: pa.timestamp("us", tz="UTC"),
    BooleanType: pa.bool_(),
}


def _arrow_schema(fields: list[StructField]) -> pa.Schema:
    return pa.schema([pa.field(f.name, _ARROW_TYPES[type(f.dataType)], f.nullable) for f in fields])


READ_ARROW_SCHEMA = _arrow_schema(READ_SCHEMA.fields)
LINE = READ_SCHEMA.names.index("line")
