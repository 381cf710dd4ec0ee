"""Split parsed rows into those that land and those that are quarantined with a reason.

Every parser in ``pipelines`` returns a :class:`Parsed`: nothing is silently dropped.
A row whose ``_reject_reason`` is null lands; any other row goes to
``quarantine/rejected_inputs`` with that reason and its raw text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.unions import union_all

REJECT_REASON = "_reject_reason"
REJECTED_COLUMNS = ("source_file", "line_no", "reason", "raw", "cluster", "_file_hash")
RAW = "_raw"  # the tagged frame's raw text, kept for rejected rows only
# A landed file's number in one read (jobs.io.text_lines): a parse may carry it in place of the
# columns every row of the file shares (see split_valid's ``files``).
FILE_NUMBER = "_file"


@dataclass(frozen=True)
class Parsed:
    """Rows that land (bronze columns) and rows rejected (``REJECTED_COLUMNS``).

    Built by :func:`split_valid`, both are filters of one tagged frame (``tagged``), so
    :meth:`cached` can keep the parse once for both; built by :func:`union_parsed`, it keeps
    its ``parts``; built by :func:`derived`, it keeps the one frame both are computed from
    (``source``) and how (``derive``); otherwise ``tagged`` and ``source`` are None and ``parts``
    empty. ``files``: the columns the tagged frame has as its file's number (``FILE_NUMBER``),
    joined back by the outputs.
    """

    landed: DataFrame
    rejected: DataFrame
    tagged: DataFrame | None = None
    landed_columns: tuple[str, ...] = ()
    parts: tuple[Parsed, ...] = ()
    files: DataFrame | None = None
    source: DataFrame | None = None
    derive: Callable[[DataFrame], Parsed] | None = None

    def cached(self, persist: Callable[[DataFrame], DataFrame]) -> Parsed:
        """The same rows, computed once: ``persist`` (e.g. ``DataFrame.persist``) is applied to
        the tagged frame both outputs filter (to each part's, for a union), to the frame both
        are derived from, or to each output."""
        if self.tagged is not None:
            return _split(persist(self.tagged), self.landed_columns, self.files)
        if self.source is not None and self.derive is not None:
            return self.derive(persist(self.source))
        if self.parts:
            return union_parsed([part.cached(persist) for part in self.parts])
        return Parsed(persist(self.landed), persist(self.rejected))

    def counted(self, event_time: str) -> DataFrame:
        """Rows a per-file accounting sums: ``source_file``, ``landed`` and ``quarantined``
        (record counts), ``first_at`` and ``last_at`` (the least and greatest ``event_time`` of
        the landed records, null if none). A split parse is read once for both kinds, not once
        per filter; one that carries file numbers is counted per number, then named."""
        if self.tagged is not None:
            lands = F.col(REJECT_REASON).isNull()
            at = F.when(lands, F.col(event_time))
            if self.files is None:
                return self.tagged.select(
                    "source_file",
                    lands.cast("long").alias("landed"),
                    (~lands).cast("long").alias("quarantined"),
                    at.alias("first_at"),
                    at.alias("last_at"),
                )
            per_file = self.tagged.groupBy(FILE_NUMBER).agg(
                F.sum(lands.cast("long")).alias("landed"),
                F.sum((~lands).cast("long")).alias("quarantined"),
                F.min(at).alias("first_at"),
                F.max(at).alias("last_at"),
            )
            return per_file.join(
                F.broadcast(self.files.select(FILE_NUMBER, "source_file")), FILE_NUMBER
            ).drop(FILE_NUMBER)
        if self.parts:
            return union_all([part.counted(event_time) for part in self.parts])
        none = F.lit(None).cast("timestamp")
        landed = self.landed.select(
            "source_file",
            F.lit(1).cast("long").alias("landed"),
            F.lit(0).cast("long").alias("quarantined"),
            F.col(event_time).alias("first_at"),
            F.col(event_time).alias("last_at"),
        )
        rejected = self.rejected.select(
            "source_file",
            F.lit(0).cast("long").alias("landed"),
            F.lit(1).cast("long").alias("quarantined"),
            none.alias("first_at"),
            none.alias("last_at"),
        )
        return landed.unionByName(rejected)


def in_calendar(time: Column) -> Column:
    """``time`` where it lies in years 1 to 9999, else null: a time Spark reads from text can fall
    before (``0000-01-01T00:00:00Z``, or year 1 moved back by a zone), where no Python client, and
    not the ingest's own accounting, can hold it. A null time is quarantined as unparseable."""
    return F.when(F.year(time).between(1, 9999), time)


def first_failure(*checks: tuple[Column, str]) -> Column:
    """The message of the first failing check, null when all pass.

    Each check is ``(condition_that_must_hold, message)``; a null condition fails.

    >>> first_failure((F.col("offset") >= 0, "negative offset"))  # doctest: +SKIP
    """
    reason: Column = F.lit(None).cast("string")
    for condition, message in reversed(checks):
        reason = F.when(F.coalesce(condition, F.lit(False)), reason).otherwise(F.lit(message))
    return reason


def split_valid(
    df: DataFrame, reason: Column, raw: Column, landed_columns: list[str], files: DataFrame | None = None
) -> Parsed:
    """Split ``df`` on ``reason`` (null = valid) into landed rows and rejected rows.

    With ``files`` (``FILE_NUMBER`` and columns every row of a file shares: its path, hash,
    cluster), ``df`` carries its file's number in place of those it lacks: the tagged frame,
    which a cache keeps for both outputs, stays narrow, and each output joins them back from
    the broadcast files.
    """
    sources = ("source_file", "line_no", "cluster", "_file_hash")
    if files is not None:
        needed = {*landed_columns, *sources}
        files = files.select(FILE_NUMBER, *[c for c in files.columns if c in needed and c not in df.columns])
    from_files = [] if files is None else files.columns
    tagged = df.withColumn(REJECT_REASON, reason).select(
        *[c for c in landed_columns if c not in from_files],
        *[c for c in sources if c not in landed_columns and c not in from_files],
        *([FILE_NUMBER] if files is not None else []),
        REJECT_REASON,
        # the raw text is kept for rejected rows only
        F.when(F.col(REJECT_REASON).isNotNull(), raw.cast("string")).alias(RAW),
    )
    return _split(tagged, tuple(landed_columns), files)


def _split(tagged: DataFrame, landed_columns: tuple[str, ...], files: DataFrame | None = None) -> Parsed:
    def named(rows: DataFrame) -> DataFrame:
        return rows if files is None else rows.join(F.broadcast(files), FILE_NUMBER)

    landed = named(tagged.where(F.col(REJECT_REASON).isNull())).select(*landed_columns)
    rejected = named(tagged.where(F.col(REJECT_REASON).isNotNull())).select(
        F.col("source_file"),
        F.col("line_no").cast("long").alias("line_no"),
        F.col(REJECT_REASON).alias("reason"),
        F.col(RAW).alias("raw"),
        F.col("cluster"),
        F.col("_file_hash"),
    )
    return Parsed(landed=landed, rejected=rejected, tagged=tagged, landed_columns=landed_columns, files=files)


def derived(source: DataFrame, derive: Callable[[DataFrame], Parsed]) -> Parsed:
    """``derive(source)``: a parse whose outputs are both computed from ``source``, which a
    cache keeps in their stead (the costly part of the parse is computed once for both)."""
    parsed = derive(source)
    return Parsed(landed=parsed.landed, rejected=parsed.rejected, source=source, derive=derive)


def rejections(rejected: DataFrame, landed_like: DataFrame) -> Parsed:
    """A part of a parse that only rejects (whole files, before their entries are read): no row
    lands; ``landed_like`` gives the landed rows' columns."""
    return Parsed(landed=landed_like.limit(0), rejected=rejected)


def union_parsed(parts: list[Parsed]) -> Parsed:
    """Concatenate several parsers' outputs (same landed schema)."""
    return Parsed(
        landed=union_all([p.landed for p in parts]),
        rejected=union_all([p.rejected for p in parts]),
        parts=tuple(parts),
    )
