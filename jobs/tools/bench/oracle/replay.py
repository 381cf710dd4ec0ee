"""OffsetLake's replay rules (README, "How replay works") in DuckDB SQL, over the ref_* bronze tables.

One replay of everything, from nothing (no checkpoint), as a fresh lake's single run does:

    ref_offset_commits_replayed   silver/offset_commits_replayed
    ref_stored_offset_timeline    silver/stored_offset_timeline
    ref_offset_regressions        silver/offset_regressions, each with its cause (pipelines.replay.explain's rules)

Events of a queue are ordered by (event time, snapshot before commit, file, line). Per event:
``stored_offset_before`` = previous commit's offset, unless a snapshot at least
SNAPSHOT_SETTLE_SECONDS after that commit came since (then that snapshot's), else the latest snapshot;
``client_offset_after`` = max(first commit's starting point, every offset committed so far).
Example, one queue::

    event     offset | stored_offset_before  client_offset_after  is_regression
    snapshot  100    |
    commit    120    | 100                   120                  false
    commit    90     | 120                   120                  true
    snapshot  90     |   below the snapshot before it, but explained by the commit regression

A snapshot below the previous snapshot is a ``snapshot_pair`` regression only when no commit
regression lies between the two. The events from one snapshot up to the next form a
segment (numbered by a running count of snapshots), so "regressions between" is a hash
aggregate per segment instead of another running window.
"""

from __future__ import annotations

import functools

import duckdb

from jobs.tools.bench.oracle.sql_text import literal
from pipelines.replay.events import CORROBORATION_WINDOW_SECONDS, REPLAYED_SNAPSHOT_SOURCES
from pipelines.replay.explain import (
    CAUSES,
    CONNECTION_MAX_AGE_SECONDS,
    CORRECTION_KINDS,
    LOOKBACK_SECONDS,
    MIN_OFFSET_MAX_AGE_SECONDS,
    RESET_KINDS,
    SLACK_SECONDS,
)
from pipelines.replay.kernel import SNAPSHOT_SETTLE_SECONDS
from pipelines.replay.projections import OBSERVATION_PATH_ESCAPES, OBSERVATION_SEQ_SEPARATOR
from schemas.keys import CLIENT_STATE_KIND
from schemas.records import PULL

QUEUE = "cluster, broker, topic, consumer_group, queue_id"
SEP = literal(OBSERVATION_SEQ_SEPARATOR)
OBSERVATION_PATH = functools.reduce(
    lambda path, escape: f"replace({path}, {literal(escape[0])}, {literal(escape[1])})",
    OBSERVATION_PATH_ESCAPES,
    "source_file",
)
# Paths in the text order observation_seq compares them (pipelines.replay.events.EventIds).
ORDER = f"event_at, event_rank, {OBSERVATION_PATH} || {SEP}, line_rank, _file_hash"


def _events_sql() -> str:
    """Commits (log lines repeating a commit-log commit dropped) and replayed snapshots, one shape."""
    sources = ", ".join(literal(s) for s in REPLAYED_SNAPSHOT_SOURCES)
    return f"""
        WITH canonical AS (SELECT * FROM ref_offset_commits WHERE evidence = 'commit_log'),
        uncorroborated AS (
            SELECT l.* FROM ref_offset_commits l
            WHERE l.evidence <> 'commit_log' AND NOT EXISTS (
                SELECT 1 FROM canonical c
                WHERE c.cluster = l.cluster AND c.broker = l.broker AND c.topic = l.topic
                  AND c.consumer_group = l.consumer_group AND c.queue_id = l.queue_id AND c."offset" = l."offset"
                  AND c.committed_at >= l.committed_at
                  AND c.committed_at < l.committed_at + INTERVAL {CORROBORATION_WINDOW_SECONDS} SECOND)
        ), commits AS (SELECT * FROM canonical UNION ALL SELECT * FROM uncorroborated),
        broker_files AS (
            SELECT *, ends_with(snapshot_source, 'bak') AS is_bak, starts_with(snapshot_source, 'lmq') AS is_lmq
            FROM ref_offset_snapshots WHERE snapshot_source IN ({sources})
        ), snapshots AS (
            SELECT * FROM broker_files
            QUALIFY NOT is_bak OR NOT bool_or(NOT is_bak) OVER (PARTITION BY cluster, broker, snapshot_at, is_lmq)
        )
        SELECT {QUEUE}, key_kind, committed_at AS event_at, 1 AS event_rank, source_file,
               coalesce(line_no, 0) AS line_rank, "offset" AS commit_offset, CAST(NULL AS BIGINT) AS snapshot_offset,
               line_no, client_host, evidence, commit_path, _file_hash
        FROM commits
        UNION ALL
        SELECT {QUEUE}, key_kind, snapshot_at, 0, source_file, 0, NULL, "offset", NULL, NULL, NULL, NULL, NULL
        FROM snapshots
    """


def _state_sql() -> str:
    """Both semantics per event: two running passes over the same window."""
    return f"""
        WITH first_pass AS (
            SELECT *,
                last_value(commit_offset IGNORE NULLS) OVER before AS prev_commit,
                last_value(snapshot_offset IGNORE NULLS) OVER before AS previous_snapshot_offset,
                last_value(CASE WHEN snapshot_offset IS NOT NULL THEN event_at END IGNORE NULLS) OVER before
                    AS previous_snapshot_at,
                lag(coalesce(commit_offset, snapshot_offset)) OVER queue_order AS previous_stored_offset,
                max(commit_offset) OVER upto AS max_commit_so_far,
                count(snapshot_offset) OVER upto AS snapshot_segment,
                last_value(CASE WHEN commit_offset IS NOT NULL THEN {{'at': event_at, 'host': client_host}} END
                    IGNORE NULLS) OVER before AS previous_commit
            FROM ref_events
            WINDOW queue_order AS (PARTITION BY {QUEUE} ORDER BY {ORDER}),
                   before AS (queue_order ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
                   upto AS (queue_order ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        ), held AS (
            SELECT *, prev_commit IS NOT NULL AND NOT coalesce(
                    previous_snapshot_at >= previous_commit.at + INTERVAL {SNAPSHOT_SETTLE_SECONDS} SECOND, false)
                    AS commit_holds
            FROM first_pass
        ), judged AS (
            SELECT *, coalesce(commit_offset, snapshot_offset) AS stored_offset,
                CASE WHEN commit_offset IS NOT NULL
                     THEN CASE WHEN commit_holds THEN prev_commit ELSE previous_snapshot_offset END END
                    AS stored_offset_before,
                CASE WHEN commit_offset IS NOT NULL AND commit_holds THEN 'commit'
                     WHEN commit_offset IS NOT NULL AND previous_snapshot_offset IS NOT NULL THEN 'snapshot' END
                    AS stored_before_source,
                commit_offset IS NOT NULL AND coalesce(commit_offset <
                    CASE WHEN commit_holds THEN prev_commit ELSE previous_snapshot_offset END, false) AS is_regression,
                previous_commit.at AS previous_commit_at, previous_commit.host AS previous_commit_host,
                CASE WHEN commit_offset IS NULL AND commit_holds
                      AND previous_commit.at <= event_at - INTERVAL {SNAPSHOT_SETTLE_SECONDS} SECOND THEN prev_commit END
                    AS settled_commit_offset
            FROM held
        ), marked AS (
            SELECT *,
                greatest(
                    first_value(CASE WHEN commit_offset IS NOT NULL THEN {{'start': stored_offset_before}} END IGNORE NULLS)
                        OVER (PARTITION BY {QUEUE} ORDER BY {ORDER} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW).start,
                    max_commit_so_far) AS client_mark
            FROM judged
        )
        SELECT *, CASE WHEN commit_offset IS NOT NULL THEN client_mark END AS client_offset_after,
            concat_ws({SEP}, CAST(event_rank AS VARCHAR), {OBSERVATION_PATH}, lpad(CAST(line_rank AS VARCHAR), 12, '0'),
                      _file_hash) AS observation_seq
        FROM marked
    """


def _silver_sql() -> dict[str, str]:
    return {
        "ref_offset_commits_replayed": """
            SELECT cluster, broker, event_at AS committed_at, client_host, topic, consumer_group, key_kind, queue_id,
                   commit_offset AS "offset", evidence, commit_path, stored_offset_before, stored_before_source,
                   client_offset_after, is_regression,
                   CASE WHEN is_regression THEN stored_offset_before - commit_offset END AS regression_size,
                   source_file, line_no, _file_hash, CAST(event_at AS DATE) AS commit_date
            FROM ref_state WHERE commit_offset IS NOT NULL""",
        "ref_stored_offset_timeline": f"""
            SELECT {QUEUE}, event_at AS observed_at, observation_seq,
                   CASE WHEN commit_offset IS NOT NULL THEN 'commit' ELSE 'snapshot' END AS observation,
                   stored_offset, previous_stored_offset,
                   greatest(coalesce(stored_offset - previous_stored_offset, 0), 0) AS consumed_increment,
                   CAST(event_at AS DATE) AS observed_date
            FROM ref_state""",
        "ref_unexplained_regressions": f"""
            WITH segment_regressions AS (
                SELECT {QUEUE}, snapshot_segment, count(*) FILTER (WHERE is_regression) AS regressions
                FROM ref_state GROUP BY ALL
            ), snapshots AS (
                SELECT s.*, s.snapshot_offset < s.previous_snapshot_offset AND coalesce(r.regressions, 0) = 0 AS is_pair
                FROM ref_state s
                LEFT JOIN segment_regressions r
                  ON r.cluster = s.cluster AND r.broker = s.broker AND r.topic = s.topic
                 AND r.consumer_group = s.consumer_group AND r.queue_id = s.queue_id
                 AND r.snapshot_segment = s.snapshot_segment - 1
                WHERE s.commit_offset IS NULL
            ), regressions AS (
                SELECT {QUEUE}, event_at AS detected_at, commit_offset AS "offset", stored_offset_before AS stored_offset,
                       'commit' AS evidence, client_host, evidence AS commit_evidence, commit_path, key_kind,
                       observation_seq, source_file,
                       CASE WHEN commit_offset < prev_commit THEN previous_commit_at END AS previous_commit_at,
                       CASE WHEN commit_offset < prev_commit THEN previous_commit_host END AS previous_commit_host,
                       client_mark
                FROM ref_state WHERE is_regression
                UNION ALL
                SELECT {QUEUE}, event_at, snapshot_offset,
                       CASE WHEN is_pair THEN previous_snapshot_offset ELSE settled_commit_offset END,
                       CASE WHEN is_pair THEN 'snapshot_pair' ELSE 'snapshot_behind_commit' END, NULL, NULL, NULL,
                       key_kind, observation_seq, source_file, previous_commit_at, previous_commit_host, client_mark
                FROM snapshots WHERE is_pair OR snapshot_offset < settled_commit_offset
            )
            SELECT {QUEUE}, detected_at, "offset", stored_offset, stored_offset - "offset" AS regression_size,
                   greatest(stored_offset, client_mark) - "offset" AS messages_consumed_twice, evidence,
                   client_host, commit_evidence, commit_path, key_kind, observation_seq, source_file,
                   CAST(detected_at AS DATE) AS detected_date, previous_commit_at, previous_commit_host
            FROM regressions""",
    }


def _when(column: str) -> str:
    return f"strftime({column}, '%Y-%m-%d %H:%M:%S')"


def _candidates_sql() -> str:
    """Each regression's candidate causes, ranked as pipelines.replay.explain.CAUSES orders them."""
    rank = {name: n for n, name in enumerate(c.name for c in CAUSES)}
    resets = ", ".join(literal(k) for k in RESET_KINDS)
    corrections = ", ".join(literal(k) for k in CORRECTION_KINDS)
    row = "g.regression_row"
    return f"""
        WITH logged AS (
            SELECT {row},
                   CASE WHEN r.reset_kind IN ({resets}) THEN {rank["admin_reset"]} ELSE {rank["server_correction"]} END
                       AS rank,
                   r.source_file, r.line_no, r.reset_at AS cause_at,
                   concat_ws(' ', r.reset_kind, 'at', {_when("r.reset_at")},
                             CASE WHEN r.client_id IS NOT NULL THEN 'by ' || r.client_id END,
                             CASE WHEN r.new_offset IS NOT NULL THEN 'to offset ' || CAST(r.new_offset AS VARCHAR) END)
                       AS detail
            FROM ref_queued_regressions g
            JOIN ref_offset_resets r
              ON g.cluster = r.cluster AND g.broker = r.broker
             AND r.reset_at >= g.detected_at - INTERVAL {LOOKBACK_SECONDS} SECOND
             AND r.reset_at <= g.detected_at + INTERVAL {SLACK_SECONDS} SECOND
             AND (g.previous_regression_at IS NULL
                  OR g.previous_regression_at < r.reset_at - INTERVAL {SLACK_SECONDS} SECOND)
             AND ((r.reset_kind IN ({resets}) AND r.topic = g.topic AND r.consumer_group = g.consumer_group)
               OR (r.reset_kind IN ({corrections})
                   AND (r.topic IS NULL OR r.topic = g.topic)
                   AND (r.consumer_group IS NULL OR r.consumer_group = g.consumer_group)
                   AND (r.new_offset IS NULL OR r.new_offset = g."offset")
                   AND (r.topic IS NOT NULL OR r.new_offset IS NOT NULL)))
        ), minimum AS (
            SELECT {row}, {rank["rewind_to_min"]} AS rank, m.source_file, m.line_no, m.observed_at AS cause_at,
                   format('offset {{:d}} is the queue''s min offset the broker reported at {{}}', m.min_offset,
                          {_when("m.observed_at")}) AS detail,
                   g."offset" = m.min_offset AS is_equal
            FROM ref_queued_regressions g
            JOIN ref_queue_offsets m
              ON g.cluster = m.cluster AND g.broker = m.broker AND g.topic = m.topic AND g.queue_id = m.queue_id
             AND m.min_offset IS NOT NULL AND m.observed_at <= g.detected_at
             AND m.observed_at >= g.detected_at - INTERVAL {MIN_OFFSET_MAX_AGE_SECONDS} SECOND
            QUALIFY row_number() OVER (PARTITION BY {row} ORDER BY m.observed_at DESC, m.source_file, m.line_no) = 1
        ), observed AS (
            SELECT {row}, {rank["stale_commit"]} AS rank, NULL AS source_file, NULL AS line_no,
                   previous_commit_at AS cause_at,
                   CASE WHEN previous_commit_host <> client_host
                        THEN format('the queue was last committed by {{}} at {{}}: {{}} no longer held it',
                                    previous_commit_host, {_when("previous_commit_at")}, client_host)
                        ELSE format('below the client''s own previous commit at {{}}', {_when("previous_commit_at")})
                   END AS detail
            FROM ref_queued_regressions g
            WHERE evidence = 'commit' AND previous_commit_host IS NOT NULL AND client_host IS NOT NULL
            UNION ALL
            SELECT {row}, {rank["failover"]}, source_file, NULL, detected_at,
                   CASE WHEN evidence = 'snapshot_pair'
                        THEN format('snapshot holds {{:d}}, below the previous snapshot''s {{:d}}', "offset", stored_offset)
                        ELSE format('snapshot holds {{:d}}, below the commit of {{:d}} at {{}}', "offset", stored_offset,
                                    {_when("previous_commit_at")})
                   END
            FROM ref_queued_regressions g
            WHERE evidence IN ('snapshot_pair', 'snapshot_behind_commit') AND key_kind <> '{CLIENT_STATE_KIND}'
        ), outputs AS (
            SELECT cluster, consumer_group, observed_at, source_file, max(consume_type) AS consume_type,
                   coalesce(list(DISTINCT client_host) FILTER (WHERE client_host IS NOT NULL), []) AS hosts,
                   min(line_no) AS line_no
            FROM ref_group_connections GROUP BY ALL
        ), membership AS (
            SELECT {row}, g.client_host, o.*
            FROM ref_queued_regressions g
            JOIN outputs o
              ON g.cluster = o.cluster AND g.consumer_group = o.consumer_group AND g.evidence = 'commit'
             AND o.observed_at <= g.detected_at
             AND o.observed_at >= g.detected_at - INTERVAL {CONNECTION_MAX_AGE_SECONDS} SECOND
            QUALIFY row_number() OVER (PARTITION BY {row} ORDER BY o.observed_at DESC, o.source_file DESC) = 1
        )
        SELECT regression_row, rank, 1 AS strength, NULL AS evidence, source_file, line_no, cause_at, detail
        FROM logged
        UNION ALL SELECT regression_row, rank, 1, NULL, source_file, line_no, cause_at, detail FROM minimum WHERE is_equal
        UNION ALL SELECT regression_row, rank, 1, NULL, source_file, line_no, cause_at, detail FROM observed
        UNION ALL
        SELECT regression_row, {rank["client_seek"]}, 1, NULL, source_file, line_no, observed_at,
               format('the group consumed by pull ({PULL} at {{}}): its commits may move back', {_when("observed_at")})
        FROM membership WHERE consume_type = '{PULL}'
        UNION ALL
        SELECT regression_row, {rank["stale_commit"]}, 0, 'bronze/group_connections', source_file, line_no, observed_at,
               format('{{}} was not among the group''s {{:d}} clients at {{}}: it no longer owned the queue',
                      client_host, len(hosts), {_when("observed_at")})
        FROM membership
        WHERE coalesce(consume_type, '') <> '{PULL}' AND client_host IS NOT NULL AND NOT list_contains(hosts, client_host)
    """


def _explained_sql() -> str:
    """The regressions with their causes (as pipelines.replay.explain decides them)."""
    evidence = " ".join(f"WHEN {literal(c.name)} THEN {literal(c.evidence)}" for c in CAUSES if c.evidence)
    return f"""
        WITH chosen AS (
            SELECT * FROM ref_cause_candidates
            QUALIFY row_number() OVER (
                PARTITION BY regression_row
                ORDER BY rank, strength, cause_at DESC NULLS LAST, source_file NULLS FIRST, line_no NULLS FIRST,
                         detail NULLS FIRST) = 1
        ), named AS (
            SELECT g.*, coalesce(list_extract({[c.name for c in CAUSES]}, c.rank + 1), 'unexplained') AS cause,
                   c.evidence AS chosen_evidence, c.source_file AS cause_source_file, c.line_no AS cause_line_no,
                   c.cause_at, c.detail AS cause_detail
            FROM ref_queued_regressions g LEFT JOIN chosen c USING (regression_row)
        )
        SELECT {QUEUE}, detected_at, "offset", stored_offset, regression_size, messages_consumed_twice, evidence,
               client_host, commit_evidence,
               commit_path, key_kind, observation_seq, source_file, cause,
               coalesce(chosen_evidence, CASE cause {evidence} END) AS cause_evidence, cause_source_file, CAST(cause_line_no AS BIGINT) AS cause_line_no,
               cause_at, cause_detail, detected_date
        FROM named
    """


def replay(con: duckdb.DuckDBPyConnection) -> None:
    """Create ref_events, ref_state and the silver ref_* tables (see the module docstring)."""
    con.execute(f"CREATE TABLE ref_events AS {_events_sql()}")
    con.execute(f"CREATE TABLE ref_state AS {_state_sql()}")
    for table, sql in _silver_sql().items():
        con.execute(f"CREATE TABLE {table} AS {sql}")
    con.execute(f"""
        CREATE TABLE ref_queued_regressions AS
        SELECT *, row_number() OVER () AS regression_row,
               lag(detected_at) OVER (PARTITION BY {QUEUE} ORDER BY detected_at, evidence, observation_seq)
                   AS previous_regression_at
        FROM ref_unexplained_regressions""")  # fmt: skip
    con.execute(f"CREATE TABLE ref_cause_candidates AS {_candidates_sql()}")
    con.execute(f"CREATE TABLE ref_offset_regressions AS {_explained_sql()}")
