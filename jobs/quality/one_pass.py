"""Table suites measured in a few Spark actions: every suite's counts in one, the uniqueness of every
small table in one more, samples only of the expectations that failed.

Great Expectations' Spark engine (jobs.quality.gx_adapter) runs a Spark job per expectation
and column, each a scan of the table: on a large interval the audit took longer than every
other stage together (docs/experiments.md, "The audit in one pass"). This runner gives the
same outcomes, message for message (a test holds the two engines to it). Each table is scanned
once for its expectations' counts, all tables in one action; its keys once more for their
uniqueness: the small tables' in one grouped count together, a large table's by its keys' hashes,
sorted (on the driver, or for the largest in a shuffle); and a small scan per failed expectation
for its sample.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.quality.results import ExpectationOutcome, jsonable
from pipelines.expectations import (
    all_present,
    any_present,
    repeated_hashes,
    repeated_values,
    unique_subject,
    violation_counts,
    violations,
)
from schemas.quality import Expectation, Param, TableSuite

_KEY_HASH = "_key_hash"
_CHECK = "_check"
# Hashes a partition of the uniqueness check sorts in one Python worker: at 8 bytes each, tens of
# MB, so a partition's sort stays small on any executor however large the table.
HASHES_PER_PARTITION = 4_000_000
# Up to this many rows, a table's keys are checked in the one grouped count of every small table's
# key hashes: an action less per table, where an hour's tables spend their time on Spark's fixed
# costs; above it, by sorted hashes (docs/experiments.md, "The audit's suites in shared actions").
GROUPED_KEYS_UP_TO = 1_000_000
# Up to this many rows, a larger table's key hashes are collected and sorted on the driver (8 bytes
# each: 160 MB at most), which spares Spark's shuffle of them and a Python worker per partition;
# above it, the shuffle's partitions sort their own (docs/experiments.md, "A large table's key
# hashes sorted on the driver").
HASHES_ON_DRIVER_UP_TO = 20_000_000


def key_hash(keys: list[str]) -> Column:
    """A 64-bit hash of a row's key: equal keys hash alike (nulls included)."""
    return F.xxhash64(*keys)


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

    def _repeated_large(self, hashed: DataFrame, rows: int) -> DataFrame | None:
        """The hashes repeated among a large table's ``rows``, or None when none is.

        A key shared by two rows shares its hash, so where no hash repeats no key does, and the table's
        keys (long file paths among them) are never shuffled: the hashes are sorted, on the driver
        (pipelines.expectations.repeated_values), or above HASHES_ON_DRIVER_UP_TO rows shuffled, each
        partition sorting its own (pipelines.expectations.repeated_hashes)."""
        if rows <= HASHES_ON_DRIVER_UP_TO:
            repeats = repeated_values(hashed.select(_KEY_HASH).toArrow().column(_KEY_HASH).to_numpy())
            return (
                hashed.sparkSession.createDataFrame(pa.table({_KEY_HASH: repeats})) if repeats.size else None
            )
        partitions = -(-rows // HASHES_PER_PARTITION)
        shared = (
            hashed.select(_KEY_HASH)
            .repartition(partitions, _KEY_HASH)
            .mapInArrow(repeated_hashes, f"{_KEY_HASH} long")
        )
        return None if shared.isEmpty() else shared

    def _repeated_small(self, checks: dict[tuple[int, int], DataFrame]) -> dict[tuple[int, int], list[int]]:
        """The hashes repeated in each of ``checks`` (hashed keys by (table, expectation)), by one grouped count."""
        if not checks:
            return {}
        tags = list(checks)
        tagged = [
            hashed.select(F.lit(n).alias(_CHECK), _KEY_HASH) for n, hashed in enumerate(checks.values())
        ]
        repeated = (
            reduce(DataFrame.unionByName, tagged)
            .groupBy(_CHECK, _KEY_HASH)
            .count()
            .where(F.col("count") > 1)
            .collect()
        )
        found: dict[tuple[int, int], list[int]] = {}
        for row in repeated:
            found.setdefault(tags[row[_CHECK]], []).append(row[_KEY_HASH])
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

    def _counts(self, tables: Sequence[tuple[DataFrame, TableSuite]], measured) -> list[list[int]]:
        """Each table's rows, then how many rows break each of its violations: one action for all."""
        frames = [
            df.agg(
                F.array(F.count(F.lit(1)), *violation_counts([v for _, found in suite for v in found])).alias(
                    "_counts"
                )
            ).select(F.lit(n).alias("_table"), "_counts")
            for n, ((df, _), suite) in enumerate(zip(tables, measured, strict=True))
        ]
        by_table = {r["_table"]: r["_counts"] for r in reduce(DataFrame.unionByName, frames).collect()}
        return [by_table[n] for n in range(len(tables))]

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
        self, tables: Sequence[tuple[DataFrame, TableSuite]], params: Mapping[Param, object]
    ) -> list[tuple[int, list[ExpectationOutcome]]]:
        """For each (frame, suite) of ``tables``, as :meth:`run` gives it."""
        if not tables:
            return []
        measured = [[(e, violations(e, params)) for e in suite.expectations] for _, suite in tables]
        counts = self._counts(tables, measured)
        unique = {
            (t, n): _hashed_keys(tables[t][0], e)
            for t, suite in enumerate(measured)
            for n, (e, _) in enumerate(suite)
            if e.kind == "unique" and counts[t][0]
        }
        small = {tag: hashed for tag, hashed in unique.items() if counts[tag[0]][0] <= GROUPED_KEYS_UP_TO}
        spark = tables[0][0].sparkSession
        shared = {
            tag: spark.createDataFrame([(h,) for h in hashes], f"{_KEY_HASH} long")
            for tag, hashes in self._repeated_small(small).items()
        }
        results = []
        for t, ((df, suite), found_in, counted) in enumerate(zip(tables, measured, counts, strict=True)):
            rows = counted[0]
            if not rows:
                results.append((0, []))
                continue
            broken = iter(counted[1:])
            outcomes = []
            for n, (expectation, found) in enumerate(found_in):
                if expectation.kind == "unique":
                    hashed = unique[(t, n)]
                    repeats = shared.get((t, n)) if (t, n) in small else self._repeated_large(hashed, rows)
                    failures = [self._duplicates(hashed, expectation, repeats)]
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
