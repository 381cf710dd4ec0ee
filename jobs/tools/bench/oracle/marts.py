"""OffsetLake's gold marts in DuckDB SQL, over ref_queue_offsets and ref_stored_offset_timeline.

    ref_consumer_lag            gold/consumer_lag: broker offset minus the stored offset as of each
                                observation (ASOF join on the timeline's last observation at or before it),
                                and how long ago the log end was there (the max-offset points around it)
    ref_consumer_lag_by_group   gold/consumer_lag_by_group
    ref_produce_throughput      gold/produce_throughput: positive max-offset increments per queue and window
    ref_consume_throughput      gold/consume_throughput: positive increments per epoch-aligned window, and
                                the topic's produced messages beside them
    ref_duplicate_exposure      gold/duplicate_exposure: the regressions' duplicate exposure per group and UTC day
    ref_consumer_status         gold/consumer_status: each group's status per window, by the same rules

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
from schemas.config import Settings, StatusSettings

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


_POINTS_SQL = """
    WITH points AS (
        SELECT cluster, broker, topic, queue_id, observed_at, max(max_offset) AS max_offset
        FROM ref_queue_offsets WHERE max_offset IS NOT NULL GROUP BY ALL
    )
    SELECT *, epoch_us(observed_at) AS at_us,
           row_number() OVER (PARTITION BY cluster, broker, topic, queue_id ORDER BY observed_at) AS n
    FROM points
"""


def _lag_seconds_sql(history: timedelta) -> str:
    """ref_consumer_lag: the lag rows with lag in seconds, as pipelines.marts.time_lag computes it."""
    micros = history // timedelta(microseconds=1)
    same = " AND ".join(f"{{p}}.{c} = b.{c}" for c in ("cluster", "broker", "topic", "queue_id"))
    return f"""
        WITH asks AS (SELECT *, row_number() OVER () AS ask FROM ref_consumer_lag_messages),
        behind AS (SELECT * FROM asks WHERE consumer_offset IS NOT NULL AND consumer_offset < broker_offset),
        found AS (
            SELECT b.ask, max(p.n) FILTER (WHERE p.max_offset <= b.consumer_offset) AS na, min(p.n) AS nlo, max(p.n) AS nhi
            FROM behind b JOIN ref_max_offset_points p
              ON {same.format(p="p")} AND p.at_us <= epoch_us(b.observed_at)
             AND p.at_us >= epoch_us(b.observed_at) - {micros}
            GROUP BY b.ask
        ), measured AS (
            SELECT f.ask, f.na IS NULL AS bounded,
                   CASE WHEN f.na IS NULL THEN epoch_us(b.observed_at) - lo.at_us
                        WHEN f.na >= f.nhi THEN 0
                        ELSE epoch_us(b.observed_at) - (pa.at_us + CAST(floor(
                            CAST(b.consumer_offset - pa.max_offset AS DOUBLE) / CAST(pb.max_offset - pa.max_offset AS DOUBLE)
                            * CAST(pb.at_us - pa.at_us AS DOUBLE)) AS BIGINT))
                   END AS lag_us
            FROM found f JOIN behind b USING (ask)
            JOIN ref_max_offset_points lo ON {same.format(p="lo")} AND lo.n = f.nlo
            LEFT JOIN ref_max_offset_points pa ON {same.format(p="pa")} AND pa.n = f.na
            LEFT JOIN ref_max_offset_points pb ON {same.format(p="pb")} AND pb.n = f.na + 1
        )
        SELECT a.cluster, a.broker, a.topic, a.consumer_group, a.queue_id, a.observed_at, a.broker_offset,
               a.broker_min_offset, a.consumer_offset, a.consumer_offset_at, a.reported_consumer_offset, a.lag_messages,
               CASE WHEN a.consumer_offset IS NULL THEN NULL WHEN a.consumer_offset >= a.broker_offset THEN 0.0
                    ELSE CAST(m.lag_us AS DOUBLE) / 1000000 END AS lag_seconds,
               CASE WHEN a.consumer_offset IS NULL THEN NULL WHEN a.consumer_offset >= a.broker_offset THEN false
                    WHEN m.lag_us IS NOT NULL THEN m.bounded END AS is_lag_seconds_bounded,
               a.observed_date
        FROM asks a LEFT JOIN measured m USING (ask)
    """


_LAG_BY_GROUP_SQL = """
    WITH grouped AS (
        SELECT cluster, topic, consumer_group, observed_at, count(*) AS queues,
               CAST(sum(lag_messages) AS BIGINT) AS total_lag_messages,
               max(CASE WHEN lag_messages IS NOT NULL THEN {'lag': lag_messages, 'broker': broker, 'queue_id': queue_id} END)
                   AS worst,
               max(CASE WHEN lag_seconds IS NOT NULL THEN {'s': lag_seconds, 'bounded': is_lag_seconds_bounded} END)
                   AS oldest
        FROM ref_consumer_lag GROUP BY ALL
    )
    SELECT cluster, topic, consumer_group, observed_at, queues, total_lag_messages, worst.lag AS worst_lag_messages,
           worst.broker AS worst_broker, worst.queue_id AS worst_queue_id, oldest.s AS worst_lag_seconds,
           oldest.bounded AS is_worst_lag_seconds_bounded, CAST(observed_at AS DATE) AS observed_date
    FROM grouped
"""


def _produce_sql(window: timedelta, history: timedelta) -> str:
    seconds, micros = window_seconds(window), history // timedelta(microseconds=1)
    return f"""
        WITH changes AS (
            SELECT *, CASE WHEN at_us - lag(at_us) OVER w <= {micros} THEN max_offset - lag(max_offset) OVER w END AS change,
                   {window_start_sql("observed_at", window)} AS window_start
            FROM ref_max_offset_points
            WINDOW w AS (PARTITION BY cluster, broker, topic, queue_id ORDER BY observed_at)
        ), summed AS (
            SELECT cluster, broker, topic, queue_id, window_start,
                   CAST(coalesce(sum(CASE WHEN change > 0 THEN change END), 0) AS BIGINT) AS messages_produced,
                   count(*) AS observations, count(*) FILTER (WHERE change < 0) AS max_offset_decreases,
                   max(max_offset) AS max_offset
            FROM changes GROUP BY ALL
        )
        SELECT cluster, broker, topic, queue_id, window_start, window_start + INTERVAL {seconds} SECOND AS window_end,
               messages_produced, CAST(messages_produced AS DOUBLE) / {seconds} AS messages_per_second, observations,
               max_offset_decreases, max_offset, CAST(window_start AS DATE) AS window_date
        FROM summed
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
        ), produced AS (
            SELECT cluster, topic, window_start, CAST(sum(messages_produced) AS BIGINT) AS messages_produced
            FROM ref_produce_throughput GROUP BY ALL
        )
        SELECT cluster, topic, consumer_group, window_start,
               window_start + INTERVAL {seconds} SECOND AS window_end, messages_consumed,
               CAST(messages_consumed AS DOUBLE) / {seconds} AS messages_per_second, observations,
               CAST(window_start AS DATE) AS window_date, messages_produced,
               CAST(messages_produced AS DOUBLE) / {seconds} AS produced_per_second
        FROM summed LEFT JOIN produced USING (cluster, topic, window_start)
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


def _status_sql(status: StatusSettings) -> str:
    """ref_consumer_status: pipelines.marts.status's rules in SQL."""
    window, allowed = status.window, status.allowed_lag_messages
    seconds, group = window_seconds(window), "cluster, topic, consumer_group, window_start"

    def ws(at: str) -> str:
        return window_start_sql(at, window)

    def when(at: str) -> str:
        return f"strftime({at}, '%Y-%m-%d %H:%M:%S')"

    return f"""
        WITH stepped AS (
            SELECT *, lag(total_lag_messages) OVER (PARTITION BY {group} ORDER BY observed_at) AS previous
            FROM (SELECT *, {ws("observed_at")} AS window_start FROM ref_consumer_lag_by_group
                  WHERE total_lag_messages IS NOT NULL)
        ), lag_side AS (
            SELECT {group}, count(*) AS lag_observations, arg_min(total_lag_messages, observed_at) AS first_lag_messages,
                   arg_max(total_lag_messages, observed_at) AS last_lag_messages, min(total_lag_messages) AS least_lag,
                   count(*) FILTER (WHERE total_lag_messages < previous) AS decreases, max(observed_at) AS last_observed_at,
                   max(worst_lag_seconds) AS worst_lag_seconds
            FROM stepped GROUP BY ALL
        ), expired AS (
            SELECT cluster, topic, consumer_group, {ws("observed_at")} AS window_start,
                   max(broker_min_offset - consumer_offset) AS expired_messages, min(observed_at) AS expired_at
            FROM ref_consumer_lag WHERE consumer_offset < broker_min_offset GROUP BY ALL
        ), progress AS (
            SELECT cluster, topic, consumer_group, {ws("observed_at")} AS window_start,
                   count(*) FILTER (WHERE observation = 'commit') AS commits,
                   CAST(sum(consumed_increment) AS BIGINT) AS messages_consumed
            FROM ref_stored_offset_timeline GROUP BY ALL
        ), rewinds AS (
            SELECT cluster, topic, consumer_group, {ws("detected_at")} AS window_start, count(*) AS regressions,
                   min({{'detected_at': detected_at, 'broker': broker, 'queue_id': queue_id, 'cause': cause}}) AS first
            FROM ref_offset_regressions GROUP BY ALL
        ), keys AS (
            SELECT {group} FROM lag_side UNION SELECT {group} FROM rewinds
        ), joined AS (
            SELECT k.*, l.* EXCLUDE (cluster, topic, consumer_group, window_start), e.expired_messages, e.expired_at,
                   coalesce(p.commits, 0) AS commits, coalesce(p.messages_consumed, 0) AS messages_consumed,
                   coalesce(r.regressions, 0) AS regressions, r.first
            FROM keys k
            LEFT JOIN lag_side l USING (cluster, topic, consumer_group, window_start)
            LEFT JOIN expired e USING (cluster, topic, consumer_group, window_start)
            LEFT JOIN progress p USING (cluster, topic, consumer_group, window_start)
            LEFT JOIN rewinds r USING (cluster, topic, consumer_group, window_start)
        ), decided AS (
            SELECT *, CASE
                WHEN expired_messages IS NOT NULL THEN 'ERR'
                WHEN regressions > 0 THEN 'REWIND'
                WHEN coalesce(last_lag_messages > {allowed}, false) AND messages_consumed = 0 AND commits = 0 THEN 'STOP'
                WHEN coalesce(last_lag_messages > {allowed}, false) AND messages_consumed = 0 THEN 'STALL'
                WHEN coalesce(lag_observations >= {status.min_lag_observations} AND least_lag > {allowed}
                              AND decreases = 0 AND last_lag_messages > first_lag_messages, false) THEN 'WARN'
                ELSE 'OK' END AS status
            FROM joined
        )
        SELECT cluster, topic, consumer_group, window_start, window_start + INTERVAL {seconds} SECOND AS window_end, status,
               CASE status
                   WHEN 'ERR' THEN format('{{:d}} messages expired before they were consumed (seen {{}})', expired_messages,
                                          {when("expired_at")})
                   WHEN 'REWIND' THEN format('{{:d}} regressions, the first at {{}} on {{}} q{{:d}} ({{}})', regressions,
                                             {when("first.detected_at")}, first.broker, first.queue_id, first.cause)
                   WHEN 'STOP' THEN format('lag {{:d}} at {{}} and no commit in the window', last_lag_messages,
                                           {when("last_observed_at")})
                   WHEN 'STALL' THEN format('{{:d}} commits but no message consumed; lag {{:d}} at {{}}', commits,
                                            last_lag_messages, {when("last_observed_at")})
                   WHEN 'WARN' THEN format('lag grew over {{:d}} observations, from {{:d}} to {{:d}}', lag_observations,
                                           first_lag_messages, last_lag_messages)
                   ELSE format('lag {{:d}} at {{}}', coalesce(last_lag_messages, 0), {when("last_observed_at")})
               END AS status_reason,
               CASE status WHEN 'ERR' THEN expired_at WHEN 'REWIND' THEN first.detected_at ELSE last_observed_at END
                   AS evidence_at,
               coalesce(lag_observations, 0) AS lag_observations, first_lag_messages, last_lag_messages, worst_lag_seconds,
               commits, messages_consumed, regressions, expired_messages, CAST(window_start AS DATE) AS window_date
        FROM decided
    """


def build_marts(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    """Create the gold ref_* tables (see the module docstring)."""
    throughput_window, lag_history = settings.replay.throughput_window, settings.replay.lag_history
    con.execute(f"CREATE TABLE ref_consumer_lag_messages AS {_lag_sql()}")
    con.execute(f"CREATE TABLE ref_max_offset_points AS {_POINTS_SQL}")
    con.execute(f"CREATE TABLE ref_consumer_lag AS {_lag_seconds_sql(lag_history)}")
    con.execute(f"CREATE TABLE ref_consumer_lag_by_group AS {_LAG_BY_GROUP_SQL}")
    con.execute(f"CREATE TABLE ref_produce_throughput AS {_produce_sql(throughput_window, lag_history)}")
    con.execute(f"CREATE TABLE ref_consume_throughput AS {_throughput_sql(throughput_window)}")
    con.execute(f"CREATE TABLE ref_duplicate_exposure AS {_exposure_sql()}")
    con.execute(f"CREATE TABLE ref_consumer_status AS {_status_sql(settings.status)}")
