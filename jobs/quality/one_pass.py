"""A table suite measured in one pass: every expectation's count in one aggregation, uniqueness by one
shuffle of the keys' hashes, samples only of the expectations that failed.

Great Expectations' Spark engine (jobs.quality.gx_adapter) runs a Spark job per expectation
and column, each a scan of the table: on a large interval the audit took longer than every
other stage together (docs/experiments.md, "The audit in one pass"). This runner gives the
same outcomes, message for message (a test holds the two engines to it), from two scans of a
table, plus a small one per failed expectation for its sample.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from jobs.quality.results import ExpectationOutcome, jsonable
from pipelines.expectations import (
    all_present,
    any_present,
    counted_violations,
    repeated_hashes,
    unique_subject,
    violations,
)
from schemas.quality import Expectation, Param, TableSuite

_KEY_HASH = "_key_hash"
# Hashes a partition of the uniqueness check sorts in one Python worker: at 8 bytes each, tens of
# MB, so a partition's sort stays small on any executor however large the table.
HASHES_PER_PARTITION = 4_000_000


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


class OnePassRunner:
    """Validates DataFrames against :class:`~schemas.quality.TableSuite` in one pass each."""

    def __init__(self, sample_size: int = 10):
        self.sample_size = sample_size

    def _sample(self, df: DataFrame, subject: str, breaks, value) -> tuple:
        found = df.where(breaks).select(value.alias("v")).limit(self.sample_size).collect()
        return tuple({"column": subject, "value": jsonable(r.v)} for r in found)

    def _duplicates(self, df: DataFrame, expectation: Expectation, rows: int) -> tuple[str, int, tuple]:
        """Rows whose key another row shares (a single column's nulls, or an all-null key, not compared);
        ``rows``, how many ``df`` holds, sizes the partitions of its hashes.

        First the repeats of a 64-bit hash of each key (pipelines.expectations.repeated_hashes): a key
        shared by two rows shares its hash, so where no hash repeats no key does, and the table's keys
        (long file paths among them) are never shuffled. Where hashes repeat, the rows holding them
        are grouped by their keys themselves, so a hash collision is never counted as a duplicate."""
        keys = list(expectation.columns)
        compared = df.where(
            all_present(expectation.columns) if len(keys) == 1 else any_present(expectation.columns)
        )
        subject = unique_subject(expectation)
        hashed = compared.withColumn(_KEY_HASH, key_hash(keys))
        partitions = -(-rows // HASHES_PER_PARTITION)
        shared = (
            hashed.select(_KEY_HASH)
            .repartition(partitions, _KEY_HASH)
            .mapInArrow(repeated_hashes, f"{_KEY_HASH} long")
        )
        if shared.isEmpty():
            return subject, 0, ()
        candidates = hashed.join(shared, _KEY_HASH, "left_semi")
        repeated = candidates.groupBy(*keys).count().where(F.col("count") > 1)
        summary = repeated.agg(F.sum("count").alias("rows")).collect()[0]
        rows = summary.rows or 0
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

    def validate(
        self, df: DataFrame, suite: TableSuite, params: Mapping[Param, object]
    ) -> list[ExpectationOutcome]:
        """One outcome per expectation of ``suite``, in its order (``check_name`` fully qualified)."""
        return self.run(df, suite, params)[1]

    def run(
        self, df: DataFrame, suite: TableSuite, params: Mapping[Param, object]
    ) -> tuple[int, list[ExpectationOutcome]]:
        """The rows of ``df`` and one outcome per expectation of ``suite`` (none for no rows)."""
        measured = [(e, violations(e, params)) for e in suite.expectations]
        every = [v for _, found in measured for v in found]
        counts = df.agg(F.count(F.lit(1)).alias("_rows"), *counted_violations(every)).collect()[0]
        rows = counts["_rows"]
        if not rows:
            return 0, []
        broken = iter(counts[f"_broken_{n}"] or 0 for n in range(len(every)))
        outcomes = []
        for expectation, found in measured:
            if expectation.kind == "unique":
                failures = [self._duplicates(df, expectation, rows)]
            else:
                failures = []
                for v in found:
                    count = next(broken)
                    failures.append(
                        (v.subject, count, self._sample(df, v.subject, v.breaks, v.value) if count else ())
                    )
            outcomes.append(_outcome(suite.check_name(expectation), failures, rows))
        return rows, outcomes
