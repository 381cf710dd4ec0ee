"""Broadcast consumers' local ``offsets.json``: a tolerant tokenizer and its Spark side.

RocketMQ's LocalFileOffsetStore writes fastjson with whole JSON objects as map keys,
pretty-printed over lines, which no standard JSON parser accepts::

    {
        "offsetTable":{{
                        "brokerName":"broker-a",
                        "queueId":3,
                        "topic":"TopicTest"
                }:1470,{ ...
                }:1470
        }
    }

``parse_client_offsets`` reads one such text (pure Python). ``explode_client_offsets``
applies it to the rows of ``jobs.io.snapshot_files.read_whole_files`` and yields
bronze/offset_snapshots rows (``snapshot_source`` ``client_offsets``, broker from the
key's ``brokerName``, ``client_id`` and ``consumer_group`` from the path
``.../<clientIP>@<instanceName>/<group>/offsets.json``).
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from pipelines.ingest.quarantine import Parsed, first_failure, split_valid
from pipelines.ingest.snapshots import RAW_TEXT_LIMIT, offset_checks, queue_id_checks, to_snapshot_rows

MAX_DEPTH = 64
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_BARE_NAME = re.compile(r"[A-Za-z0-9_$]+")
_WHITESPACE = re.compile(r"[ \t\r\n]*")
_LITERALS = {"true": True, "false": False, "null": None}


class ClientQueueOffset(NamedTuple):
    broker: str
    topic: str
    queue_id: int
    offset: int


class ClientOffsetsFormatError(ValueError):
    """The text is not a readable offsets.json; ``position`` (0-based), ``line`` and ``column`` say where."""

    def __init__(self, message: str, text: str, position: int) -> None:
        self.position = position
        self.line = text.count("\n", 0, position) + 1
        self.column = position - (text.rfind("\n", 0, position) + 1) + 1
        super().__init__(f"{message} at line {self.line}, column {self.column}")


class _Object(list):
    """A JSON object as (key, value, key position, value position): keys may be objects."""

    def get(self, name: str, default: object = None) -> object:
        return next((member[1] for member in self if member[0] == name), default)


class _Reader:
    """Recursive descent over fastjson's output: strict JSON plus bare and object keys."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, position: int | None = None) -> ClientOffsetsFormatError:
        return ClientOffsetsFormatError(message, self.text, self.pos if position is None else position)

    def skip(self) -> str:
        self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str, what: str, also: str = "") -> None:
        if self.skip() != char:
            found = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
            wanted = f"{also!r} or {char!r}" if also else repr(char)
            raise self.fail(f"expected {wanted} {what}, found {found}")
        self.pos += 1

    def value(self, depth: int) -> object:
        char = self.skip()
        if char and char in "{[":
            return self.object(depth + 1) if char == "{" else self.array(depth + 1)
        if char == '"':
            return self.string()
        number = _NUMBER.match(self.text, self.pos)
        if number:
            text = number.group()
            try:
                value = int(text) if not (number.group(1) or number.group(2)) else float(text)
            except ValueError:  # more digits than Python reads from text (sys.get_int_max_str_digits)
                raise self.fail(f"a number of {len(text)} characters") from None
            self.pos = number.end()
            return value
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return literal
        raise self.fail("expected a JSON value" if char else "unexpected end of text")

    def string(self) -> str:
        try:
            text, self.pos = json.decoder.scanstring(self.text, self.pos + 1)  # type: ignore[attr-defined]
        except json.JSONDecodeError as error:
            raise self.fail(f"bad string: {error.msg}", error.pos) from None
        return text

    def key(self, depth: int) -> object:
        char = self.skip()
        if char == "{":
            return self.object(depth + 1)
        if char == '"':
            return self.string()
        name = _BARE_NAME.match(self.text, self.pos)
        if not name:
            raise self.fail("expected a key" if char else "unexpected end of text")
        self.pos = name.end()
        return name.group()

    def member(self, depth: int) -> tuple[object, object, int, int]:
        self.skip()
        key_at = self.pos
        key = self.key(depth)
        self.expect(":", "after a key")
        self.skip()
        value_at = self.pos
        return key, self.value(depth), key_at, value_at

    def sequence(self, close: str, item: Callable[[], object], what: str, depth: int) -> list:
        """Items up to ``close``, separated by commas; the opening bracket is at ``pos``."""
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        self.pos += 1
        items: list = []
        if self.skip() == close:
            self.pos += 1
            return items
        while True:
            items.append(item())
            if self.skip() == close:
                self.pos += 1
                return items
            self.expect(",", what, also=close)

    def object(self, depth: int) -> _Object:
        return _Object(self.sequence("}", lambda: self.member(depth), "after a member", depth))

    def array(self, depth: int) -> list[object]:
        return self.sequence("]", lambda: self.value(depth), "after an item", depth)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _message_queue(reader: _Reader, key: object, at: int) -> tuple[str, str, int]:
    if not isinstance(key, _Object):
        raise reader.fail("offsetTable key is not a MessageQueue object", at)
    broker, topic, queue_id = key.get("brokerName"), key.get("topic"), key.get("queueId")
    if not isinstance(broker, str) or not isinstance(topic, str) or not _is_int(queue_id):
        raise reader.fail("MessageQueue key needs string brokerName and topic and an integer queueId", at)
    return broker, topic, queue_id  # type: ignore[return-value]


def parse_client_offsets(text: str) -> list[ClientQueueOffset]:
    """The (broker, topic, queue id, offset) entries of an offsets.json text, in file order.

    Raises ``ClientOffsetsFormatError`` (with line and column) on anything malformed:
    bad syntax, a top level that is not an object, no ``offsetTable`` object, a key that
    is not a MessageQueue object, an offset that is not an integer. Values are returned
    as written (range checks are per entry, in ``explode_client_offsets``); a queue
    listed twice keeps its last offset, as the client itself would.
    """
    reader = _Reader(text[1:] if text.startswith("\ufeff") else text)
    if reader.skip() != "{":
        raise reader.fail("expected '{' opening the document")
    document = reader.object(1)
    if reader.skip():
        raise reader.fail("unexpected text after the document")
    table = document.get("offsetTable")
    if not isinstance(table, _Object):
        raise reader.fail("no offsetTable object in the document", 0)
    entries: dict[tuple[str, str, int], int] = {}
    for key, offset, key_at, value_at in table:
        queue = _message_queue(reader, key, key_at)
        if not _is_int(offset):
            raise reader.fail(f"offset of {queue[1]}/{queue[0]}/{queue[2]} is not an integer", value_at)
        entries[queue] = offset  # type: ignore[assignment]
    return [
        ClientQueueOffset(broker, topic, queue_id, offset)
        for (broker, topic, queue_id), offset in entries.items()
    ]


EMPTY_FILE = "empty file (0 bytes)"
MISSING_FILE = "file missing or unreadable at read time"
BLANK_FILE = "blank file: no JSON document"
GZIP_MAGIC = b"\x1f\x8b"


def parse_client_offsets_bytes(content: bytes | None) -> tuple[str | None, list[ClientQueueOffset]]:
    """(failure reason or None, entries) for one file's bytes (gzip is detected and inflated)."""
    if content is None:
        return MISSING_FILE, []
    if not content:
        return EMPTY_FILE, []
    if content.startswith(GZIP_MAGIC):
        try:
            content = gzip.decompress(content)
        except (OSError, EOFError, zlib.error) as error:
            return f"corrupt gzip stream: {error}", []
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not valid UTF-8 text (byte {error.start})", []
    if not text.strip():
        return BLANK_FILE, []
    try:
        return None, parse_client_offsets(text)
    except ClientOffsetsFormatError as error:
        return f"malformed offsets.json: {error}", []


BAD_PATH = "path does not end in <clientIP>@<instanceName>/<group>/offsets.json[.bak]"
EMPTY_BROKER = "MessageQueue brokerName is empty"
EMPTY_TOPIC = "MessageQueue topic is empty"
DUPLICATE_BAK = "byte-identical to offsets.json"
SUPERSEDED_BAK = "offsets.json parsed; the .bak holds its previous write"
_PATH = r"/([^/]+@[^/]+)/([^/]+)/offsets\.json(\.bak)?(\.gz)?$"
_ENTRY = StructType(
    [StructField(name, StringType()) for name in ("broker", "topic", "queue_text", "offset_json")]
)
_PARSE_RESULT = StructType([StructField("failure", StringType()), StructField("entries", ArrayType(_ENTRY))])


def client_directory(path: Column) -> Column:
    """The directory of a client offsets file (``.../<clientIP>@<instance>/<group>`` under its
    landing time): its ``offsets.json`` and ``offsets.json.bak`` hold one client's state at one instant."""
    return F.regexp_replace(path, r"/offsets\.json(\.bak)?(\.gz)?$", "")


def is_bak(path: Column) -> Column:
    """Whether a client offsets file is the ``.bak`` (the write before the main file's)."""
    return F.regexp_extract(path, _PATH, 3) != ""


@F.pandas_udf(_PARSE_RESULT)  # type: ignore[call-overload]
def _parse_contents(contents: pd.Series) -> pd.DataFrame:
    # A vectorised UDF because no Spark JSON reader accepts JSON objects as map keys: the
    # tokenizer is unavoidable, and Arrow batches keep its per-file overhead small.
    failures, entries = [], []
    for content in contents:
        failure, parsed = parse_client_offsets_bytes(None if content is None else bytes(content))
        failures.append(failure)
        entries.append(
            [
                {
                    "broker": e.broker,
                    "topic": e.topic,
                    "queue_text": str(e.queue_id),
                    "offset_json": str(e.offset),
                }
                for e in parsed
            ]
        )
    return pd.DataFrame({"failure": failures, "entries": entries})


@dataclass(frozen=True)
class ClientOffsets:
    """Parsed rows, and the files not ingested (``source_file``, ``_file_hash``, ``status``, ``status_reason``)."""

    parsed: Parsed
    skipped: DataFrame


def explode_client_offsets(files: DataFrame) -> ClientOffsets:
    """bronze/offset_snapshots rows from client offsets files (``read_whole_files`` rows).

    Per client directory and snapshot time the main ``offsets.json`` is used; its
    ``.bak`` only when the main file is missing, empty or unparseable. A .bak not used
    is listed in ``skipped`` (``duplicate`` when byte-identical to the main file).
    A malformed file is one rejected row; an entry with a queue id or offset out of
    range is rejected alone.
    """
    path = F.col("source_file")
    tagged = files.withColumns(
        {
            "client_id": F.regexp_extract(path, _PATH, 1),
            "consumer_group": F.regexp_extract(path, _PATH, 2),
            "_is_bak": is_bak(path),
            "_client_dir": client_directory(path),
            "_parsed": _parse_contents("content"),
        }
    ).withColumn(
        "_failure",
        F.when(~path.rlike(_PATH), F.lit(BAD_PATH))
        .when(F.col("file_size").isNull(), F.lit(MISSING_FILE))
        .when(F.col("file_size") == 0, F.lit(EMPTY_FILE))
        .otherwise(F.col("_parsed.failure")),
    )
    directory = (
        Window.partitionBy("cluster", "snapshot_at", "_client_dir")
        .orderBy("_is_bak", "source_file")
        .rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    )
    is_main = ~F.col("_is_bak")
    tagged = tagged.withColumns(
        {
            "_use": is_main | ~F.max(is_main & F.col("_failure").isNull()).over(directory),
            "_main_hashes": F.collect_set(F.when(is_main, F.col("_file_hash"))).over(directory),
        }
    )
    same_bytes = F.array_contains("_main_hashes", F.col("_file_hash"))
    skipped = tagged.where(~F.col("_use")).select(
        "source_file",
        "_file_hash",
        F.when(same_bytes, F.lit("duplicate")).otherwise(F.lit("skipped")).alias("status"),
        F.when(same_bytes, F.lit(DUPLICATE_BAK)).otherwise(F.lit(SUPERSEDED_BAK)).alias("status_reason"),
    )
    used = tagged.where(F.col("_use")).withColumns(
        {
            "snapshot_source": F.lit("client_offsets"),
            "line_no": F.lit(None).cast("long"),
        }
    )
    raw_text = F.substring(F.make_valid_utf8(F.col("content").cast("string")), 1, RAW_TEXT_LIMIT)
    files_split = split_valid(used, F.col("_failure"), raw_text, list(used.columns))
    return ClientOffsets(parsed=_entries(files_split), skipped=skipped)


def _entries(files_split: Parsed) -> Parsed:
    entries = (
        files_split.landed.select(
            "cluster",
            "snapshot_at",
            "snapshot_source",
            "source_file",
            "_file_hash",
            "line_no",
            "client_id",
            "consumer_group",
            F.explode("_parsed.entries").alias("entry"),
        )
        .select("*", "entry.*")
        .drop("entry")
    )
    reason = first_failure(
        (F.length("broker") > 0, EMPTY_BROKER),
        (F.length("topic") > 0, EMPTY_TOPIC),
        *queue_id_checks(F.col("queue_text")),
        *offset_checks(F.col("offset_json")),
    )
    raw = F.format_string(
        '{"brokerName":"%s","queueId":%s,"topic":"%s"}:%s', "broker", "queue_text", "topic", "offset_json"
    )
    checked = split_valid(entries, reason, raw, list(entries.columns))
    return Parsed(
        landed=to_snapshot_rows(checked.landed),
        rejected=files_split.rejected.unionByName(checked.rejected),
    )
