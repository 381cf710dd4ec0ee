"""Broker and client log lines as DuckDB tables: commits (NOTIFYME, persist lines) and resets.

    ref_log_commits    NOTIFYME lines of broker.log (evidence broker_notifyme) and
                       [persistAll]/[persist] lines of rocketmq_client.log (client_persist)
    ref_offset_resets  reset and broker-correction lines of broker.log (bronze/offset_resets)

The line formats are the pipeline's own (pipelines.ingest.broker_log, pipelines.ingest.client_log);
local log times are read in each cluster's configured zone, as the ingest stage reads them.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from jobs.tools.bench.oracle.files import bound, landed_files, lines_source, path_part
from jobs.tools.bench.oracle.sql_text import literal, zone_by_cluster
from pipelines.ingest.broker_log import LOG_LAYOUT, MARKERS, NOTIFYME, RESET_FORMATS
from pipelines.ingest.client_log import MARKERS as PERSIST_MARKERS
from pipelines.ingest.client_log import PERSIST
from schemas.config import Settings


def _log_layout(zone_sql: str) -> str:
    """SELECT list splitting a log line into ``logged_at`` (UTC), ``thread`` and ``message``."""
    parts = f"regexp_extract(line, {literal(LOG_LAYOUT)}, ['day', 'millis', 'level', 'thread', 'message'])"
    return f"""
        {parts}.thread AS thread, {parts}.message AS message,
        CAST(timezone({zone_sql}, strptime({parts}.day || '.' || coalesce(nullif({parts}.millis, ''), '000'),
                                           '%Y-%m-%d %H:%M:%S.%g')) AS TIMESTAMP) AS logged_at"""


def _broker_lines(landing: Path, settings: Settings, files: list[str]) -> str:
    zone = zone_by_cluster(settings, "broker_log_timezone", "cluster")
    return f"""(
        SELECT *, {_log_layout(zone)} FROM (
            SELECT {path_part(landing, 2)} AS cluster, {path_part(landing, 3)} AS broker, source_file, line_no, line, _file_hash
            FROM {lines_source(files, "broker_files")}))"""


def load_log_commits(con: duckdb.DuckDBPyConnection, landing: Path, settings: Settings) -> None:
    """NOTIFYME lines of broker.log and persist lines of rocketmq_client.log, as commits."""
    broker_files = landed_files(landing, "broker_logs/*/*/**/*.log*")
    client_files = landed_files(landing, "client_logs/*/**/*.log*")
    client_zone = zone_by_cluster(settings, "client_log_timezone", "cluster")
    notify = f"regexp_extract(message, {literal(NOTIFYME)}, ['host', 'key', 'queue', 'offset', 'stored'])"
    persist = f"regexp_extract(message, {literal(PERSIST)}, ['marker', 'grp', 'client', 'topic', 'broker', 'queue', 'offset'])"
    is_persist = " OR ".join(f"contains(line, {literal(m)})" for m in PERSIST_MARKERS)
    con.execute(
        f"""
        CREATE TABLE ref_log_commits AS
        WITH notify AS (
            SELECT *, {notify} AS n FROM {_broker_lines(landing, settings, broker_files)}
            WHERE contains(line, {literal(MARKERS["notifyme"])})
        ), persisted AS (
            SELECT *, {persist} AS p FROM (
                SELECT {path_part(landing, 2)} AS cluster, source_file, line_no, _file_hash, {_log_layout(client_zone)}
                FROM {lines_source(client_files, "client_files")}
                WHERE {is_persist})
        )
        SELECT cluster, broker, logged_at AS committed_at, nullif(n.host, '') AS client_host,
               split_part(n.key, '@', 1) AS topic, substr(n.key, instr(n.key, '@') + 1) AS consumer_group,
               key_kind(split_part(n.key, '@', 1), substr(n.key, instr(n.key, '@') + 1)) AS key_kind,
               CAST(n.queue AS INTEGER) AS queue_id, CAST(n."offset" AS BIGINT) AS "offset", 'broker_notifyme' AS evidence,
               CASE WHEN starts_with(thread, 'PullMessageThread_') THEN 'pull_piggyback'
                    WHEN starts_with(thread, 'ConsumerManageThread_') THEN 'update_offset' END AS commit_path,
               CAST(n.stored AS BIGINT) AS reported_store_offset, source_file, line_no, _file_hash
        FROM notify
        UNION ALL
        SELECT cluster, p.broker, logged_at, p.client, p.topic, p.grp, key_kind(p.topic, p.grp), CAST(p.queue AS INTEGER),
               CAST(p."offset" AS BIGINT), 'client_persist', 'update_offset', CAST(NULL AS BIGINT), source_file, line_no,
               _file_hash
        FROM persisted
        """,
        bound(broker_files=broker_files, client_files=client_files),
    )


def _reset_value(column: str) -> str:
    """SQL for ``column`` of a reset line: its group in the pattern of the line's kind, null when absent."""
    cases = [
        f"WHEN {literal(kind)} THEN regexp_extract(message, {literal(pattern)}, {groups[column]})"
        for kind, (pattern, groups) in RESET_FORMATS.items()
        if column in groups
    ]
    return f"nullif(CASE reset_kind {' '.join(cases)} END, '')" if cases else "CAST(NULL AS VARCHAR)"


def load_resets(con: duckdb.DuckDBPyConnection, landing: Path, settings: Settings) -> None:
    """Reset and correction lines of broker.log; a line's kind is the first marker it carries."""
    files = landed_files(landing, "broker_logs/*/*/**/*.log*")
    kind = (
        "CASE "
        + " ".join(f"WHEN contains(line, {literal(m)}) THEN {literal(k)}" for k, m in MARKERS.items())
        + " END"
    )
    well_formed = " OR ".join(
        f"(reset_kind = {literal(k)} AND regexp_full_match(message, {literal(pattern)}))"
        for k, (pattern, _) in RESET_FORMATS.items()
    )
    con.execute(
        f"""
        CREATE TABLE ref_offset_resets AS
        WITH lines AS (SELECT *, {kind} AS reset_kind FROM {_broker_lines(landing, settings, files)})
        SELECT cluster, broker, logged_at AS reset_at, {_reset_value("topic")} AS topic,
               {_reset_value("consumer_group")} AS consumer_group, CAST(NULL AS INTEGER) AS queue_id,
               {_reset_value("client_id")} AS client_id, TRY_CAST({_reset_value("requested_offset")} AS BIGINT) AS requested_offset,
               TRY_CAST({_reset_value("new_offset")} AS BIGINT) AS new_offset,
               TRY_CAST({_reset_value("reset_to_timestamp")} AS BIGINT) AS reset_to_timestamp,
               TRY_CAST({_reset_value("is_force")} AS BOOLEAN) AS is_force, reset_kind, source_file, line_no, _file_hash
        FROM lines
        WHERE reset_kind IS NOT NULL AND reset_kind <> 'notifyme' AND ({well_formed})
        """,
        bound(broker_files=files),
    )
