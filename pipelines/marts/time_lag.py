"""Lag in seconds: how long ago the broker's log end was at the consumer's offset.

For an observation of a queue at T with consumer offset c below the broker's max offset M,
the queue's max-offset observations of the ``history`` before T (its points, time t and max
offset m) give when the log end was at c:

- a = the latest point with m <= c, b = the point after it (every point after a has m > c);
  the log end passed c between them, at ``t_a + (c - m_a) / (m_b - m_a) * (t_b - t_a)``
  (linear between the two; floored to the microsecond), and the lag is T minus that;
- no point of the history has m <= c: the offset is older than the first observation, and
  the lag is at least T minus the first point's time: that bound, flagged ``is_bounded``;
- c >= M, or no point after a (the log end was last seen at or below c): lag 0; c null, or
  no point at all in the history: no lag in seconds.

Unlike an online estimator (kafka-lag-exporter extrapolates from a table of the last 60
points), hindsight has points on both sides of c. Example, points (10:00, 100), (10:01, 160),
(10:02, 220)::

    at 10:02, c 130 -> the log end was at 130 at 10:00:30 -> 90 s
    at 10:02, c  50 -> older than 10:00, the first point   -> at least 120 s (bounded)
    at 10:02, c 220 -> caught up                            -> 0 s

The rule works on microseconds and doubles so that another engine gets the same values
(jobs.tools.bench.oracle renders it in SQL): the fraction and its product are one IEEE division
and one multiplication, then floored.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MICROS = 1_000_000


def lag_micros(
    point_at: np.ndarray,
    point_offset: np.ndarray,
    ask_at: np.ndarray,
    ask_offset: np.ndarray,
    ask_max: np.ndarray,
    history_micros: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(lag in microseconds, is_bounded) of each ask of one queue (see the module docstring).

    ``point_at``/``point_offset``: the queue's points in time order (one per instant);
    ``ask_*``: each ask's time, consumer offset (a negative value stands for none: lag -1) and
    the broker's max offset it was observed with. Times are microseconds since the epoch.
    """
    lag = np.full(len(ask_at), -1, dtype=np.int64)
    bounded = np.zeros(len(ask_at), dtype=bool)
    if not len(ask_at):
        return lag, bounded
    known = ask_offset >= 0
    caught_up = known & (ask_offset >= ask_max)
    lag[caught_up] = 0
    behind = np.flatnonzero(known & ~caught_up)
    lo = np.searchsorted(point_at, ask_at[behind] - history_micros, side="left")
    hi = np.searchsorted(point_at, ask_at[behind], side="right") - 1
    c = ask_offset[behind]
    if np.all(np.diff(point_offset) >= 0):
        # the max offset only grew: the points with m <= c are a prefix
        a = np.searchsorted(point_offset, c, side="right") - 1
        a = np.where(a >= lo, a, -1)
    else:
        a = np.array(
            [_latest_at_most(point_offset, low, high, value) for low, high, value in zip(lo, hi, c)],
            dtype=np.int64,
        )
    # an ask whose history is empty (no point at or before it) has no lag in seconds; one whose
    # last point is at most c (the log end had not passed c when last seen) has none behind it
    empty = hi < lo
    found = (a >= 0) & (a < hi) & ~empty
    passed_none = (a >= hi) & ~empty
    at = ask_at[behind]
    ia, ib = np.where(found, a, 0), np.where(found, a + 1, 0)
    fraction = (c - point_offset[ia]).astype(np.float64) / np.maximum(
        point_offset[ib] - point_offset[ia], 1
    ).astype(np.float64)
    passed = point_at[ia] + np.floor(fraction * (point_at[ib] - point_at[ia]).astype(np.float64)).astype(
        np.int64
    )
    first = point_at[np.where(empty, 0, lo)] if len(point_at) else np.zeros(len(lo), np.int64)
    lag[behind] = np.where(found, at - passed, np.where(empty, -1, np.where(passed_none, 0, at - first)))
    bounded[behind] = (a < 0) & ~empty
    return lag, bounded


def _latest_at_most(values: np.ndarray, low: int, high: int, bound: int) -> int:
    """Index of the last of ``values[low:high + 1]`` at most ``bound``; -1 if none."""
    hits = np.flatnonzero(values[low : high + 1] <= bound)
    return int(low + hits[-1]) if hits.size else -1


# the columns the Spark side adds for the kernel (pipelines.marts.lag.with_lag_seconds)
QUEUE_NUMBER, IS_POINT, AT_MICROS, OFFSET = "_bq", "_is_point", "_at", "_offset"
HELPERS = (QUEUE_NUMBER, IS_POINT, AT_MICROS, OFFSET)


def lag_seconds_rows(table: pa.Table, history_micros: int) -> pa.Table:
    """The observations of a partition with ``lag_seconds`` and ``is_lag_seconds_bounded``.

    ``table`` holds whole queues (``QUEUE_NUMBER``): their points (``IS_POINT``, ``AT_MICROS``,
    ``OFFSET`` the max offset; one per instant) and their observations (``AT_MICROS``, ``OFFSET``
    the consumer offset, ``broker_offset``), in any order. Returns the observations without
    ``HELPERS``, both columns added (null where there is no lag in seconds).
    """
    n = table.num_rows
    queue = table.column(QUEUE_NUMBER).to_numpy()
    is_point = table.column(IS_POINT).to_numpy(zero_copy_only=False)
    at = table.column(AT_MICROS).to_numpy()
    offset = pc.fill_null(table.column(OFFSET), -1).to_numpy()
    upper = pc.fill_null(table.column("broker_offset"), 0).to_numpy()
    lag, bounded = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool)
    order = np.lexsort((at, queue))
    cuts = np.flatnonzero(np.diff(queue[order])) + 1
    for rows in np.split(order, cuts) if n else ():
        points, asks = rows[is_point[rows]], rows[~is_point[rows]]
        lag[asks], bounded[asks] = lag_micros(
            at[points], offset[points], at[asks], offset[asks], upper[asks], history_micros
        )
    observed = ~is_point
    found = lag[observed] >= 0
    seconds = pa.array(lag[observed] / MICROS, pa.float64(), mask=~found)
    flag = pa.array(bounded[observed], pa.bool_(), mask=~found)
    kept = table.filter(pa.array(observed)).drop_columns(list(HELPERS))
    return kept.append_column("lag_seconds", seconds).append_column("is_lag_seconds_bounded", flag)
