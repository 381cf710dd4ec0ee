"""Build "lines" DataFrames (the reader's contract) for parser tests.

One row per physical line: ``source_file, line_no, line, read_error, cluster, broker,
event_at, source_timezone, _file_hash``. ``lines_of_file`` splits a fixture file the way
the reader does (decompress ``.gz``, split on ``\\n``, strip one trailing ``\\r``).
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

LINES_SCHEMA = StructType(
    [
        StructField("source_file", StringType(), False),
        StructField("line_no", LongType(), False),
        StructField("line", StringType(), True),
        StructField("read_error", StringType(), True),
        StructField("cluster", StringType(), True),
        StructField("broker", StringType(), True),
        StructField("event_at", TimestampType(), True),
        StructField("source_timezone", StringType(), True),
        StructField("_file_hash", StringType(), False),
    ]
)

BROKEN_LINES = Path(__file__).resolve().parents[2] / "fixtures" / "broken" / "lines"

# A line given as ``(None, "reason")`` stands for a line the reader could not decode.
Line = str | tuple[None, str]


def line_rows(
    lines: list[Line],
    *,
    source_file: str = "landing/f.txt",
    cluster: str = "c1",
    broker: str | None = "broker-a",
    event_at: datetime | None = None,
    source_timezone: str = "Asia/Shanghai",
    file_hash: str | None = None,
) -> list[tuple]:
    """Rows of ``LINES_SCHEMA`` for one file; line numbers start at 1."""
    rows = []
    for number, item in enumerate(lines, start=1):
        text, error = (item, None) if isinstance(item, str) else item
        rows.append(
            (
                source_file,
                number,
                text,
                error,
                cluster,
                broker,
                event_at,
                source_timezone,
                file_hash or f"h-{source_file}",
            )
        )
    return rows


def lines_frame(spark: SparkSession, lines: list[Line], **options) -> DataFrame:
    """A lines DataFrame for one file (options as ``line_rows``)."""
    return spark.createDataFrame(line_rows(lines, **options), LINES_SCHEMA)


def files_frame(spark: SparkSession, files: dict[str, list[Line]], **options) -> DataFrame:
    """One lines DataFrame holding several files, keyed by ``source_file``."""
    rows = [row for name, lines in files.items() for row in line_rows(lines, source_file=name, **options)]
    return spark.createDataFrame(rows, LINES_SCHEMA)


def split_text(data: bytes) -> list[Line]:
    """Physical lines of a file, as ``jobs.io.text_lines`` yields them; an undecodable line is ``(None, reason)``."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    lines: list[Line] = []
    for part in parts:
        part = part[:-1] if part.endswith(b"\r") else part
        try:
            lines.append(part.decode("utf-8"))
        except UnicodeDecodeError as error:  # the reader's message for such a line
            lines.append((None, f"invalid UTF-8 at byte {error.start} of the line"))
    return lines


def read_lines(path: Path) -> list[Line]:
    """The lines of a fixture file (``.gz`` decompressed)."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return split_text(data)


def lines_of_file(spark: SparkSession, path: Path, **options) -> DataFrame:
    """The lines DataFrame of a fixture file; ``source_file`` defaults to its name."""
    options.setdefault("source_file", path.name)
    return lines_frame(spark, read_lines(path), **options)


def sorted_rows(rows: list[tuple]) -> list[tuple]:
    """Rows in a stable order (None sorts first) so whole-row lists compare equal."""
    return sorted(rows, key=lambda row: tuple((0,) if v is None else (1, v) for v in row))


def rows_of(frame: DataFrame, *columns: str) -> list[tuple]:
    """Selected columns of every row as tuples, in ``sorted_rows`` order."""
    return sorted_rows([tuple(row[c] for c in columns) for row in frame.select(*columns).collect()])


def broken_reasons(kind: str) -> dict[str, str]:
    """``{"<kind>/<file>": reason}`` for the broken-input corpus of one parser."""
    reasons = json.loads((BROKEN_LINES / "reasons.json").read_text(encoding="utf-8"))
    return {name: reason for name, reason in reasons.items() if name.startswith(f"{kind}/")}


def broken_files_on_disk(kind: str) -> set[str]:
    return {f"{kind}/{path.name}" for path in (BROKEN_LINES / kind).iterdir()}


def broken_lines(spark: SparkSession, kind: str, **options) -> DataFrame:
    """The lines of every corpus file of ``kind``; ``source_file`` is ``<kind>/<file>``."""
    files = {name: read_lines(BROKEN_LINES / name) for name in sorted(broken_reasons(kind))}
    return files_frame(spark, files, **options)


def with_line_columns(spark: SparkSession, lines: DataFrame, extra) -> DataFrame:
    """``lines`` with ``extra``'s columns (a ``jobs.io.text_lines.LineColumns``), computed per file
    in line order, as the reader adds them to each batch it reads."""
    import pyarrow as pa

    by_file: dict[str, list] = {}
    for r in sorted(lines.collect(), key=lambda r: (r.source_file, r.line_no)):
        by_file.setdefault(r.source_file, []).append(r)
    out = []
    line = lines.columns.index("line")
    for of_file in by_file.values():
        sent, columns = extra.add(pa.array([r.line for r in of_file], pa.string()))
        out.extend(
            tuple(r)[:line] + (sent[i].as_py(),) + tuple(r)[line + 1 :] + tuple(c[i].as_py() for c in columns)
            for i, r in enumerate(of_file)
        )
    return spark.createDataFrame(out, StructType(lines.schema.fields + extra.schema.fields))
