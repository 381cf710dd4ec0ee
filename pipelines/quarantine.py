"""Split parsed rows into those that land and those that are quarantined with a reason.

Every parser in ``pipelines`` returns a :class:`Parsed`: nothing is silently dropped.
A row whose ``_reject_reason`` is null lands; any other row goes to
``quarantine/rejected_inputs`` with that reason and its raw text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

REJECT_REASON = "_reject_reason"
REJECTED_COLUMNS = ("source_file", "line_no", "reason", "raw", "cluster", "_file_hash")
RAW = "_raw"  # the tagged frame's raw text, kept for rejected rows only


@dataclass(frozen=True)
class Parsed:
    """Rows that land (bronze columns) and rows rejected (``REJECTED_COLUMNS``).

    Built by :func:`split_valid`, both are filters of one tagged frame (``tagged``), so
    :meth:`cached` can keep the parse once for both; built by :func:`union_parsed`, it keeps
    its ``parts``; otherwise ``tagged`` is None and ``parts`` empty.
    """

    landed: DataFrame
    rejected: DataFrame
    tagged: DataFrame | None = None
    landed_columns: tuple[str, ...] = ()
    parts: tuple["Parsed", ...] = ()

    def cached(self, persist: Callable[[DataFrame], DataFrame]) -> "Parsed":
        """The same rows, computed once: ``persist`` (e.g. ``DataFrame.persist``) is applied to
        the tagged frame both outputs filter (to each part's, for a union), or to each output."""
        if self.tagged is not None:
            return _split(persist(self.tagged), self.landed_columns)
        if self.parts:
            return union_parsed([part.cached(persist) for part in self.parts])
        return Parsed(persist(self.landed), persist(self.rejected))

    def counted(self, event_time: str) -> DataFrame:
        """One row per record, landed or rejected, as a per-file accounting sums them:
        ``source_file``, ``landed`` and ``quarantined`` (1 or 0), ``at`` (a landed row's
        ``event_time``, else null). A split parse is read once for both kinds, not once per
        filter."""
        if self.tagged is not None:
            lands = F.col(REJECT_REASON).isNull()
            return self.tagged.select(
                "source_file",
                lands.cast("int").alias("landed"),
                (~lands).cast("int").alias("quarantined"),
                F.when(lands, F.col(event_time)).alias("at"),
            )
        if self.parts:
            return reduce(lambda a, b: a.unionByName(b), [part.counted(event_time) for part in self.parts])
        landed = self.landed.select("source_file", F.lit(1).alias("landed"), F.lit(0).alias("quarantined"), F.col(event_time).alias("at"))
        rejected = self.rejected.select(
            "source_file", F.lit(0).alias("landed"), F.lit(1).alias("quarantined"), F.lit(None).cast("timestamp").alias("at")
        )
        return landed.unionByName(rejected)


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
    rejected_sources = [c for c in ("source_file", "line_no", "cluster", "_file_hash") if c not in landed_columns]
    tagged = df.withColumn(REJECT_REASON, reason).select(
        *landed_columns,
        *rejected_sources,
        REJECT_REASON,
        # the raw text is kept for rejected rows only
        F.when(F.col(REJECT_REASON).isNotNull(), raw.cast("string")).alias(RAW),
    )
    return _split(tagged, tuple(landed_columns))


def _split(tagged: DataFrame, landed_columns: tuple[str, ...]) -> Parsed:
    landed = tagged.where(F.col(REJECT_REASON).isNull()).select(*landed_columns)
    rejected = tagged.where(F.col(REJECT_REASON).isNotNull()).select(
        F.col("source_file"),
        F.col("line_no").cast("long").alias("line_no"),
        F.col(REJECT_REASON).alias("reason"),
        F.col(RAW).alias("raw"),
        F.col("cluster"),
        F.col("_file_hash"),
    )
    return Parsed(landed=landed, rejected=rejected, tagged=tagged, landed_columns=landed_columns)


def union_parsed(parts: list[Parsed]) -> Parsed:
    """Concatenate several parsers' outputs (same landed schema)."""
    return Parsed(
        landed=reduce(lambda a, b: a.unionByName(b), [p.landed for p in parts]),
        rejected=reduce(lambda a, b: a.unionByName(b), [p.rejected for p in parts]),
        parts=tuple(parts),
    )
