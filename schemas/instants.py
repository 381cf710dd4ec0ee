"""Instants: every time OffsetLake stores, compares or prints is an aware UTC ``datetime``.

Times reach the code in three forms, each with its one conversion here:

- text (``--from``, landing paths, settings): ISO-8601, ``Z`` or an offset; a time without
  an offset is UTC (:func:`parse_utc`);
- a ``datetime`` without a zone that the code itself made, or that a reader gives as UTC
  (Delta statistics, Arrow without a zone): UTC (:func:`utc`);
- a ``datetime`` that PySpark's ``collect()`` gives: naive, in the *local* time zone of the
  Python process whatever Spark's session zone is (:func:`from_collected`).

    >>> parse_utc("2026-11-21T10:00:00+08:00")
    datetime.datetime(2026, 11, 21, 2, 0, tzinfo=datetime.timezone.utc)
    >>> iso_z(parse_utc("2026-11-21T02:00:00"))
    '2026-11-21T02:00:00Z'
"""

from __future__ import annotations

from datetime import UTC, datetime

# The start of time for a replay with nothing before it.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utc(value: datetime) -> datetime:
    """``value`` in UTC (a naive value is taken as UTC already)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def from_collected(value: datetime | None) -> datetime | None:
    """A timestamp as PySpark's ``collect()`` gives it (naive local time) as an aware UTC instant."""
    return None if value is None else value.astimezone(UTC)


def parse_utc(text: str) -> datetime:
    """ISO-8601 text (``Z``, an offset, or none for UTC) as an aware UTC instant; ValueError if not ISO-8601."""
    return utc(datetime.fromisoformat(text.strip().replace("Z", "+00:00")))


def iso_z(value: datetime | None) -> str | None:
    """ISO-8601 in UTC with a ``Z`` (a naive value is UTC); None stays None."""
    return None if value is None else utc(value).isoformat().replace("+00:00", "Z")
