"""OffsetLake's gold marts in DuckDB SQL, over ref_queue_offsets and ref_stored_offset_timeline.

    ref_consumer_lag            gold/consumer_lag: broker offset minus the stored offset as of each
                                observation (ASOF join on the timeline's last observation at or before it)
    ref_consumer_lag_by_group   gold/consumer_lag_by_group
    ref_consume_throughput      gold/consume_throughput: positive increments per epoch-aligned window
    ref_duplicate_exposure      gold/duplicate_exposure: the regressions' duplicate exposure per group and UTC day

A topicStatus row (no group) stands for every group known on that broker and topic; where
a group's own consumerProgress row gives the same queue and instant, that row is used.
"""

from __future__ import annotations

from datetime import timedelta

import duckdb

from jobs.tools.bench.oracle.sql_text import literal
from pipelines.marts.exposure import DAY
from pipelines.marts.windows import window_seconds, window_start_sql
from pipelines.replay.explain import INTENDED_CAUSES

QUEUE = "cluster, broker, topic, consumer_group, queue_id"


def _lag_sql() -> str:
    return f"""
        WITH observed AS (SELECT * FROM ref_queue_offsets WHERE max_offset IS NOT NULL),
        known AS (SELECT DISTINCT cluster, broker, topic, consumer_group FROM ref_stored_offset_timeline),
        candidates AS (
            SELECT * FROM observed WHERE consumer_group IS NOT NULL
            UNION ALL
            SELECT o.cluster, o.broker, o.observed_at, o.topic, o.queue_id, o.max_offset, o.min_offset, k.consumer_group,
                   o.consumer_offset, o.evidence, o.source_file, o.line_no, o._file_hash
            FROM observed o JOIN known k USING (cluster, broker, topic)
            WHERE o.consumer_group IS NULL
        ), observations AS (
            SELECT {QUEUE}, observed_at, max_offset AS broker_offset, min_offset AS broker_min_offset,
                   consumer_offset AS reported_consumer_offset
            FROM candidates
            QUALIFY row_number() OVER (
                PARTITION BY {QUEUE}, observed_at
                ORDER BY CASE WHEN evidence = 'consumer_progress' THEN 0 ELSE 1 END, source_file, line_no) = 1
        ), stored AS (
            SELECT {QUEUE}, observed_at, arg_max(stored_offset, observation_seq) AS stored_offset
            FROM ref_stored_offset_timeline GROUP BY ALL
        )
        SELECT o.cluster, o.broker, o.topic, o.consumer_group, o.queue_id, o.observed_at, o.broker_offset,
               o.broker_min_offset, s.stored_offset AS consumer_offset, s.observed_at AS consumer_offset_at,
               o.reported_consumer_offset, o.broker_offset - s.stored_offset AS lag_messages,
               CAST(o.observed_at AS DATE) AS observed_date
        FROM observations o
        ASOF LEFT JOIN stored s
          ON o.cluster = s.cluster AND o.broker = s.broker AND o.topic = s.topic
         AND o.consumer_group = s.consumer_group AND o.queue_id = s.queue_id AND o.observed_at >= s.observed_at
    """


_LAG_BY_GROUP_SQL = """
    WITH grouped AS (
        SELECT cluster, topic, consumer_group, observed_at, count(*) AS queues,
               CAST(sum(lag_messages) AS BIGINT) AS total_lag_messages,
               max(CASE WHEN lag_messages IS NOT NULL THEN {'lag': lag_messages, 'broker': broker, 'queue_id': queue_id} END)
                   AS worst
        FROM ref_consumer_lag GROUP BY ALL
    )
    SELECT cluster, topic, consumer_group, observed_at, queues, total_lag_messages, worst.lag AS worst_lag_messages,
           worst.broker AS worst_broker, worst.queue_id AS worst_queue_id, CAST(observed_at AS DATE) AS observed_date
    FROM grouped
"""


def _throughput_sql(window: timedelta) -> str:
    seconds = window_seconds(window)
    return f"""
        WITH windowed AS (
            SELECT *, {window_start_sql("observed_at", window)} AS window_start
            FROM ref_stored_offset_timeline
        ), summed AS (
            SELECT cluster, topic, consumer_group, window_start, CAST(sum(consumed_increment) AS BIGINT) AS messages_consumed,
                   count(*) AS observations
            FROM windowed GROUP BY ALL
        )
        SELECT cluster, topic, consumer_group, window_start,
               window_start + INTERVAL {seconds} SECOND AS window_end, messages_consumed,
               CAST(messages_consumed AS DOUBLE) / {seconds} AS messages_per_second, observations,
               CAST(window_start AS DATE) AS window_date
        FROM summed
    """


def _exposure_sql() -> str:
    intended = ", ".join(literal(c) for c in INTENDED_CAUSES)
    return f"""
        WITH daily AS (SELECT *, {window_start_sql("detected_at", DAY)} AS day_start FROM ref_offset_regressions)
        SELECT cluster, topic, consumer_group, day_start, count(*) AS regressions,
               count(DISTINCT (broker, queue_id)) AS queues,
               CAST(sum(regression_size) AS BIGINT) AS extra_deliveries,
               CAST(sum(CASE WHEN cause NOT IN ({intended}) THEN regression_size ELSE 0 END) AS BIGINT)
                   AS unintended_extra_deliveries,
               max(messages_consumed_twice) AS largest_messages_consumed_twice,
               count(*) FILTER (WHERE cause = 'unexplained') AS unexplained_regressions,
               min(detected_at) AS first_detected_at, max(detected_at) AS last_detected_at,
               CAST(day_start AS DATE) AS day
        FROM daily GROUP BY ALL
    """


def build_marts(con: duckdb.DuckDBPyConnection, throughput_window: timedelta) -> None:
    """Create the gold ref_* tables (see the module docstring)."""
    con.execute(f"CREATE TABLE ref_consumer_lag AS {_lag_sql()}")
    con.execute(f"CREATE TABLE ref_consumer_lag_by_group AS {_LAG_BY_GROUP_SQL}")
    con.execute(f"CREATE TABLE ref_consume_throughput AS {_throughput_sql(throughput_window)}")
    con.execute(f"CREATE TABLE ref_duplicate_exposure AS {_exposure_sql()}")
