"""Every Delta table OffsetLake writes: its place in the lake, grain, keys and columns.

This module is the public contract analysts query. Each table lives at
``<lake>/<layer>/<name>``; ``keys`` are unique at the stated grain (the data-quality
suite checks it) and ``event_time`` is the column a run's ``[from, to)`` interval
selects, so re-running an interval replaces exactly the rows it produced.
Columns starting with ``_`` are pipeline metadata.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


@dataclass(frozen=True)
class TableSpec:
    """Declaration of one Delta table."""

    layer: str
    name: str
    grain: str
    keys: tuple[str, ...]
    schema: StructType
    event_time: str | None = None
    partition_by: tuple[str, ...] = ()
    # columns (nearly) every row has its own value of: offsets, instants, line numbers. The
    # embedded writer stores them without a Parquet dictionary, which such a column fills
    # and then abandons (the writer hashes every value first; the files come out larger).
    high_cardinality: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """Location relative to the lake root."""
        return f"{self.layer}/{self.name}"

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.schema.fields]


def _fields(*specs: tuple[str, object, bool]) -> StructType:
    return StructType([StructField(name, dtype, nullable) for name, dtype, nullable in specs])


S, L, I, T, D, B, F = StringType(), LongType(), IntegerType(), TimestampType(), DateType(), BooleanType(), DoubleType()

# Columns every bronze row carries to trace it back to the landed file.
_LINEAGE = (
    ("source_file", S, False),
    ("line_no", L, True),
    ("_file_hash", S, False),
    ("_ingest_run_id", S, False),
)
# The topic@group key, split and classified (see pipelines.keys).
_KEY = (
    ("topic", S, False),
    ("consumer_group", S, False),
    ("key_kind", S, False),
)

OFFSET_SNAPSHOTS = TableSpec(
    layer="bronze",
    name="offset_snapshots",
    grain="one row per (snapshot, topic@group key, queue)",
    keys=("cluster", "broker", "snapshot_at", "snapshot_source", "topic", "consumer_group", "queue_id"),
    event_time="snapshot_at",
    partition_by=("snapshot_date",),
    high_cardinality=("offset",),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("snapshot_at", T, False),
        *_KEY,
        ("queue_id", I, False),
        ("offset", L, False),
        # main | bak | lmq | lmq_bak | client_offsets (broadcast consumer's local offsets.json)
        ("snapshot_source", S, False),
        ("client_id", S, True),
        *_LINEAGE,
        ("snapshot_date", D, False),
    ),
)

OFFSET_COMMITS = TableSpec(
    layer="bronze",
    name="offset_commits",
    grain="one row per observed commit",
    keys=("_file_hash", "line_no"),
    event_time="committed_at",
    partition_by=("commit_date",),
    high_cardinality=("committed_at", "offset", "line_no"),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("committed_at", T, False),
        ("client_host", S, True),
        *_KEY,
        ("queue_id", I, False),
        ("offset", L, False),
        # commit_log | broker_notifyme | client_persist
        ("evidence", S, False),
        # update_offset | pull_piggyback | null when the source does not tell
        ("commit_path", S, True),
        # the stored offset the broker itself reported (NOTIFYME storeOffset)
        ("reported_store_offset", L, True),
        ("extra_fields", S, True),
        *_LINEAGE,
        ("commit_date", D, False),
    ),
)

QUEUE_OFFSETS = TableSpec(
    layer="bronze",
    name="queue_offsets",
    grain="one row per (observation, broker, topic, queue[, consumer group])",
    keys=("_file_hash", "line_no"),
    event_time="observed_at",
    partition_by=("observed_date",),
    high_cardinality=("max_offset", "consumer_offset", "line_no"),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("observed_at", T, False),
        ("topic", S, False),
        ("queue_id", I, False),
        ("max_offset", L, True),
        ("min_offset", L, True),
        ("consumer_group", S, True),
        ("consumer_offset", L, True),
        ("inflight", L, True),
        ("client_ip", S, True),
        ("last_consumed_at", S, True),
        # consumer_progress | topic_status
        ("evidence", S, False),
        ("is_name_truncated", B, False),
        *_LINEAGE,
        ("observed_date", D, False),
    ),
)

OFFSET_RESETS = TableSpec(
    layer="bronze",
    name="offset_resets",
    grain="one row per reset or broker-side offset correction logged",
    keys=("_file_hash", "line_no"),
    event_time="reset_at",
    partition_by=("reset_date",),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("reset_at", T, False),
        ("topic", S, True),
        ("consumer_group", S, True),
        ("queue_id", I, True),
        ("client_id", S, True),
        ("requested_offset", L, True),
        ("new_offset", L, True),
        ("reset_to_timestamp", L, True),
        ("is_force", B, True),
        # reset_success | reset_started | pull_offset_moved | offset_too_small | offset_overflow
        ("reset_kind", S, False),
        *_LINEAGE,
        ("reset_date", D, False),
    ),
)

DELAY_OFFSETS = TableSpec(
    layer="bronze",
    name="delay_offsets",
    grain="one row per (snapshot of delayOffset.json, delay level)",
    keys=("cluster", "broker", "snapshot_at", "snapshot_source", "delay_level"),
    event_time="snapshot_at",
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("snapshot_at", T, False),
        # keys of SCHEDULE_TOPIC_XXXX's table are delay levels 1..18, not consumer queues
        ("delay_level", I, False),
        ("offset", L, False),
        ("snapshot_source", S, False),
        *_LINEAGE,
    ),
)

REJECTED_INPUTS = TableSpec(
    layer="quarantine",
    name="rejected_inputs",
    grain="one row per rejected file or line",
    keys=("_file_hash", "line_no"),
    event_time=None,
    high_cardinality=("line_no", "raw"),
    schema=_fields(
        ("source_file", S, False),
        ("line_no", L, True),
        ("reason", S, False),
        ("raw", S, True),
        ("rejected_at", T, False),
        ("cluster", S, True),
        ("source_kind", S, False),
        ("_file_hash", S, False),
        ("_ingest_run_id", S, False),
    ),
)

INGEST_RUNS = TableSpec(
    layer="ops",
    name="ingest_runs",
    grain="one row per (ingest batch, landed file identity) with its record accounting",
    keys=("batch_id", "identity"),
    schema=_fields(
        ("run_id", S, False),
        # files ingested together; a batch is recorded as pending before its rows are written
        ("batch_id", S, False),
        ("source_file", S, False),
        ("source_kind", S, False),
        ("cluster", S, True),
        ("broker", S, True),
        ("event_at", T, True),
        # identity under which the file counts as ingested (content hash, plus broker and time for snapshots)
        ("identity", S, False),
        ("_file_hash", S, False),
        ("file_size", L, False),
        ("file_mtime_ns", L, False),
        # pending | ingested | duplicate | skipped
        ("status", S, False),
        ("status_reason", S, True),
        ("records_read", L, False),
        ("records_landed", L, False),
        ("records_quarantined", L, False),
        # range of the event times the file's landed records carry
        ("event_min_at", T, True),
        ("event_max_at", T, True),
        ("ingested_at", T, False),
    ),
)

REPLAY_RUNS = TableSpec(
    layer="ops",
    name="replay_runs",
    grain="one row per replay of an interval",
    keys=("run_id",),
    schema=_fields(
        ("run_id", S, False),
        ("requested_from", T, True),
        ("requested_to", T, True),
        # the interval actually replayed: widened back to a checkpoint when late data arrived
        ("replayed_from", T, False),
        ("replayed_to", T, False),
        ("commits_replayed", L, False),
        ("regressions_found", L, False),
        ("finished_at", T, False),
    ),
)

OFFSET_COMMITS_REPLAYED = TableSpec(
    layer="silver",
    name="offset_commits_replayed",
    grain="one row per observed commit, in replay order",
    keys=("_file_hash", "line_no"),
    event_time="committed_at",
    partition_by=("commit_date",),
    high_cardinality=("committed_at", "offset", "stored_offset_before", "client_offset_after", "line_no"),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("committed_at", T, False),
        ("client_host", S, True),
        *_KEY,
        ("queue_id", I, False),
        ("offset", L, False),
        ("evidence", S, False),
        ("commit_path", S, True),
        # broker semantics: what was stored just before this commit (overwrite-on-commit)
        ("stored_offset_before", L, True),
        # commit | snapshot | null (nothing known before)
        ("stored_before_source", S, True),
        # client semantics: the increase-only high-water mark after this commit
        ("client_offset_after", L, False),
        ("is_regression", B, False),
        ("regression_size", L, True),
        ("source_file", S, False),
        ("line_no", L, True),
        ("_file_hash", S, False),
        ("commit_date", D, False),
    ),
)

STORED_OFFSET_TIMELINE = TableSpec(
    layer="silver",
    name="stored_offset_timeline",
    grain="one row per observation of a queue's stored offset (a commit or a snapshot)",
    keys=("cluster", "broker", "topic", "consumer_group", "queue_id", "observed_at", "observation_seq"),
    event_time="observed_at",
    partition_by=("observed_date",),
    high_cardinality=("observed_at", "observation_seq", "stored_offset", "previous_stored_offset"),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("topic", S, False),
        ("consumer_group", S, False),
        ("queue_id", I, False),
        ("observed_at", T, False),
        # position among observations at the same instant (see pipelines.replay.REPLAY_ORDER)
        ("observation_seq", S, False),
        # commit | snapshot
        ("observation", S, False),
        ("stored_offset", L, False),
        ("previous_stored_offset", L, True),
        # positive part of the change: messages consumed since the previous observation
        ("consumed_increment", L, False),
        ("observed_date", D, False),
    ),
)

OFFSET_REGRESSIONS = TableSpec(
    layer="silver",
    name="offset_regressions",
    grain="one row per regression (a commit, or a snapshot, below the offset stored before it)",
    keys=("cluster", "broker", "topic", "consumer_group", "queue_id", "detected_at", "evidence", "observation_seq"),
    event_time="detected_at",
    partition_by=("detected_date",),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("topic", S, False),
        ("consumer_group", S, False),
        ("queue_id", I, False),
        ("detected_at", T, False),
        ("offset", L, False),
        ("stored_offset", L, False),
        ("regression_size", L, False),
        # commit | snapshot_pair
        ("evidence", S, False),
        ("client_host", S, True),
        ("commit_evidence", S, True),
        ("commit_path", S, True),
        ("key_kind", S, False),
        ("observation_seq", S, False),
        ("source_file", S, True),
        # the logged reset or broker correction that explains it (see pipelines.explain), if any
        ("explained_by", S, True),
        ("explanation", S, True),
        ("detected_date", D, False),
    ),
)

REPLAY_CHECKPOINTS = TableSpec(
    layer="silver",
    name="replay_checkpoints",
    grain="one row per (checkpoint time, queue key): the replay state as of as_of",
    keys=("as_of", "cluster", "broker", "topic", "consumer_group", "queue_id"),
    event_time="as_of",
    schema=_fields(
        ("as_of", T, False),
        ("cluster", S, False),
        ("broker", S, False),
        ("topic", S, False),
        ("consumer_group", S, False),
        ("queue_id", I, False),
        ("key_kind", S, False),
        ("last_commit_offset", L, True),
        ("client_offset_hwm", L, True),
        ("last_snapshot_at", T, True),
        ("last_snapshot_offset", L, True),
        ("commit_regressions_since_snapshot", L, False),
        ("last_stored_at", T, True),
        ("last_stored_offset", L, True),
    ),
)

CONSUMER_LAG = TableSpec(
    layer="gold",
    name="consumer_lag",
    grain="one row per (broker offset observation, consumer group, queue)",
    keys=("cluster", "broker", "topic", "consumer_group", "queue_id", "observed_at"),
    event_time="observed_at",
    partition_by=("observed_date",),
    high_cardinality=("broker_offset", "consumer_offset", "consumer_offset_at", "reported_consumer_offset"),
    schema=_fields(
        ("cluster", S, False),
        ("broker", S, False),
        ("topic", S, False),
        ("consumer_group", S, False),
        ("queue_id", I, False),
        ("observed_at", T, False),
        ("broker_offset", L, False),
        ("broker_min_offset", L, True),
        # replayed stored offset as of observed_at (null: no offset known yet)
        ("consumer_offset", L, True),
        ("consumer_offset_at", T, True),
        # what the admin tool itself reported, when the observation came from consumerProgress
        ("reported_consumer_offset", L, True),
        ("lag_messages", L, True),
        ("observed_date", D, False),
    ),
)

CONSUMER_LAG_BY_GROUP = TableSpec(
    layer="gold",
    name="consumer_lag_by_group",
    grain="one row per (cluster, topic, consumer group, observation time)",
    keys=("cluster", "topic", "consumer_group", "observed_at"),
    event_time="observed_at",
    partition_by=("observed_date",),
    schema=_fields(
        ("cluster", S, False),
        ("topic", S, False),
        ("consumer_group", S, False),
        ("observed_at", T, False),
        ("queues", L, False),
        ("total_lag_messages", L, True),
        ("worst_lag_messages", L, True),
        ("worst_broker", S, True),
        ("worst_queue_id", I, True),
        ("observed_date", D, False),
    ),
)

CONSUME_THROUGHPUT = TableSpec(
    layer="gold",
    name="consume_throughput",
    grain="one row per (cluster, topic, consumer group, tumbling window)",
    keys=("cluster", "topic", "consumer_group", "window_start"),
    event_time="window_start",
    partition_by=("window_date",),
    schema=_fields(
        ("cluster", S, False),
        ("topic", S, False),
        ("consumer_group", S, False),
        ("window_start", T, False),
        ("window_end", T, False),
        ("messages_consumed", L, False),
        ("messages_per_second", F, False),
        ("observations", L, False),
        ("window_date", D, False),
    ),
)

BRONZE_TABLES = (OFFSET_SNAPSHOTS, OFFSET_COMMITS, QUEUE_OFFSETS, OFFSET_RESETS, DELAY_OFFSETS)
SILVER_TABLES = (OFFSET_COMMITS_REPLAYED, STORED_OFFSET_TIMELINE, OFFSET_REGRESSIONS, REPLAY_CHECKPOINTS)
GOLD_TABLES = (CONSUMER_LAG, CONSUMER_LAG_BY_GROUP, CONSUME_THROUGHPUT)
OPS_TABLES = (INGEST_RUNS, REPLAY_RUNS)
ALL_TABLES = (*BRONZE_TABLES, REJECTED_INPUTS, *OPS_TABLES, *SILVER_TABLES, *GOLD_TABLES)
