"""Operations tables: rejected input, and what each ingest and replay did."""

from __future__ import annotations

from schemas.tables.spec import LONG, STRING, TIMESTAMP, TableSpec, fields

REJECTED_INPUTS = TableSpec(
    layer="quarantine",
    name="rejected_inputs",
    grain="one row per rejected file or line",
    # a file known by its path (an admin output, a client's offsets) is read again when it lands
    # again under another path with the same bytes: the path tells its rejections apart
    keys=("source_file", "_file_hash", "line_no"),
    event_time=None,
    high_cardinality=("line_no", "raw"),
    schema=fields(
        ("source_file", STRING, False),
        ("line_no", LONG, True),
        ("reason", STRING, False),
        ("raw", STRING, True),
        ("rejected_at", TIMESTAMP, False),
        ("cluster", STRING, True),
        ("source_kind", STRING, False),
        ("_file_hash", STRING, False),
        ("_ingest_run_id", STRING, False),
    ),
)

INGEST_RUNS = TableSpec(
    layer="ops",
    name="ingest_runs",
    grain="one row per (ingest batch, landed file identity) with its record accounting",
    keys=("batch_id", "identity"),
    schema=fields(
        ("run_id", STRING, False),
        # files ingested together; a batch is recorded as pending before its rows are written
        ("batch_id", STRING, False),
        ("source_file", STRING, False),
        ("source_kind", STRING, False),
        ("cluster", STRING, True),
        ("broker", STRING, True),
        ("event_at", TIMESTAMP, True),
        # identity under which the file counts as ingested (content hash, plus broker and time for snapshots)
        ("identity", STRING, False),
        ("_file_hash", STRING, False),
        ("file_size", LONG, False),
        ("file_mtime_ns", LONG, False),
        # pending | ingested | duplicate | skipped
        ("status", STRING, False),
        ("status_reason", STRING, True),
        ("records_read", LONG, False),
        ("records_landed", LONG, False),
        ("records_quarantined", LONG, False),
        # range of the event times the file's landed records carry
        ("event_min_at", TIMESTAMP, True),
        ("event_max_at", TIMESTAMP, True),
        ("ingested_at", TIMESTAMP, False),
        # a file that continues an ingested copy (a longer copy of its path; a compressed file of
        # the content of copies before it): that copy's _file_hash (only the lines after it were
        # read); null: read whole
        ("grew_from_hash", STRING, True),
        # the line that copy cut short, read again whole here: the replay takes this copy's row
        # of it, not the cut one (jobs.io.growth)
        ("reread_line", LONG, True),
        # a compressed file's decompressed content, which a later copy may continue: its size and
        # SHA-256; null: a plain file (its content is the file: file_size, _file_hash)
        ("content_size", LONG, True),
        ("content_hash", STRING, True),
        # a growing file's content's first 4 KiB: their SHA-256, which a file of another path must
        # share to be compared with it in full (jobs.io.growth.head_digest); null: not a growing
        # kind, a content shorter than that, or ingested before heads were recorded
        ("content_head", STRING, True),
    ),
)

REPLAY_RUNS = TableSpec(
    layer="ops",
    name="replay_runs",
    grain="one row per replay of an interval",
    keys=("run_id",),
    schema=fields(
        ("run_id", STRING, False),
        ("requested_from", TIMESTAMP, True),
        ("requested_to", TIMESTAMP, True),
        # the interval actually replayed: widened back to a checkpoint when late data arrived
        ("replayed_from", TIMESTAMP, False),
        ("replayed_to", TIMESTAMP, False),
        ("commits_replayed", LONG, False),
        ("regressions_found", LONG, False),
        ("finished_at", TIMESTAMP, False),
        # when it began planning its interval (jobs.stages.replay._ingest_bounds); null: recorded
        # before this column
        ("planned_at", TIMESTAMP, True),
        # the Delta version of ops/ingest_runs when it began planning: it saw at least the files
        # ingested as of that version; -1: the table did not exist yet; null: recorded before this column
        ("planned_version", LONG, True),
    ),
)


PUBLISH_RUNS = TableSpec(
    layer="ops",
    name="publish_runs",
    grain="one row per run whose gold rows were published: the replayed interval they cover",
    keys=("run_id",),
    schema=fields(
        ("run_id", STRING, False),
        ("interval_start", TIMESTAMP, False),
        ("interval_end", TIMESTAMP, False),
        ("gold_rows", LONG, False),
        ("published_at", TIMESTAMP, False),
        # the replay whose gold rows it published (its ops/replay_runs.finished_at); null: recorded
        # before this column
        ("replayed_at", TIMESTAMP, True),
    ),
)


STAGED_GOLD = TableSpec(
    layer="ops",
    name="staged_gold",
    grain="one row: the run whose gold rows the staging lake holds (in <lake>/_staging, beside them)",
    keys=("staging",),
    schema=fields(
        ("staging", STRING, False),  # always "gold": the table's one row
        # null while a marts stage replaces the staged rows, and after one stopped half-way
        ("run_id", STRING, True),
        # the replay the staged rows are of (its ops/replay_runs.finished_at): the run's replay may
        # run again after its marts
        ("replayed_at", TIMESTAMP, True),
        ("staged_at", TIMESTAMP, False),
    ),
)
