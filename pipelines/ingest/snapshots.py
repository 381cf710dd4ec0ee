"""Explode broker offset snapshots (consumerOffset.json and kin) into bronze rows.

Input: the documents frame of ``jobs.io.snapshot_files.read_snapshot_documents``, one row
per file, where every table value is a variant (so one bad entry is rejected alone).
Output: ``Parsed`` with bronze/offset_snapshots (or bronze/delay_offsets) columns, less
``_ingest_run_id`` and the date partition column, which the job adds.

``snapshot_source`` names the file the row came from: ``main`` / ``bak`` for
consumerOffset.json and its .bak, ``lmq`` / ``lmq_bak`` for lmqConsumerOffset.json and
its .bak (a broker with LMQ enabled writes only the latter, so a stale consumerOffset.json
beside it cannot collide with it). ``lmqOffsetTable`` entries have no queue level and land
with ``queue_id`` 0.

Records: one per (key, queue) entry; a key rejected as a whole (no ``@``, queue map not an
object) is one record; a rejected file is one record.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipelines.ingest.quarantine import Parsed, first_failure, rejections, split_valid, union_parsed
from pipelines.keys import group_of_key, key_kind, topic_of_key
from schemas.tables import DELAY_OFFSETS, OFFSET_SNAPSHOTS, SNAPSHOT_FILES

SNAPSHOT_COLUMNS = [c for c in OFFSET_SNAPSHOTS.columns if c not in ("_ingest_run_id", "snapshot_date")]
DELAY_COLUMNS = [c for c in DELAY_OFFSETS.columns if c != "_ingest_run_id"]
RAW_TEXT_LIMIT = 1 << 20  # characters of a rejected file's text kept in quarantine
MAX_SAFE_OFFSET = 1 << 53  # offsets beyond this lose precision in JSON consumers and doubles

MISSING_FILE = "file missing at read time"
EMPTY_FILE = "empty file (0 bytes)"
BINARY_CONTENT = "binary content (NUL bytes), not a JSON document"
INVALID_UTF8 = "not valid UTF-8 text"
MALFORMED_JSON = "not parseable: malformed or truncated JSON, a table that is not a JSON object, or a queue id twice in one map"
NO_DOCUMENT = (
    "no JSON object in the file: blank text, an empty array, or unreadable (e.g. a corrupt gzip stream)"
)
TOP_LEVEL_ARRAY = "several JSON objects in a top-level array; a snapshot is one JSON object"
NO_OFFSET_TABLE = "no offsetTable (or lmqOffsetTable) object in the document"
# why a whole document is rejected (document_failure), as opposed to one of its entries
DOCUMENT_REASONS = (
    MISSING_FILE,
    EMPTY_FILE,
    BINARY_CONTENT,
    INVALID_UTF8,
    MALFORMED_JSON,
    NO_DOCUMENT,
    TOP_LEVEL_ARRAY,
    NO_OFFSET_TABLE,
)
DUPLICATE_KEY = "key occurs more than once in the table"
DUPLICATE_QUEUE_ID = "queue id occurs more than once in the key's queue map"
KEY_WITHOUT_AT = "key has no '@' between topic and group"
EMPTY_TOPIC = "key has an empty topic"
EMPTY_GROUP = "key has an empty group"
QUEUE_MAP_NULL = "queue map is null"
QUEUE_MAP_NOT_OBJECT = "queue map is not a JSON object"
BAD_QUEUE_ID = "queue id is not an integer in [0, 65536)"
BAD_DELAY_LEVEL = "delay level is not an integer in [1, 65536)"
OFFSET_NULL = "offset is null"
OFFSET_STRING = "offset is a JSON string, not an integer"
OFFSET_NOT_INTEGER = "offset is not an integer"
OFFSET_NEGATIVE = "offset is negative"
OFFSET_TOO_LARGE = "offset is not below 2^53"

_META = ("cluster", "broker", "snapshot_at", "snapshot_source", "source_file", "_file_hash")

# How the broker's fastjson writes and reads these files, for Spark's JSON parser: queue ids as bare
# integers ({0:250}), and 007 read as 7, so one such value does not make the whole file unparseable.
FASTJSON_OPTIONS = {"allowUnquotedFieldNames": "true", "allowNumericLeadingZeros": "true"}
# A queue id twice in one queue map makes the reader's variant parse refuse the whole document
# (a variant holds an object's key once). Such a document is parsed again from its text with the
# queue maps as maps, which keep both entries, so that only that queue's entries are rejected; a
# parse that fails anywhere else (_PARSE_FAILURE) leaves the document refused.
_PARSE_FAILURE = "_parse_failure"
_QUEUE_MAPS_SCHEMA = (
    "struct<offsetTable: map<string, map<string, variant>>, lmqOffsetTable: map<string, variant>, "
    f"{_PARSE_FAILURE}: string>"
)
_QUEUE_MAPS_OPTIONS = {**FASTJSON_OPTIONS, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": _PARSE_FAILURE}
QUEUE_MAPS = "_queue_maps"


# A snapshot of one document: the files of the same broker, instant and kind (main and .bak).
SNAPSHOT_IDENTITY = ("cluster", "broker", "snapshot_at", "document_kind")
SNAPSHOT_FILE_COLUMNS = [c for c in SNAPSHOT_FILES.columns if c != "_ingest_run_id"]
REPLAYED_SELECTIONS = ("main", "bak_fallback")
# an earlier version of a snapshot path that landed again with other content (select_snapshot_documents)
SUPERSEDED = "_superseded"


@dataclass(frozen=True)
class SnapshotSelection:
    """The .bak rule applied (see :func:`select_snapshot_documents`).

    ``ingest``: the documents to explode; ``skipped``: the byte-identical .bak files, not
    ingested (``source_file``, ``_file_hash``, ``status`` 'duplicate', ``status_reason``);
    ``files``: bronze/snapshot_files rows (less ``_ingest_run_id``) of every file of the
    snapshots the documents belong to, earlier ones included: a decision that changes with a
    file that lands later is stored again.
    """

    ingest: DataFrame
    skipped: DataFrame
    files: DataFrame


def with_queue_maps(documents: DataFrame) -> DataFrame:
    """Documents with ``QUEUE_MAPS``: an offsets document (consumer_offsets or lmq) the variant parse
    refused, parsed again from its text with every queue map as a map (``_QUEUE_MAPS_SCHEMA``); null
    for every other document, and for one that this parse refuses too, even in part (Spark keeps
    the fields it could parse of a record it refuses)."""
    corrupt = F.col("corrupt_record")
    again = F.from_json(corrupt, _QUEUE_MAPS_SCHEMA, _QUEUE_MAPS_OPTIONS)
    refused = F.col("document_kind").isin("consumer_offsets", "lmq") & corrupt.isNotNull()
    parsed = again.getField("offsetTable").isNotNull() & again.getField(_PARSE_FAILURE).isNull()
    return documents.withColumn(QUEUE_MAPS, F.when(refused & F.is_valid_utf8(corrupt) & parsed, again))


def document_failure() -> Column:
    """Why a whole document is rejected (null: it can be exploded). Needs documents columns and
    ``QUEUE_MAPS`` (``with_queue_maps``)."""
    corrupt = F.col("corrupt_record")
    parsed_again = F.col(QUEUE_MAPS).isNotNull()
    return first_failure(
        (F.col("file_size").isNotNull(), MISSING_FILE),
        (F.col("file_size") > 0, EMPTY_FILE),
        (corrupt.isNull() | ~corrupt.contains("\u0000"), BINARY_CONTENT),
        (corrupt.isNull() | F.is_valid_utf8(corrupt), INVALID_UTF8),
        (corrupt.isNull() | parsed_again, MALFORMED_JSON),
        (F.col("json_values") > 0, NO_DOCUMENT),
        (F.col("json_values") == 1, TOP_LEVEL_ARRAY),
        (
            F.col("offset_table").isNotNull() | F.col("lmq_offset_table").isNotNull() | parsed_again,
            NO_OFFSET_TABLE,
        ),
    )


def queue_id_checks(queue_text: Column) -> list[tuple[Column, str]]:
    """A queue id is written as a decimal integer without leading zeros, below 65536."""
    return [(queue_text.rlike(r"^(0|[1-9][0-9]{0,4})$") & (queue_text.try_cast("int") < 65536), BAD_QUEUE_ID)]


def offset_checks(offset_json: Column) -> list[tuple[Column, str]]:
    """An offset, given as its JSON text (``250``, ``"250"``, ``1.5``, ``null``), is an integer in [0, 2^53)."""
    return [
        (offset_json.isNotNull() & (offset_json != "null"), OFFSET_NULL),
        (~offset_json.startswith('"'), OFFSET_STRING),
        (offset_json.rlike(r"^-?[0-9]+$"), OFFSET_NOT_INTEGER),
        (~offset_json.startswith("-"), OFFSET_NEGATIVE),
        ((F.length(offset_json) <= 16) & (offset_json.try_cast("long") < MAX_SAFE_OFFSET), OFFSET_TOO_LARGE),
    ]


def key_checks(key: Column) -> list[tuple[Column, str]]:
    """A ``topic@group`` key occurs once and splits on its first ``@`` into two non-empty parts."""
    return [
        (~F.col("is_duplicate_key"), DUPLICATE_KEY),
        (F.instr(key, "@") > 0, KEY_WITHOUT_AT),
        (F.length(topic_of_key(key)) > 0, EMPTY_TOPIC),
        (F.length(group_of_key(key)) > 0, EMPTY_GROUP),
    ]


def with_snapshot_columns(entries: DataFrame) -> DataFrame:
    """``entries`` with the typed columns of bronze/offset_snapshots: ``key_kind``, ``queue_id``
    and ``offset`` (null where the text is not one). Needs ``topic``, ``consumer_group``,
    ``queue_text`` and ``offset_json``."""
    return entries.withColumns(
        {
            "key_kind": key_kind(F.col("topic"), F.col("consumer_group")),
            "queue_id": F.col("queue_text").try_cast("int"),
            "offset": F.col("offset_json").try_cast("long"),
        }
    )


def to_snapshot_rows(entries: DataFrame) -> DataFrame:
    """Final bronze/offset_snapshots columns from validated entries.

    Needs ``_META``, ``line_no``, ``topic``, ``consumer_group``, ``queue_text``,
    ``offset_json`` and ``client_id``.
    """
    return with_snapshot_columns(entries).select(*SNAPSHOT_COLUMNS)


def _duplicated_keys(sorted_keys: Column) -> Column:
    """Keys present more than once in a map read from JSON (Spark keeps both entries),
    given the map's keys sorted, as a column of their own."""
    return F.array_distinct(
        F.filter(sorted_keys, lambda key, i: (i > 0) & (key == F.get(sorted_keys, i - 1)))
    )


def _table_entries(documents: DataFrame, table: str, name: str) -> DataFrame:
    """One row per (file, key) of a table: ``_META``, ``line_no``, ``<name>``, ``value``
    (variant) and ``is_duplicate_key``."""
    # The keys are sorted once per document, in a column of their own, and scanned before
    # the explode: inlined into the lambda or beside the explode they would be recomputed
    # for every key.
    with_duplicates = documents.withColumn("_sorted_keys", F.array_sort(F.map_keys(table))).withColumn(
        "_duplicated", _duplicated_keys(F.col("_sorted_keys"))
    )
    return with_duplicates.select(
        *_META,
        F.lit(None).cast("long").alias("line_no"),
        "_duplicated",
        F.explode(table).alias(name, "value"),
    ).select(
        *_META,
        "line_no",
        name,
        "value",
        F.array_contains("_duplicated", F.col(name)).alias("is_duplicate_key"),
    )


def _queue_maps(healthy: DataFrame) -> DataFrame:
    """One row per (file, key) of the offsetTable: ``_META``, ``line_no``, ``key``,
    ``is_duplicate_key``, ``queue_map`` (null when the value is not an object), ``value_json``,
    ``is_null`` and ``repeated_queues`` (the queue ids the map holds more than once)."""
    columns = [*_META, "line_no", "key", "is_duplicate_key"]
    parsed = _table_entries(healthy.where(F.col(QUEUE_MAPS).isNull()), "offset_table", "key").select(
        *columns,
        F.try_variant_get("value", "$", "map<string,variant>").alias("queue_map"),
        F.to_json("value").alias("value_json"),
        (F.col("value").isNull() | F.is_variant_null("value")).alias("is_null"),
        F.array().cast("array<string>").alias("repeated_queues"),
    )
    again = healthy.where(F.col(QUEUE_MAPS).isNotNull()).withColumn(
        "_offset_table", F.col(QUEUE_MAPS).getField("offsetTable")
    )
    parsed_again = (
        _table_entries(again, "_offset_table", "key")
        .withColumn("_queues", F.array_sort(F.map_keys("value")))
        .select(
            *columns,
            F.col("value").alias("queue_map"),
            F.to_json("value").alias("value_json"),
            F.col("value").isNull().alias("is_null"),
            F.coalesce(_duplicated_keys(F.col("_queues")), F.array()).alias("repeated_queues"),
        )
    )
    return parsed.unionByName(parsed_again)


def _offset_table_rows(healthy: DataFrame) -> Parsed:
    """The offsetTable's entries, and its keys rejected whole (one record each), in one split: a
    cache of the split then holds both, and the queue maps are exploded once."""
    keys = _queue_maps(healthy)
    value_json = F.coalesce(F.col("value_json"), F.lit("null"))
    key_reason = first_failure(
        *key_checks(F.col("key")),
        (~F.col("is_null"), QUEUE_MAP_NULL),
        (F.col("queue_map").isNotNull(), QUEUE_MAP_NOT_OBJECT),
    )
    key_rejected = F.col("_key_reason").isNotNull()
    entries = (
        keys.withColumn("_key_reason", key_reason)
        .select(
            *_META,
            "line_no",
            "key",
            "repeated_queues",
            "_key_reason",
            F.when(key_rejected, F.concat(F.lit('"'), F.col("key"), F.lit('":'), value_json)).alias(
                "_raw_key"
            ),
            # a key rejected whole keeps one row, without a queue; a key's empty map has no entry
            F.explode_outer(F.when(~key_rejected, F.col("queue_map"))).alias("queue_text", "value"),
        )
        .where(key_rejected | F.col("queue_text").isNotNull())
        .withColumn("offset_json", F.to_json("value"))
    )
    entry_reason = first_failure(
        (~F.array_contains("repeated_queues", F.col("queue_text")), DUPLICATE_QUEUE_ID),
        *queue_id_checks(F.col("queue_text")),
        *offset_checks(F.col("offset_json")),
    )
    raw_entry = F.concat(
        F.lit('"'),
        F.col("key"),
        F.lit('":{'),
        F.col("queue_text"),
        F.lit(":"),
        F.coalesce("offset_json", F.lit("null")),
        F.lit("}"),
    )
    return split_valid(
        _with_key_parts(entries),
        F.coalesce(F.col("_key_reason"), entry_reason),
        F.when(key_rejected, F.col("_raw_key")).otherwise(raw_entry),
        SNAPSHOT_COLUMNS,
    )


def _lmq_table_rows(healthy: DataFrame) -> Parsed:
    entries = (
        _table_entries(healthy, "lmq_offset_table", "key")
        .withColumn("offset_json", F.to_json("value"))
        .withColumn("queue_text", F.lit("0"))
    )
    reason = first_failure(*key_checks(F.col("key")), *offset_checks(F.col("offset_json")))
    raw = F.concat(F.lit('"'), F.col("key"), F.lit('":'), F.coalesce("offset_json", F.lit("null")))
    return split_valid(_with_key_parts(entries), reason, raw, SNAPSHOT_COLUMNS)


def _with_key_parts(entries: DataFrame) -> DataFrame:
    """``entries`` with every bronze/offset_snapshots column, computed before the split so that
    the landed rows are a filter of its tagged frame."""
    return with_snapshot_columns(
        entries.withColumns(
            {
                "topic": topic_of_key(F.col("key")),
                "consumer_group": group_of_key(F.col("key")),
                "client_id": F.lit(None).cast("string"),
            }
        )
    )


def _split_documents(documents: DataFrame, kinds: tuple[str, ...]) -> tuple[DataFrame, DataFrame]:
    """(healthy documents of ``kinds``, their file-level rejections)."""
    raw = F.substring(F.make_valid_utf8(F.col("corrupt_record")), 1, RAW_TEXT_LIMIT)
    tagged = with_queue_maps(documents.where(F.col("document_kind").isin(*kinds))).withColumn(
        "line_no", F.lit(None).cast("long")
    )
    parts = split_valid(tagged, document_failure(), raw, list(tagged.columns))
    return parts.landed, parts.rejected


def explode_snapshots(documents: DataFrame) -> Parsed:
    """Rows of bronze/offset_snapshots from consumer_offsets and lmq documents.

    Delay-offset documents in the input are ignored here (see ``explode_delay_offsets``).
    A bad file, key or entry becomes a rejected row; the rest of its file lands.
    """
    healthy, rejected_files = _split_documents(documents, ("consumer_offsets", "lmq"))
    healthy = healthy.withColumn(
        "lmq_offset_table", F.coalesce("lmq_offset_table", F.col(QUEUE_MAPS).getField("lmqOffsetTable"))
    )
    lmq_file = F.col("document_kind") == "lmq"
    healthy = healthy.withColumn(
        "snapshot_source",
        F.when(lmq_file & (F.col("snapshot_source") == "bak"), F.lit("lmq_bak"))
        .when(lmq_file, F.lit("lmq"))
        .otherwise(F.col("snapshot_source")),
    )
    offsets = _offset_table_rows(healthy)
    # a cache keeps each part's split whole (Parsed.cached), so that the entries are exploded once
    # for the rows that land and those rejected; the files rejected whole are cached apart
    return union_parsed([offsets, _lmq_table_rows(healthy), rejections(rejected_files, offsets.landed)])


def explode_delay_offsets(documents: DataFrame) -> Parsed:
    """Rows of bronze/delay_offsets from delay_offsets documents (keys are delay levels).

    Other documents in the input are ignored here (see ``explode_snapshots``).
    """
    healthy, rejected_files = _split_documents(documents, ("delay_offsets",))
    levels = _table_entries(healthy, "offset_table", "level_text").withColumn(
        "offset_json", F.to_json("value")
    )
    level = F.col("level_text")
    reason = first_failure(
        (~F.col("is_duplicate_key"), DUPLICATE_KEY),
        (level.rlike(r"^[1-9][0-9]{0,4}$") & (level.try_cast("int") < 65536), BAD_DELAY_LEVEL),
        *offset_checks(F.col("offset_json")),
    )
    raw = F.concat(level, F.lit(":"), F.coalesce("offset_json", F.lit("null")))
    checked = split_valid(levels, reason, raw, [*_META, "line_no", "level_text", "offset_json"])
    landed = checked.landed.select(
        *[c for c in _META if c not in ("source_file", "_file_hash")],
        level.try_cast("int").alias("delay_level"),
        F.col("offset_json").try_cast("long").alias("offset"),
        "source_file",
        "line_no",
        "_file_hash",
    ).select(*DELAY_COLUMNS)
    return Parsed(landed=landed, rejected=rejected_files.unionByName(checked.rejected))


def snapshot_files(documents: DataFrame) -> DataFrame:
    """One bronze/snapshot_files row per document (less ``selection`` and ``is_replayed``):
    its snapshot, role, hash, and why it was rejected as a whole (``document_status``, null
    when the document is healthy, even with an empty table or every entry rejected)."""
    return with_queue_maps(documents).select(
        *SNAPSHOT_IDENTITY,
        "snapshot_source",
        "source_file",
        "_file_hash",
        document_failure().alias("document_status"),
    )


def select_snapshot_files(files: DataFrame) -> DataFrame:
    """The .bak rule, decided once per snapshot (cluster, broker, snapshot_at, document_kind)
    over its files' rows (:func:`snapshot_files`): adds ``selection`` and ``is_replayed``.

    The main file is always ``main`` (a broken one yields its rejection). A .bak is
    ``bak_duplicate`` when byte-identical to a main file (not ingested), ``bak_fallback`` when
    no main file is healthy (missing, empty, corrupt), ``bak_older`` (the previous write, an
    older snapshot) otherwise. The replay replays ``main`` and ``bak_fallback`` files.
    Identity is (cluster, broker, time): two brokers with identical files are two snapshots.
    A row whose ``_superseded`` column is true (when ``files`` has one) is an earlier version
    of a path that landed again with other content: ``superseded``, never replayed, and left
    out of the rule (see :func:`select_snapshot_documents`).

        broker  file                     hash  healthy            ->  selection
        a       consumerOffset.json      h1    yes                    main
        a       consumerOffset.json.bak  h1    yes                    bak_duplicate
        b       consumerOffset.json      h1    yes (empty table)      main
        b       consumerOffset.json.bak  h0    yes                    bak_older
        c       consumerOffset.json      h2    no (0 bytes)           main
        c       consumerOffset.json.bak  h3    yes                    bak_fallback
    """
    snapshot = Window.partitionBy(*SNAPSHOT_IDENTITY).rowsBetween(
        Window.unboundedPreceding, Window.unboundedFollowing
    )
    superseded = F.col(SUPERSEDED) if SUPERSEDED in files.columns else F.lit(False)
    is_main = (F.col("snapshot_source") == "main") & ~superseded
    tagged = files.withColumns(
        {
            "_main_hashes": F.collect_set(F.when(is_main, F.col("_file_hash"))).over(snapshot),
            "_has_healthy_main": F.max(is_main & F.col("document_status").isNull()).over(snapshot),
        }
    )
    selection = (
        F.when(superseded, F.lit("superseded"))
        .when(is_main, F.lit("main"))
        .when(F.array_contains("_main_hashes", F.col("_file_hash")), F.lit("bak_duplicate"))
        .when(~F.col("_has_healthy_main"), F.lit("bak_fallback"))
        .otherwise(F.lit("bak_older"))
    )
    decided = tagged.withColumn("selection", selection).withColumn(
        "is_replayed", F.col("selection").isin(*REPLAYED_SELECTIONS)
    )
    return decided.withColumn("snapshot_date", F.to_date("snapshot_at")).select(*SNAPSHOT_FILE_COLUMNS)


def select_snapshot_documents(documents: DataFrame, earlier: DataFrame | None = None) -> SnapshotSelection:
    """Apply the .bak rule (:func:`select_snapshot_files`) to ``documents`` and, for the
    snapshots they belong to, to the files ``earlier`` (bronze/snapshot_files rows of files
    landed before) says landed already: a .bak that landed alone is replayed in place of its
    main file until the main file lands.

    A snapshot is the broker's table at one instant: a path that lands again with other
    content replaces what it said, and its earlier version is ``superseded`` (kept in bronze,
    no longer replayed; once superseded, always)."""
    batch = snapshot_files(documents).withColumn(SUPERSEDED, F.lit(False))
    if earlier is not None:
        touched = earlier.join(
            batch.select(*SNAPSHOT_IDENTITY).distinct(), on=list(SNAPSHOT_IDENTITY), how="left_semi"
        )
        before = touched.join(
            batch.select("source_file", "_file_hash"), on=["source_file", "_file_hash"], how="left_anti"
        )
        rewritten = F.broadcast(batch.select("source_file", F.lit(True).alias("_rewritten")).distinct())
        before = before.join(rewritten, on="source_file", how="left").withColumn(
            SUPERSEDED, F.coalesce("_rewritten", F.lit(False)) | (F.col("selection") == "superseded")
        )
        batch = batch.unionByName(before.select(*batch.columns))
    files = select_snapshot_files(batch)
    mine = files.join(
        documents.select("source_file", "_file_hash"), on=["source_file", "_file_hash"], how="left_semi"
    )
    chosen = mine.where(F.col("selection") != "bak_duplicate").select("source_file", "_file_hash")
    duplicates = mine.where(F.col("selection") == "bak_duplicate")
    mains = files.where(F.col("snapshot_source") == "main").select(
        *SNAPSHOT_IDENTITY, F.col("source_file").alias("_main_file"), F.col("_file_hash")
    )
    return SnapshotSelection(
        ingest=documents.join(chosen, on=["source_file", "_file_hash"], how="left_semi").select(
            *documents.columns
        ),
        skipped=duplicates.join(mains, on=[*SNAPSHOT_IDENTITY, "_file_hash"], how="left").select(
            "source_file",
            "_file_hash",
            F.lit("duplicate").alias("status"),
            F.concat(F.lit("byte-identical to "), F.col("_main_file")).alias("status_reason"),
        ),
        files=files,
    )


def records_per_file(files: DataFrame, parsed: Parsed) -> DataFrame:
    """Record accounting per input file: ``source_file``, ``_file_hash``, ``records_read``,
    ``records_landed``, ``records_quarantined`` (0 for a file that yielded nothing)."""
    file_key = ["source_file", "_file_hash"]
    landed = parsed.landed.groupBy(*file_key).agg(F.count(F.lit(1)).alias("records_landed"))
    rejected = parsed.rejected.groupBy(*file_key).agg(F.count(F.lit(1)).alias("records_quarantined"))
    counts = (
        files.select(*file_key)
        .join(landed, on=file_key, how="left")
        .join(rejected, on=file_key, how="left")
        .withColumns(
            {
                "records_landed": F.coalesce("records_landed", F.lit(0)),
                "records_quarantined": F.coalesce("records_quarantined", F.lit(0)),
            }
        )
    )
    return counts.select(
        *file_key,
        (F.col("records_landed") + F.col("records_quarantined")).alias("records_read"),
        "records_landed",
        "records_quarantined",
    )
