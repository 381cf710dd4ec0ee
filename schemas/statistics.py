"""What a Delta log's file statistics tell about the rows of a read, without reading them.

Each file of a Delta table may record its row count, and per column its nulls and the least and
greatest of its other values. Summed and bounded over the files a read takes, they bound what the
read can hold: the audit settles an expectation from them when they prove that no row breaks it
(pipelines.expectations.settled), and scans only for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ColumnStatistics:
    """One column over the files of a read. ``nulls``: how many of the files' rows are null there
    (None: unknown). ``low`` and ``high``: bounds of its other values, ``low <= value <= high``
    (None: unknown, or no value but nulls). A bound need not be a value the column holds: a
    timestamp's statistics are milliseconds, so its upper bound is widened by one."""

    nulls: int | None
    low: object = None
    high: object = None


@dataclass(frozen=True)
class TableStatistics:
    """The files of a read. ``rows``: how many rows they hold; ``exact``: the read gives every one
    of them (no row of those files lies outside its range), so ``rows`` is the read's count.
    ``columns``: the columns whose statistics every file records."""

    rows: int
    exact: bool
    columns: Mapping[str, ColumnStatistics] = field(default_factory=dict)

    def inexact(self) -> TableStatistics:
        """The same files under a narrower read: their statistics still bound it, their count no longer."""
        return TableStatistics(self.rows, False, self.columns)
