"""A log line's local time to UTC, in a zone whose clocks change (daylight saving).

Logback writes a line's time as the zone's wall clock, without its offset. Where the zone's
clocks go back (Europe/Berlin, last Sunday of October, 03:00 CEST -> 02:00 CET), the hour
before the change is written twice: ``02:30:00`` is two instants an hour apart. Spark's
conversion takes the earlier one, so every line of the second pass would land an hour early,
among the first pass's lines, and the replay would order commits wrongly.

A log is written in time order, so its lines tell which pass a line belongs to: the clock
went back before a line of the repeated hour when an earlier line of its file, in the same
repeated hour, says a time more than ``CLOCK_BACK`` later (a few lines written out of order
by a busy appender are seconds apart, the change is half an hour or more). The lines after
that step are the second pass; the lines before it, the first. A file whose lines of the
repeated hour show no step (it holds one pass only, or too few lines to tell) cannot say which
pass they are: they are quarantined with the reason, not guessed. A wall-clock time the zone
skips when its clocks go forward is no time such a log can hold: quarantined too (the zone
setting is likely wrong).

A collector copying a live log lands it in copies, each continuing the one before (jobs.io.growth).
Near a change the copy is read whole, so that every line of the file orders the repeated hour;
the lines the continued copy already landed are marked ``_landed_before`` and dropped once their
times are placed. The continued copy held the lines before ``_first_line``: it placed (and landed)
its lines of a repeated hour if a step back shows among them, else it quarantined them, and they
are read again here for good.

Zones without such changes in RocketMQ's time (GMT+8, UTC) skip this work entirely
(``clocks_change``), and a copy is read whole only near a change (``clock_change_near``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

# a backward step between two lines of the repeated hour larger than this is the clock going back:
# no zone changes by less than 30 minutes, and lines out of order by a busy appender are seconds apart
CLOCK_BACK = timedelta(minutes=15)
# RocketMQ and its logs are later than this: a zone's changes before it do not matter
FIRST_YEAR = 2000
LAST_YEAR = 2100

REPEATED_HOUR = (
    "local time in the hour its zone repeats when clocks go back, and its file's lines do not show "
    "which of the two it is"
)
SKIPPED_HOUR = "local time its zone skips when clocks go forward: is the log's timezone setting right?"


# a copy taken this long after a change may still hold the lines of its repeated hour; its new lines
# may too, when the copy before it was taken before the change
NEAR_BEFORE = timedelta(days=1)
NEAR_AFTER = timedelta(hours=1)


def clock_change_near(zone: str, at: datetime) -> bool:
    """Whether ``zone``'s clocks changed (or change) between ``at`` less a day and ``at`` plus an
    hour: a copy of a log taken at ``at`` may hold lines of the hour the change repeated."""
    tz = ZoneInfo(zone)
    return (at - NEAR_BEFORE).astimezone(tz).utcoffset() != (at + NEAR_AFTER).astimezone(tz).utcoffset()


@cache
def clocks_change(zone: str) -> bool:
    """Whether ``zone``'s offset from UTC ever changes between FIRST_YEAR and LAST_YEAR (daylight
    saving, or a change of standard time), so that its wall clock repeats or skips times."""
    tz = ZoneInfo(zone)
    offsets = {
        datetime(year, month, 1, tzinfo=tz).utcoffset()
        for year in range(FIRST_YEAR, LAST_YEAR)
        for month in range(1, 13)
    }
    return len(offsets) > 1


def _micros(ts: Column) -> Column:
    return F.unix_micros(ts)


def with_utc_times(
    rows: DataFrame, local: Column, zone: Column, file_key: list[str], order: str
) -> DataFrame:
    """``rows`` with ``_utc`` (``local``, a wall-clock time in ``zone``, as UTC; null where it cannot
    be told), ``_in_skipped_hour`` and ``_in_repeated_hour_unresolved`` (see the module docstring).
    ``file_key`` names a file's rows, ``order`` their order in it (the line number). Where the rows
    carry ``_first_line`` (a copy read whole), ``_landed_before`` marks those the continued copy
    landed."""
    early = F.to_utc_timestamp(local, zone)  # where the wall clock repeats: its first instant
    later = early + F.expr("INTERVAL 3 HOURS")  # past any change near ``early``: the offset after it
    offset_after = _micros(F.from_utc_timestamp(later, zone)) - _micros(later)
    late = F.timestamp_micros(_micros(local) - offset_after)
    repeated = (late != early) & (F.from_utc_timestamp(late, zone) == local)
    marked = rows.withColumns(
        {
            "_local": local,
            "_early": early,
            "_late": F.when(repeated, late),
            "_in_skipped_hour": F.coalesce(F.from_utc_timestamp(early, zone) != local, F.lit(False)),
        }
    )
    before_first = F.col(order) < F.col("_first_line") if "_first_line" in rows.columns else F.lit(False)
    plain = marked.where(F.col("_late").isNull()).withColumns(
        {
            "_utc": F.when(~F.col("_in_skipped_hour"), F.col("_early")),
            "_in_repeated_hour_unresolved": F.lit(False),
            "_landed_before": before_first,
        }
    )
    # the repeated hours' lines alone are ordered: a file's, of one day (a zone goes back once a day at most)
    in_file = Window.partitionBy(*file_key, F.to_date("_local")).orderBy(order)
    before = in_file.rowsBetween(Window.unboundedPreceding, -1)
    went_back = (_micros(F.max("_local").over(before)) - _micros(F.col("_local"))) > int(
        CLOCK_BACK / timedelta(microseconds=1)
    )
    stepped = marked.where(F.col("_late").isNotNull()).withColumn(
        "_step", F.coalesce(went_back, F.lit(False))
    )
    after_step = F.max("_step").over(in_file.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    in_day = Window.partitionBy(*file_key, F.to_date("_local"))
    any_step = F.max("_step").over(in_day)
    # the continued copy placed its lines of the hour if its own lines, those before _first_line, show a step
    placed_before = F.coalesce(F.max(F.when(before_first, F.col("_step"))).over(in_day), F.lit(False))
    resolved = stepped.withColumns(
        {
            "_utc": F.when(after_step, F.col("_late")).when(any_step, F.col("_early")),
            "_in_repeated_hour_unresolved": ~any_step,
            "_landed_before": before_first & placed_before,
        }
    ).drop("_step")
    return plain.unionByName(resolved).drop("_local", "_early", "_late", "_first_line")
