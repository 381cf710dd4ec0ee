"""Table suites measured in a few Spark actions: every suite's counts in one, the uniqueness of every
table in one more (a large table's in its own), samples only of the expectations that failed.

Great Expectations' Spark engine (jobs.quality.gx_adapter) runs a Spark job per expectation
and column, each a scan of the table: on a large interval the audit took longer than every
other stage together (docs/experiments.md, "The audit in one pass"). This runner gives the
same outcomes, message for message (a test holds the two engines to it). Each table is scanned
once for its expectations' counts, all tables in one action, but for those its files' Delta
statistics settle (no null in a column, every value within a range: pipelines.expectations.settled),
which are not counted, and a table they settle whole, rows included, is not scanned for them
(docs/experiments.md, "Expectations settled by the Delta log's statistics"); its keys once more for their
uniqueness: its keys' hashes, collected with other tables' and sorted on the driver (a table too
large for the driver's share: shuffled, each partition sorting its own); and a small scan per
failed expectation for its sample.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.quality.results import ExpectationOutcome, jsonable
from pipelines.expectations import (
    all_present,
    any_present,
    repeated_hashes,
    repeated_values,
    settled,
    unique_subject,
    violation_counts,
    violations,
)
from pipelines.unions import union_all
from schemas.quality import Expectation, Param, TableSuite
from schemas.statistics import TableStatistics

_KEY_HASH = "_key_hash"
_CHECK = "_check"
# Hashes a partition of the uniqueness check sorts in one Python worker: at 8 bytes each, tens of
# MB, so a partition's sort stays small on any executor however large the table.
HASHES_PER_PARTITION = 4_000_000
# A table's key hashes are collected on the driver and sorted there, up to this many rows (8 bytes
# a hash: 160 MB at most), sparing Spark's shuffle of them and its Python workers; a larger table's
# are shuffled, each partition sorting its own (docs/experiments.md, "A large table's key hashes
# sorted on the driver").
HASHES_ON_DRIVER_UP_TO = 20_000_000
# Tables up to this many rows share their collection, one action for an hour's every table; a
# larger one's hashes come alone, untagged (docs/experiments.md, "Every table's key hashes sorted
# on the driver").
SHARED_UP_TO = 1_000_000
Tag = tuple[int, int]  # a uniqueness check: (table, expectation), by their positions


def key_hash(keys: list[str]) -> Column:
    """A 64-bit hash of a row's key: equal keys hash alike (nulls included)."""
    return F.xxhash64(*keys)


def driver_batches(rows: dict[Tag, int]) -> tuple[list[list[Tag]], list[Tag]]:
    """The checks of ``rows`` (each check's table rows) whose hashes are collected on the driver, in
    batches: tables up to SHARED_UP_TO rows together (at most HASHES_ON_DRIVER_UP_TO rows a batch),
    each larger one alone; and the checks of tables too large for the driver, whose hashes are
    shuffled instead."""
    shared: list[list[Tag]] = [[]]
    alone: list[list[Tag]] = []
    too_large: list[Tag] = []
    held = 0
    for tag in sorted(rows, key=lambda tag: rows[tag]):
        if rows[tag] > HASHES_ON_DRIVER_UP_TO:
            too_large.append(tag)
        elif rows[tag] > SHARED_UP_TO:
            alone.append([tag])
        else:
            if held + rows[tag] > HASHES_ON_DRIVER_UP_TO:
                shared.append([])
                held = 0
            shared[-1].append(tag)
            held += rows[tag]
    return [batch for batch in shared if batch] + alone, too_large


def _outcome(check_name: str, failures: list[tuple[str, int, tuple]], rows: int) -> ExpectationOutcome:
    """One expectation's outcome from its subjects' (subject, rows failing, sample)."""
    failed = [(subject, count, sample) for subject, count, sample in failures if count]
    if not failed:
        return ExpectationOutcome(check_name, True, 0, "passed")
    message = "; ".join(f"{subject}: {count} of {rows} rows fail" for subject, count, _ in failed)
    sample = tuple(s for _, _, found in failed for s in found)
    return ExpectationOutcome(check_name, False, max(count for _, count, _ in failed), message, sample)


def _hashed_keys(df: DataFrame, expectation: Expectation) -> DataFrame:
    """The rows whose keys are compared (a single column's nulls, or an all-null key, are not), with
    their key's hash."""
    columns = expectation.columns
    compared = df.where(all_present(columns) if len(columns) == 1 else any_present(columns))
    return compared.withColumn(_KEY_HASH, key_hash(list(columns)))


class OnePassRunner:
    """Validates DataFrames against :class:`~schemas.quality.TableSuite`, every table's counts in one pass."""

    def __init__(self, sample_size: int = 10):
        self.sample_size = sample_size

    def _sample(self, df: DataFrame, subject: str, breaks, value) -> tuple:
        found = df.where(breaks).select(value.alias("v")).limit(self.sample_size).collect()
        return tuple({"column": subject, "value": jsonable(r.v)} for r in found)

    def _repeated_shuffled(self, hashed: DataFrame, rows: int) -> DataFrame | None:
        """The hashes repeated among a table's ``rows`` (more than HASHES_ON_DRIVER_UP_TO), or None when
        none is: the hashes shuffled by their value, each partition sorting its own
        (pipelines.expectations.repeated_hashes)."""
        partitions = -(-rows // HASHES_PER_PARTITION)
        shared = (
            hashed.select(_KEY_HASH)
            .repartition(partitions, _KEY_HASH)
            .mapInArrow(repeated_hashes, f"{_KEY_HASH} long")
        )
        return None if shared.isEmpty() else shared

    @staticmethod
    def _repeated_on_driver(checks: list[DataFrame]) -> list[np.ndarray]:
        """The hashes repeated in each of ``checks`` (hashed keys), their hashes collected in one
        action and sorted on the driver (pipelines.expectations.repeated_values)."""
        if len(checks) == 1:  # a table alone: its hashes need no tag
            return [repeated_values(checks[0].select(_KEY_HASH).toArrow().column(_KEY_HASH).to_numpy())]
        tagged = [
            hashed.select(F.lit(n).cast("short").alias(_CHECK), _KEY_HASH) for n, hashed in enumerate(checks)
        ]
        collected = union_all(tagged).toArrow()
        numbers = collected.column(_CHECK).to_numpy()
        hashes = collected.column(_KEY_HASH).to_numpy()
        return [repeated_values(hashes[numbers == n]) for n in range(len(checks))]

    def _repeated(self, unique: dict[Tag, DataFrame], rows: list[int]) -> dict[Tag, DataFrame]:
        """The hashes repeated in each of ``unique`` (hashed keys by check; ``rows``: each table's),
        where any is.

        A key shared by two rows shares its hash, so where no hash repeats no key does, and the tables'
        keys (long file paths among them) never leave their scans: their hashes do (see driver_batches)."""
        batches, too_large = driver_batches({tag: rows[tag[0]] for tag in unique})
        found: dict[Tag, DataFrame] = {}
        for batch in batches:
            for tag, repeats in zip(batch, self._repeated_on_driver([unique[t] for t in batch]), strict=True):
                if repeats.size:
                    found[tag] = unique[tag].sparkSession.createDataFrame(pa.table({_KEY_HASH: repeats}))
        for tag in too_large:
            if (shuffled := self._repeated_shuffled(unique[tag], rows[tag[0]])) is not None:
                found[tag] = shuffled
        return found

    def _duplicates(
        self, hashed: DataFrame, expectation: Expectation, shared: DataFrame | None
    ) -> tuple[str, int, tuple]:
        """Rows whose key another row shares, among ``hashed``'s rows whose hash is in ``shared``: they are
        grouped by their keys themselves, so a hash collision is never counted as a duplicate."""
        subject = unique_subject(expectation)
        if shared is None:
            return subject, 0, ()
        keys = list(expectation.columns)
        candidates = hashed.join(shared, _KEY_HASH, "left_semi")
        repeated = candidates.groupBy(*keys).count().where(F.col("count") > 1)
        rows = repeated.agg(F.sum("count").alias("rows")).collect()[0].rows or 0
        if not rows:
            return subject, 0, ()
        found = repeated.limit(self.sample_size).collect()
        value = (
            (lambda r: jsonable(r[keys[0]]))
            if len(keys) == 1
            else (lambda r: {k: jsonable(r[k]) for k in keys})
        )
        # a sample names every row of a repeated key, as Great Expectations' does
        sample = [{"column": subject, "value": value(r)} for r in found for _ in range(r["count"])]
        return subject, rows, tuple(sample[: self.sample_size])

    def _counts(
        self,
        tables: Sequence[tuple[DataFrame, TableSuite]],
        measured,
        statistics: Sequence[TableStatistics | None],
    ) -> list[list[int]]:
        """Each table's rows, then how many rows break each of its violations: those its files'
        ``statistics`` settle are none, the rest counted in one action for all tables (a table whose
        statistics settle everything, its rows included, is not scanned)."""
        scanned: dict[int, tuple[list[bool], DataFrame]] = {}
        counts: list[list[int]] = []
        for n, ((df, _), suite, known) in enumerate(zip(tables, measured, statistics, strict=True)):
            settled_ones = [flag for _, _, flags in suite for flag in flags]
            if all(settled_ones) and known is not None and known.exact:
                counts.append([known.rows, *[0] * len(settled_ones)])
                continue
            counted = [
                v for _, found, flags in suite for v, flag in zip(found, flags, strict=True) if not flag
            ]
            scanned[n] = (
                settled_ones,
                df.agg(F.array(F.count(F.lit(1)), *violation_counts(counted)).alias("_counts")).select(
                    F.lit(n).alias("_table"), "_counts"
                ),
            )
            counts.append([])
        if scanned:
            frames = [frame for _, frame in scanned.values()]
            for row in union_all(frames).collect():
                settled_ones, _ = scanned[row["_table"]]
                broken = iter(row["_counts"][1:])
                counts[row["_table"]] = [
                    row["_counts"][0],
                    *[0 if flag else next(broken) for flag in settled_ones],
                ]
        return counts

    def validate(
        self, df: DataFrame, suite: TableSuite, params: Mapping[Param, object]
    ) -> list[ExpectationOutcome]:
        """One outcome per expectation of ``suite``, in its order (``check_name`` fully qualified)."""
        return self.run(df, suite, params)[1]

    def run(
        self, df: DataFrame, suite: TableSuite, params: Mapping[Param, object]
    ) -> tuple[int, list[ExpectationOutcome]]:
        """The rows of ``df`` and one outcome per expectation of ``suite`` (none for no rows)."""
        return self.run_all([(df, suite)], params)[0]

    def run_all(
        self,
        tables: Sequence[tuple[DataFrame, TableSuite]],
        params: Mapping[Param, object],
        statistics: Sequence[TableStatistics | None] | None = None,
    ) -> list[tuple[int, list[ExpectationOutcome]]]:
        """For each (frame, suite) of ``tables``, as :meth:`run` gives it; ``statistics``: what the
        Delta log tells of each frame's files, where it is read (an expectation they settle is not
        counted in a scan: pipelines.expectations.settled)."""
        if not tables:
            return []
        known = list(statistics) if statistics is not None else [None] * len(tables)
        measured = [
            [(e, violations(e, params), settled(e, params, stats)) for e in suite.expectations]
            for (_, suite), stats in zip(tables, known, strict=True)
        ]
        counts = self._counts(tables, measured, known)
        unique = {
            (t, n): _hashed_keys(tables[t][0], e)
            for t, suite in enumerate(measured)
            for n, (e, _, _) in enumerate(suite)
            if e.kind == "unique" and counts[t][0]
        }
        shared = self._repeated(unique, [c[0] for c in counts])
        results = []
        for t, ((df, suite), found_in, counted) in enumerate(zip(tables, measured, counts, strict=True)):
            rows = counted[0]
            if not rows:
                results.append((0, []))
                continue
            broken = iter(counted[1:])
            outcomes = []
            for n, (expectation, found, _) in enumerate(found_in):
                if expectation.kind == "unique":
                    hashed = unique[(t, n)]
                    failures = [self._duplicates(hashed, expectation, shared.get((t, n)))]
                else:
                    failures = []
                    for v in found:
                        count = next(broken)
                        failures.append(
                            (
                                v.subject,
                                count,
                                self._sample(df, v.subject, v.breaks, v.value) if count else (),
                            )
                        )
                outcomes.append(_outcome(suite.check_name(expectation), failures, rows))
            results.append((rows, outcomes))
        return results
