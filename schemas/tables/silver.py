"""Silver tables: the replay of both commit semantics, its regressions and its checkpoints."""

from __future__ import annotations

from schemas.tables.spec import BOOLEAN, DATE, INT, KEY, LINE_KEY, LONG, STRING, TIMESTAMP, TableSpec, fields

OFFSET_COMMITS_REPLAYED = TableSpec(
    layer="silver",
    name="offset_commits_replayed",
    grain="one row per observed commit, in replay order",
    keys=LINE_KEY,
    event_time="committed_at",
    partition_by=("commit_date",),
    high_cardinality=("committed_at", "offset", "stored_offset_before", "client_offset_after", "line_no"),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("committed_at", TIMESTAMP, False),
        ("client_host", STRING, True),
        *KEY,
        ("queue_id", INT, False),
        ("offset", LONG, False),
        ("evidence", STRING, False),
        ("commit_path", STRING, True),
        # broker semantics: what was stored just before this commit (overwrite-on-commit)
        ("stored_offset_before", LONG, True),
        # commit | snapshot | null (nothing known before)
        ("stored_before_source", STRING, True),
        # client semantics: the increase-only high-water mark after this commit
        ("client_offset_after", LONG, False),
        ("is_regression", BOOLEAN, False),
        ("regression_size", LONG, True),
        ("source_file", STRING, False),
        ("line_no", LONG, True),
        ("_file_hash", STRING, False),
        ("commit_date", DATE, False),
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
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("queue_id", INT, False),
        ("observed_at", TIMESTAMP, False),
        # position among observations at the same instant, "rank|path|line|content hash", the path's "%"
        # and "|" written %25 and %7C (a snapshot's has no hash; pipelines.replay.projections.OBSERVATION_SEQ)
        ("observation_seq", STRING, False),
        # commit | snapshot
        ("observation", STRING, False),
        ("stored_offset", LONG, False),
        ("previous_stored_offset", LONG, True),
        # positive part of the change: messages consumed since the previous observation
        ("consumed_increment", LONG, False),
        ("observed_date", DATE, False),
    ),
)

OFFSET_REGRESSIONS = TableSpec(
    layer="silver",
    name="offset_regressions",
    grain="one row per regression (a commit, or a snapshot, below the offset stored before it)",
    keys=(
        "cluster",
        "broker",
        "topic",
        "consumer_group",
        "queue_id",
        "detected_at",
        "evidence",
        "observation_seq",
    ),
    event_time="detected_at",
    partition_by=("detected_date",),
    schema=fields(
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("queue_id", INT, False),
        ("detected_at", TIMESTAMP, False),
        ("offset", LONG, False),
        ("stored_offset", LONG, False),
        ("regression_size", LONG, False),
        # messages below the group's high-water mark sent back to be consumed again (duplicate exposure)
        ("messages_consumed_twice", LONG, False),
        # commit | snapshot_pair (below the previous snapshot) | snapshot_behind_commit (below the last commit)
        ("evidence", STRING, False),
        ("client_host", STRING, True),
        ("commit_evidence", STRING, True),
        ("commit_path", STRING, True),
        ("key_kind", STRING, False),
        ("observation_seq", STRING, False),
        ("source_file", STRING, True),
        # why it happened (the rules: pipelines.replay.explain): admin_reset | server_correction |
        # rewind_to_min | stale_commit | failover | unexplained
        ("cause", STRING, False),
        # the evidence row it rests on: its table (null when unexplained), file and line, time, and what it says
        ("cause_evidence", STRING, True),
        ("cause_source_file", STRING, True),
        ("cause_line_no", LONG, True),
        ("cause_at", TIMESTAMP, True),
        ("cause_detail", STRING, True),
        ("detected_date", DATE, False),
    ),
)

REPLAY_CHECKPOINTS = TableSpec(
    layer="silver",
    name="replay_checkpoints",
    grain="one row per (checkpoint time, queue key): the replay state as of as_of",
    keys=("as_of", "cluster", "broker", "topic", "consumer_group", "queue_id"),
    event_time="as_of",
    schema=fields(
        ("as_of", TIMESTAMP, False),
        ("cluster", STRING, False),
        ("broker", STRING, False),
        ("topic", STRING, False),
        ("consumer_group", STRING, False),
        ("queue_id", INT, False),
        ("key_kind", STRING, False),
        ("last_commit_offset", LONG, True),
        ("last_commit_at", TIMESTAMP, True),
        ("last_commit_client_host", STRING, True),
        ("client_offset_hwm", LONG, True),
        ("last_snapshot_at", TIMESTAMP, True),
        ("last_snapshot_offset", LONG, True),
        ("commit_regressions_since_snapshot", LONG, False),
        ("last_stored_at", TIMESTAMP, True),
        ("last_stored_offset", LONG, True),
    ),
)
