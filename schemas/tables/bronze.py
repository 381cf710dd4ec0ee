"""Bronze tables: what the landed files said, typed, one row per record."""

from __future__ import annotations

from schemas.tables.spec import (
    BOOLEAN,
    DATE,
    INT,
    KEY,
    LINE_KEY,
    LINEAGE,
    LONG,
    STRING,
    TIMESTAMP,
    TableSpec,
    fields,
)

OFFSET_SNAPSHOTS = TableSpec(
    layer="bronze",
    name="offset_snapshots",
    grain="one row per (snapshot file version, topic@group key, queue)",
    keys=(
        "cluster",
        "broker",
        "snapshot_at",
        "snapshot_source",
        "topic",
        "consumer_group",
        "queue_id",
        # the file version: two broadcasting clients' offsets.json of the same instant may hold
        # the same bytes, told apart by their paths alone
        "source_file",
        "_file_hash",
    ),
    event_time="snapshot_at",
    partition_by=("snapshot_date",),
    high_cardinality=("offset",),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("snapshot_at", TIMESTAMP, False),
        *KEY,
        ("queue_id", INT, False),
        ("offset", LONG, False),
        # main | bak | lmq | lmq_bak | client_offsets (broadcast consumer's local offsets.json)
        ("snapshot_source", STRING, False),
        ("client_id", STRING, True),
        *LINEAGE,
        ("snapshot_date", DATE, False),
    ),
)

OFFSET_COMMITS = TableSpec(
    layer="bronze",
    name="offset_commits",
    grain="one row per observed commit",
    keys=LINE_KEY,
    event_time="committed_at",
    partition_by=("commit_date",),
    high_cardinality=("committed_at", "offset", "line_no"),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("committed_at", TIMESTAMP, False),
        ("client_host", STRING, True),
        *KEY,
        ("queue_id", INT, False),
        ("offset", LONG, False),
        # commit_log | broker_notifyme | client_persist
        ("evidence", STRING, False),
        # update_offset | pull_piggyback | null when the source does not tell
        ("commit_path", STRING, True),
        # the stored offset the broker itself reported (NOTIFYME storeOffset)
        ("reported_store_offset", LONG, True),
        ("extra_fields", STRING, True),
        *LINEAGE,
        ("commit_date", DATE, False),
    ),
)

QUEUE_OFFSETS = TableSpec(
    layer="bronze",
    name="queue_offsets",
    grain="one row per (observation, broker, topic, queue[, consumer group])",
    # an idle topic's or group's output repeats itself byte for byte: the file's path (its time)
    # tells two observations apart
    keys=("source_file", "_file_hash", "line_no"),
    event_time="observed_at",
    partition_by=("observed_date",),
    high_cardinality=("max_offset", "consumer_offset", "line_no"),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("observed_at", TIMESTAMP, False),
        ("topic", STRING, False),
        ("queue_id", INT, False),
        ("max_offset", LONG, True),
        ("min_offset", LONG, True),
        ("consumer_group", STRING, True),
        ("consumer_offset", LONG, True),
        ("inflight", LONG, True),
        ("client_ip", STRING, True),
        ("last_consumed_at", STRING, True),
        # consumer_progress | topic_status
        ("evidence", STRING, False),
        ("is_name_truncated", BOOLEAN, False),
        *LINEAGE,
        ("observed_date", DATE, False),
    ),
)

OFFSET_RESETS = TableSpec(
    layer="bronze",
    name="offset_resets",
    grain="one row per reset or broker-side offset correction logged",
    keys=LINE_KEY,
    event_time="reset_at",
    partition_by=("reset_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("reset_at", TIMESTAMP, False),
        ("topic", STRING, True),
        ("consumer_group", STRING, True),
        ("queue_id", INT, True),
        ("client_id", STRING, True),
        ("requested_offset", LONG, True),
        ("new_offset", LONG, True),
        ("reset_to_timestamp", LONG, True),
        ("is_force", BOOLEAN, True),
        # reset_success | reset_started | pull_offset_moved | offset_too_small | offset_overflow
        ("reset_kind", STRING, False),
        *LINEAGE,
        ("reset_date", DATE, False),
    ),
)

GROUP_CONNECTIONS = TableSpec(
    layer="bronze",
    name="group_connections",
    grain=(
        "one row per (saved mqadmin consumerConnection output, client connected); "
        "a group the tool found not online: one row without a client"
    ),
    # a group's membership often repeats itself byte for byte: the file's path tells two outputs apart
    keys=("source_file", "_file_hash", "line_no"),
    event_time="observed_at",
    partition_by=("observed_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("observed_at", TIMESTAMP, False),
        ("consumer_group", STRING, False),
        # null: no client was online (the membership at observed_at is empty)
        ("client_id", STRING, True),
        # ip:port, as commits name their client (client_host)
        ("client_host", STRING, True),
        ("language", STRING, True),
        ("client_version", STRING, True),
        # CONSUME_PASSIVELY (push: commits increase-only) | CONSUME_ACTIVELY (pull, lite pull: may seek back)
        ("consume_type", STRING, True),
        # CLUSTERING | BROADCASTING
        ("message_model", STRING, True),
        ("consume_from_where", STRING, True),
        # the subscribed topics, comma-separated in the tool's order, %RETRY%<group> among them
        ("topics", STRING, True),
        ("is_online", BOOLEAN, False),
        *LINEAGE,
        ("observed_date", DATE, False),
    ),
)

DELAY_OFFSETS = TableSpec(
    layer="bronze",
    name="delay_offsets",
    grain="one row per (version of a delayOffset.json snapshot file, delay level)",
    keys=("cluster", "broker", "snapshot_at", "snapshot_source", "delay_level", "_file_hash"),
    event_time="snapshot_at",
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("snapshot_at", TIMESTAMP, False),
        # keys of SCHEDULE_TOPIC_XXXX's table are delay levels 1..18, not consumer queues
        ("delay_level", INT, False),
        ("offset", LONG, False),
        ("snapshot_source", STRING, False),
        *LINEAGE,
    ),
)


SNAPSHOT_FILES = TableSpec(
    layer="bronze",
    name="snapshot_files",
    grain="one row per landed snapshot file (a broker's offsets document, main or .bak): the .bak rule's decision",
    keys=("source_file", "_file_hash"),
    event_time="snapshot_at",
    partition_by=("snapshot_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("snapshot_at", TIMESTAMP, False),
        # consumer_offsets | lmq | delay_offsets
        ("document_kind", STRING, False),
        # main | bak
        ("snapshot_source", STRING, False),
        ("source_file", STRING, False),
        ("_file_hash", STRING, False),
        # why the whole document was rejected (missing, empty, corrupt...); null: healthy
        ("document_status", STRING, True),
        # main | bak_fallback (replayed: no healthy main file) | bak_older | bak_duplicate (not ingested) |
        # superseded (the path landed again with other content)
        ("selection", STRING, False),
        ("is_replayed", BOOLEAN, False),
        # the ingest run that stored this decision (a .bak's changes when its main file lands later)
        ("_ingest_run_id", STRING, False),
        ("snapshot_date", DATE, False),
    ),
)
