"""Tumbling windows: the one rule of where a throughput window starts, rendered for each engine.

A window of length L starts at a whole multiple of L since the Unix epoch, so every run, engine
and backfill puts an instant in the same window: with L one hour, 10:59:59.999 is in the window
from 10:00 and 11:00:00 starts the next. The rule is written once, as arithmetic on microseconds
since the epoch (``start = t - t mod L``), and rendered for Python (the gold range a run rewrites),
Spark (the mart) and SQL (the benchmark's DuckDB oracle).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pyspark.sql import Column
from pyspark.sql import functions as F

from schemas.instants import EPOCH, utc


def window_micros(window: timedelta) -> int:
    """The window's length in microseconds (a positive whole number of seconds)."""
    micros = window // timedelta(microseconds=1)
    if micros <= 0 or micros % 1_000_000:
        raise ValueError(f"a throughput window is a positive whole number of seconds, not {window}")
    return micros


def window_seconds(window: timedelta) -> int:
    return window_micros(window) // 1_000_000


def _start(micros, length: int):
    """The rule itself, on microseconds since the epoch (ints or Spark columns alike)."""
    return micros - micros % length


def window_start(moment: datetime, window: timedelta) -> datetime:
    """Start of the window holding ``moment`` (an aware instant, or naive UTC)."""
    micros = (utc(moment) - EPOCH) // timedelta(microseconds=1)
    return EPOCH + timedelta(microseconds=_start(micros, window_micros(window)))


def window_end(moment: datetime, window: timedelta) -> datetime:
    """End of the window holding the last instant before ``moment``: a range that ends (exclusive)
    at ``moment`` touches no window from there on."""
    return window_start(utc(moment) - timedelta(microseconds=1), window) + window


def window_start_column(at: Column, window: timedelta) -> Column:
    """Start of the window holding each timestamp of ``at``."""
    return F.timestamp_micros(_start(F.unix_micros(at), window_micros(window)))


def window_start_sql(at: str, window: timedelta) -> str:
    """Start of the window holding each timestamp of the SQL expression ``at`` (DuckDB)."""
    length = window_micros(window)
    return f"make_timestamp(epoch_us({at}) - epoch_us({at}) % {length})"
