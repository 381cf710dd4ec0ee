"""Each expectation of a table suite (schemas.quality) as Spark columns: which rows break it.

A suite is measured in one pass over its table: every expectation but uniqueness is a row
predicate (:func:`violations`: true where a row breaks it), and the audit sums them all in one
aggregation; uniqueness is a count of a hash of each key: grouped, for small tables; for a large one,
the hashes sorted and neighbours compared (:func:`repeated_values`), on the driver or, for the
largest, in each partition of a shuffle (:func:`repeated_hashes`). The predicates follow Great
Expectations' semantics for the same expectations (jobs.quality.gx_adapter declares them for
GE, and a test holds both engines to the same outcomes): a null passes every kind but
``not_null``; ``between`` is inclusive unless ``strict_max``; ``pair_at_least`` ignores a row
where either value is missing. Where the table's files record statistics (schemas.statistics),
:func:`settled` tells the predicates they prove no row breaks, which need no scan.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import reduce

import numpy as np
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from schemas.quality import Expectation, Param, resolve
from schemas.statistics import ColumnStatistics, TableStatistics


@dataclass(frozen=True)
class Violation:
    """Where one expectation breaks on one subject (a column, or a pair of them)."""

    subject: str  # as the check's message names it: "queue_id", "observed_at vs consumer_offset_at"
    breaks: Column  # true where a row breaks it, false elsewhere (never null)
    value: Column  # what a sample of the breaking rows shows


def _known(condition: Column) -> Column:
    return F.coalesce(condition, F.lit(False))


def violations(expectation: Expectation, params: Mapping[Param, object]) -> list[Violation]:
    """The row predicates of ``expectation`` (none for ``unique``: see :func:`repeated_hashes`)."""
    columns = expectation.columns
    if expectation.kind == "not_null":
        return [Violation(c, F.col(c).isNull(), F.col(c)) for c in columns]
    if expectation.kind == "between":
        low, high = resolve(expectation.min_value, params), resolve(expectation.max_value, params)
        found = []
        for c in columns:
            value = F.col(c)
            below = value < F.lit(low) if low is not None else F.lit(False)
            above = (
                (value >= F.lit(high) if expectation.strict_max else value > F.lit(high))
                if high is not None
                else F.lit(False)
            )
            found.append(Violation(c, _known(below | above), value))
        return found
    if expectation.kind == "in_set":
        return [Violation(c, _known(~F.col(c).isin(*expectation.values)), F.col(c)) for c in columns]
    if expectation.kind == "pair_at_least":
        first, second = columns
        holds = F.col(first) > F.col(second) if expectation.strict_max else F.col(first) >= F.col(second)
        pair = F.array(F.col(first), F.col(second))  # the pairs compare values of one type
        return [Violation(f"{first} vs {second}", _known(~holds), pair)]
    if expectation.kind == "unique":
        return []
    raise ValueError(f"unknown expectation kind {expectation.kind!r}")


def settled(
    expectation: Expectation, params: Mapping[Param, object], statistics: TableStatistics | None
) -> list[bool]:
    """For each of ``violations(expectation, params)``: True where the files' ``statistics`` prove
    that no row breaks it, so it needs no scan. A column's nulls settle ``not_null``, and its
    bounds ``between`` (a null passes it, so a column of nulls only holds it too); sets and pairs
    are never settled this way (the statistics bound no text, and no pair of columns)."""
    if expectation.kind == "unique":
        return []
    if expectation.kind == "pair_at_least":
        return [False]
    if statistics is None or expectation.kind == "in_set":
        return [False] * len(expectation.columns)
    proven = []
    for column in expectation.columns:
        known = statistics.columns.get(column)
        if known is None or known.nulls is None:
            proven.append(False)
        elif expectation.kind == "not_null":
            proven.append(known.nulls == 0)
        else:
            low, high = resolve(expectation.min_value, params), resolve(expectation.max_value, params)
            proven.append(
                known.nulls == statistics.rows or _within_bounds(known, low, high, expectation.strict_max)
            )
    return proven


def _within_bounds(known: ColumnStatistics, low, high, strict_max: bool) -> bool:
    """True when ``known``'s bounds lie in ``[low, high]`` (``[low, high)`` when ``strict_max``)."""
    if known.low is None or known.high is None:
        return False
    try:
        above_low = low is None or known.low >= low
        below_high = high is None or (known.high < high if strict_max else known.high <= high)
    except TypeError:  # a bound of another type than the column's (a date against a timestamp)
        return False
    return above_low and below_high


def repeated_values(hashes: np.ndarray) -> np.ndarray:
    """Each value ``hashes`` holds more than once, once, in order: its values sorted, neighbours compared."""
    ordered = np.sort(hashes)
    return np.unique(ordered[1:][ordered[1:] == ordered[:-1]])


def repeated_hashes(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` over a partition of 64-bit key hashes (one column, partitioned by its value, so
    equal hashes meet in one partition): each hash the partition holds more than once, once.

    Sorting a partition's hashes in NumPy and comparing neighbours does what a grouped count does
    without Spark's hash map of every key (docs/experiments.md, "Uniqueness by sorted hashes")."""
    held = list(batches)
    if not held:
        return
    repeats = repeated_values(
        np.concatenate([batch.column(0).to_numpy(zero_copy_only=False) for batch in held])
    )
    if repeats.size:
        yield pa.RecordBatch.from_arrays([pa.array(repeats, pa.int64())], held[0].schema.names[:1])


def unique_subject(expectation: Expectation) -> str:
    columns = expectation.columns
    return columns[0] if len(columns) == 1 else "(" + ", ".join(columns) + ")"


def violation_counts(found: list[Violation]) -> list[Column]:
    """One aggregate per violation: how many rows break it (for a single ``agg``; 0 over no rows)."""
    return [F.coalesce(F.sum(v.breaks.cast("long")), F.lit(0)) for v in found]


def all_present(columns: tuple[str, ...]) -> Column:
    """True where none of ``columns`` is null (a unique key with a null is not compared)."""
    return reduce(lambda a, b: a & b, [F.col(c).isNotNull() for c in columns])


def any_present(columns: tuple[str, ...]) -> Column:
    """True where one of ``columns`` at least is not null (a compound key all null is not compared)."""
    return reduce(lambda a, b: a | b, [F.col(c).isNotNull() for c in columns])
