"""Split parsed rows into those that land and those that are quarantined with a reason.

Every parser in ``pipelines`` returns a :class:`Parsed`: nothing is silently dropped.
A row whose ``_reject_reason`` is null lands; any other row goes to
``quarantine/rejected_inputs`` with that reason and its raw text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

REJECT_REASON = "_reject_reason"
REJECTED_COLUMNS = ("source_file", "line_no", "reason", "raw", "cluster", "_file_hash")


@dataclass(frozen=True)
class Parsed:
    """Rows that land (bronze columns) and rows rejected (``REJECTED_COLUMNS``)."""

    landed: DataFrame
    rejected: DataFrame


def first_failure(*checks: tuple[Column, str]) -> Column:
    """The message of the first failing check, null when all pass.

    Each check is ``(condition_that_must_hold, message)``; a null condition fails.

    >>> first_failure((F.col("offset") >= 0, "negative offset"))  # doctest: +SKIP
    """
    reason: Column = F.lit(None).cast("string")
    for condition, message in reversed(checks):
        reason = F.when(F.coalesce(condition, F.lit(False)), reason).otherwise(F.lit(message))
    return reason


def split_valid(df: DataFrame, reason: Column, raw: Column, landed_columns: list[str]) -> Parsed:
    """Split ``df`` on ``reason`` (null = valid) into landed rows and rejected rows."""
    tagged = df.withColumn(REJECT_REASON, reason)
    landed = tagged.where(F.col(REJECT_REASON).isNull()).select(*landed_columns)
    rejected = tagged.where(F.col(REJECT_REASON).isNotNull()).select(
        F.col("source_file"),
        F.col("line_no").cast("long").alias("line_no"),
        F.col(REJECT_REASON).alias("reason"),
        raw.cast("string").alias("raw"),
        F.col("cluster"),
        F.col("_file_hash"),
    )
    return Parsed(landed=landed, rejected=rejected)


def union_parsed(parts: list[Parsed]) -> Parsed:
    """Concatenate several parsers' outputs (same landed schema)."""
    return Parsed(
        landed=reduce(lambda a, b: a.unionByName(b), [p.landed for p in parts]),
        rejected=reduce(lambda a, b: a.unionByName(b), [p.rejected for p in parts]),
    )
