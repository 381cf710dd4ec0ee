"""Load a simulator landing directory into DuckDB tables shaped like OffsetLake's bronze tables.

This is the input half of the DuckDB reference (see :mod:`jobs.tools.bench.oracle.reference`):
it reads the same landed files as the ingest stage, with DuckDB alone, into

    ref_offset_commits    commit-log lines, NOTIFYME lines of broker.log, persist lines of
                          rocketmq_client.log (bronze/offset_commits columns)
    ref_offset_snapshots  consumerOffset.json and .bak entries (bronze/offset_snapshots)
    ref_queue_offsets     mqadmin consumerProgress / topicStatus rows (bronze/queue_offsets)
    ref_offset_resets     reset and correction lines of broker.log (bronze/offset_resets)
    ref_group_connections mqadmin consumerConnection outputs (bronze/group_connections), each
                          document read by the product's own parser (free text, not lines)

It reads what the simulator writes and nothing else: uncompressed files in the default
landing layout, valid records only (the reference has no quarantine; the comparison
checks that the lake quarantined nothing), the 5.x ``consumerProgress`` layout with
``#Inflight``. Line numbers are 1-based per file, as the lake's readers number them.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from jobs.tools.bench.oracle.files import bound, landed_files, lines_source, path_part
from jobs.tools.bench.oracle.logs import load_log_commits, load_resets
from jobs.tools.bench.oracle.sql_text import key_kind_macro, literal
from pipelines.ingest.consumer_connection import group_from_file_name, parse_consumer_connection
from schemas.config import Settings
from schemas.tables import GROUP_CONNECTIONS

PROGRESS_ROW = r"^(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s+(\d+)\s+(N/A|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$"
STATUS_ROW = r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})?\s*$"
COMMIT_JSON = (
    '{"committed_at":"VARCHAR","broker":"VARCHAR","client_host":"VARCHAR","topic":"VARCHAR",'
    '"consumer_group":"VARCHAR","queue_id":"INTEGER","offset":"BIGINT","path":"VARCHAR"}'
)


def load_commit_log(con: duckdb.DuckDBPyConnection, landing: Path) -> None:
    files = landed_files(landing, "commits/*/**/*.jsonl*")  # a gzipped file is refused, not skipped
    con.execute(
        f"""
        CREATE TABLE ref_commit_log AS
        WITH parsed AS (SELECT *, json_transform(line, '{COMMIT_JSON}') AS j FROM {lines_source(files, "files")})
        SELECT {path_part(landing, 2)} AS cluster, j.broker AS broker,
               CAST(CAST(j.committed_at AS TIMESTAMPTZ) AS TIMESTAMP) AS committed_at, j.client_host AS client_host,
               j.topic AS topic, j.consumer_group AS consumer_group, key_kind(j.topic, j.consumer_group) AS key_kind,
               j.queue_id AS queue_id, j."offset" AS "offset", 'commit_log' AS evidence, j.path AS commit_path,
               CAST(NULL AS BIGINT) AS reported_store_offset, source_file, line_no, _file_hash
        FROM parsed
        """,
        bound(files=files),
    )


def load_snapshots(con: duckdb.DuckDBPyConnection, landing: Path) -> None:
    """Entries of consumerOffset.json (bare integer keys quoted first); a .bak identical to its main file is not read."""
    files = landed_files(landing, "snapshots/*/*/*/consumerOffset.json") + landed_files(
        landing, "snapshots/*/*/*/consumerOffset.json.bak"
    )
    source = "read_text($files)" if files else "(SELECT '' AS filename, '' AS content WHERE false)"
    con.execute(
        f"""
        CREATE TABLE ref_offset_snapshots AS
        WITH documents AS (
            SELECT filename AS source_file, content, sha256(content) AS _file_hash,
                   CASE WHEN ends_with(filename, '.bak') THEN 'bak' ELSE 'main' END AS snapshot_source
            FROM {source}
        ), located AS (
            SELECT *, {path_part(landing, 2)} AS cluster, {path_part(landing, 3)} AS broker,
                   CAST(CAST({path_part(landing, 4)} AS TIMESTAMPTZ) AS TIMESTAMP) AS snapshot_at
            FROM documents
        ), read_documents AS (
            SELECT d.*, json_transform(regexp_replace(content, '([{{,])(\\d+):', '\\1"\\2":', 'g'),
                                       '{{"offsetTable":"MAP(VARCHAR, MAP(VARCHAR, BIGINT))"}}').offsetTable AS offset_table
            FROM located d
            WHERE snapshot_source = 'main' OR NOT EXISTS (
                SELECT 1 FROM located m
                WHERE m.snapshot_source = 'main' AND m.cluster = d.cluster AND m.broker = d.broker
                  AND m.snapshot_at = d.snapshot_at AND m._file_hash = d._file_hash)
        ), keys AS (
            SELECT cluster, broker, snapshot_at, snapshot_source, source_file, _file_hash,
                   unnest(map_entries(offset_table)) AS entry
            FROM read_documents
        ), queues AS (
            SELECT *, split_part(entry.key, '@', 1) AS topic, substr(entry.key, instr(entry.key, '@') + 1) AS consumer_group,
                   unnest(map_entries(entry.value)) AS queue
            FROM keys
        )
        SELECT cluster, broker, snapshot_at, topic, consumer_group, key_kind(topic, consumer_group) AS key_kind,
               CAST(queue.key AS INTEGER) AS queue_id, queue.value AS "offset", snapshot_source,
               CAST(NULL AS VARCHAR) AS client_id, source_file, CAST(NULL AS BIGINT) AS line_no, _file_hash
        FROM queues
        """,
        bound(files=files),
    )


def load_queue_offsets(con: duckdb.DuckDBPyConnection, landing: Path) -> None:
    """Rows of the mqadmin outputs; the group (topic) is named by the file, the time by its folder."""
    files = landed_files(landing, "progress/*/*/*.txt")
    progress = (
        f"regexp_extract(line, {literal(PROGRESS_ROW)}, ['topic', 'broker', 'queue', 'max', 'consumer'])"
    )
    status = f"regexp_extract(line, {literal(STATUS_ROW)}, ['broker', 'queue', 'min', 'max'])"
    con.execute(
        f"""
        CREATE TABLE ref_queue_offsets AS
        WITH located AS (
            SELECT *, {path_part(landing, 2)} AS cluster,
                   CAST(CAST({path_part(landing, 3)} AS TIMESTAMPTZ) AS TIMESTAMP) AS observed_at,
                   regexp_extract(source_file, '/consumerProgress-([^/]+?)\\.txt$', 1) AS group_named,
                   regexp_extract(source_file, '/topicStatus-([^/]+?)\\.txt$', 1) AS topic_named
            FROM {lines_source(files, "files")}
        )
        SELECT cluster, {progress}.broker AS broker, observed_at, {progress}.topic AS topic,
               CAST({progress}.queue AS INTEGER) AS queue_id, CAST({progress}.max AS BIGINT) AS max_offset,
               CAST(NULL AS BIGINT) AS min_offset, group_named AS consumer_group,
               CAST({progress}.consumer AS BIGINT) AS consumer_offset, 'consumer_progress' AS evidence,
               source_file, line_no, _file_hash
        FROM located WHERE group_named <> '' AND regexp_full_match(line, {literal(PROGRESS_ROW)})
        UNION ALL
        SELECT cluster, {status}.broker, observed_at, topic_named, CAST({status}.queue AS INTEGER),
               CAST({status}.max AS BIGINT), CAST({status}.min AS BIGINT), CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT),
               'topic_status', source_file, line_no, _file_hash
        FROM located WHERE topic_named <> '' AND regexp_full_match(line, {literal(STATUS_ROW)})
        """,
        bound(files=files),
    )


def _connection_rows(landing: Path, source_file: str) -> list[dict]:
    path = Path(source_file)
    content = path.read_bytes()
    document = parse_consumer_connection(content.decode("utf-8"), group_from_file_name(path.name))
    cluster, stamp = path.relative_to(landing).parts[1:3]
    shared = {
        "cluster": cluster,
        "observed_at": datetime.fromisoformat(stamp),
        "consumer_group": document.consumer_group,
        "consume_type": document.consume_type,
        "message_model": document.message_model,
        "consume_from_where": document.consume_from_where,
        "topics": ",".join(document.topics) or None,
        "source_file": source_file,
        "_file_hash": hashlib.sha256(content).hexdigest(),
    }
    clients = [
        {"client_id": c.client_id, "client_host": c.client_addr, "language": c.language,
         "client_version": c.version, "is_online": document.is_online, "line_no": c.line_no}
        for c in document.clients
    ]  # fmt: skip
    offline = {"is_online": False, "line_no": document.not_online_line_no}
    return [{**shared, **client} for client in clients or [offline]]


def load_group_connections(con: duckdb.DuckDBPyConnection, landing: Path) -> None:
    """ref_group_connections: one row per client of each consumerConnection output."""
    files = landed_files(landing, "progress/*/*/consumerConnection-*.txt")
    rows = [row for f in files for row in _connection_rows(landing, f)]
    schema = pa.schema(
        [f for f in GROUP_CONNECTIONS.arrow_schema if f.name not in ("_ingest_run_id", "observed_date")]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    con.register("connection_rows", table)
    # instants as UTC wall times, as every ref_* table holds them
    con.execute(
        "CREATE TABLE ref_group_connections AS "
        "SELECT * REPLACE (CAST(observed_at AS TIMESTAMP) AS observed_at) FROM connection_rows"
    )
    con.unregister("connection_rows")


def load_inputs(con: duckdb.DuckDBPyConnection, landing: Path, settings: Settings) -> None:
    """Every ref_* bronze table from ``landing`` (see the module docstring)."""
    con.execute(key_kind_macro())
    load_commit_log(con, landing)
    load_log_commits(con, landing, settings)
    con.execute(
        "CREATE TABLE ref_offset_commits AS SELECT * FROM ref_commit_log UNION ALL SELECT * FROM ref_log_commits"
    )
    load_snapshots(con, landing)
    load_queue_offsets(con, landing)
    load_resets(con, landing, settings)
    load_group_connections(con, landing)
