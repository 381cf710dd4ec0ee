"""The one way the tests compare DataFrames: whole rows, in any order.

``assert_frames_equal`` compares two frames (PySpark's own ``assertDataFrameEqual``, rows in
any order); ``rows`` gives a frame's rows as sorted tuples to hold against expected literals,
timestamps as aware UTC instants (PySpark's ``collect`` gives naive local times).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.testing import assertDataFrameEqual

from schemas.instants import from_collected


def assert_frames_equal(actual: DataFrame, expected: DataFrame, *, ignore: tuple[str, ...] = ()) -> None:
    """The same rows (the same columns, in the same order), whatever the row order; ``ignore``: columns left out."""
    assertDataFrameEqual(actual.drop(*ignore), expected.drop(*ignore), checkRowOrder=False)


def _value(value):
    return from_collected(value) if isinstance(value, datetime) else value


def _null_last(values: tuple) -> list:
    return [(v is None, v if v is not None else 0) for v in values]


def rows(df: DataFrame, *columns: str) -> list[tuple]:
    """The rows of ``df`` as tuples of ``columns`` (default: all), sorted with nulls last."""
    chosen = df.select(*columns) if columns else df
    return sorted((tuple(_value(v) for v in r) for r in chosen.collect()), key=_null_last)


def assert_cached_parse_gives_the_same(parsed, event_time: str) -> None:
    """``parsed`` (pipelines.ingest.quarantine.Parsed) cached as the ingest caches it gives the same
    landed rows, rejected rows and per-file counts as uncached."""
    kept: list[DataFrame] = []

    def persist(df: DataFrame) -> DataFrame:
        kept.append(df.cache())
        return kept[-1]

    cached = parsed.cached(persist)
    try:
        for output in ("landed", "rejected"):
            assert_frames_equal(getattr(cached, output), getattr(parsed, output))
        assert_frames_equal(cached.counted(event_time), parsed.counted(event_time))
    finally:
        for df in kept:
            df.unpersist()
