"""Lag in seconds on rows whose answer is known by construction (no Spark)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipelines.marts.time_lag import lag_micros, lag_seconds_rows

S = 1_000_000
DAY = 86_400 * S


def test_a_producer_writing_one_message_a_second_puts_offset_c_at_second_c():
    # the log end is at 1000 + t at second t, observed every minute for an hour
    point_at = np.arange(0, 3601, 60) * S
    point_offset = 1000 + np.arange(0, 3601, 60)
    ask_at = np.array([3600, 3600, 1800, 3600, 3600]) * S
    consumer = np.array([4000, 4599, 2500, 4600, 900])
    upper = 1000 + ask_at // S
    lag, bounded = lag_micros(point_at, point_offset, ask_at, consumer, upper, DAY)
    # c - 1000 seconds in: 3000 s, 3599 s, 1500 s; caught up; older than the first point (t 0): at least 3600 s
    assert lag.tolist() == [600 * S, 1 * S, 300 * S, 0, 3600 * S]
    assert bounded.tolist() == [False, False, False, False, True]


def test_between_two_observations_the_log_end_moves_linearly_to_the_microsecond():
    point_at, point_offset = np.array([0, 7 * S]), np.array([10, 13])
    # 11 is a third of the way from 10 to 13: at 7/3 s, floored to the microsecond
    lag, bounded = lag_micros(point_at, point_offset, np.array([7 * S]), np.array([11]), np.array([13]), DAY)
    assert lag.tolist() == [7 * S - 2_333_333] and not bounded[0]


def test_only_the_history_before_the_observation_counts():
    point_at = np.array([0, 60, 120, 180]) * S
    point_offset = np.array([100, 160, 220, 280])
    # at 180 s with a history of 90 s, the points at 120 and 180 are all there is: 130 is older than 120
    lag, bounded = lag_micros(
        point_at, point_offset, np.array([180 * S]), np.array([130]), np.array([280]), 90 * S
    )
    assert (lag.tolist(), bounded.tolist()) == ([60 * S], [True])
    # a point after the observation is never read: at 120 s, 219 was passed between 60 and 120
    lag, _ = lag_micros(point_at, point_offset, np.array([120 * S]), np.array([219]), np.array([220]), DAY)
    assert lag.tolist() == [1 * S]


def test_after_a_truncation_the_last_time_the_log_end_was_at_most_the_offset_counts():
    # the queue was rebuilt at 60 s: 100 -> 50, then grows again
    point_at, point_offset = np.array([0, 60, 120]) * S, np.array([100, 50, 80])
    lag, bounded = lag_micros(
        point_at, point_offset, np.array([120 * S]), np.array([60]), np.array([80]), DAY
    )
    assert (lag.tolist(), bounded.tolist()) == ([40 * S], [False])  # 60 was passed at 80 s


def test_no_consumer_offset_or_no_history_gives_no_lag_in_seconds():
    lag, _ = lag_micros(
        np.array([0]), np.array([5]), np.array([0, 10 * DAY]), np.array([-1, 1]), np.array([5, 9]), DAY
    )
    assert lag.tolist() == [-1, -1]


def test_the_rows_of_a_partition_get_their_own_queues_history():
    table = pa.table(
        {
            "_bq": [1, 0, 0, 1, 0, 1],
            "_is_point": [True, True, False, True, True, False],
            "_at": [0, 0, 60 * S, 60 * S, 60 * S, 60 * S],
            "_offset": [10, 100, 130, 70, 160, None],
            "broker_offset": [None, None, 160, None, None, 70],
            "queue_id": [None, None, 0, None, None, 1],
        }
    )
    got = lag_seconds_rows(table, DAY)
    assert got.column_names == ["broker_offset", "queue_id", "lag_seconds", "is_lag_seconds_bounded"]
    assert got.to_pylist() == [
        {"broker_offset": 160, "queue_id": 0, "lag_seconds": 30.0, "is_lag_seconds_bounded": False},
        {"broker_offset": 70, "queue_id": 1, "lag_seconds": None, "is_lag_seconds_bounded": None},
    ]
