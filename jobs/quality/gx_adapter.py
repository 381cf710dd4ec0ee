"""Great Expectations 1.x behind one call: validate a Spark DataFrame against a table suite.

This is the only module that imports ``great_expectations``. It keeps one ephemeral data
context (no project directory, nothing written) with a Spark data source whose batches are
whole DataFrames. A suite is validated in two passes: every expectation with the cheapest
result format (a pass/fail each), then only the failed ones again for counts and sample
values, so a clean table costs as few Spark jobs as GE allows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import great_expectations as gx
import great_expectations.expectations as gxe
from great_expectations.data_context.types.base import ProgressBarsConfig
from pyspark.sql import DataFrame

from jobs.quality.results import ExpectationOutcome, jsonable
from schemas.quality import Expectation, Param, TableSuite, resolve

logging.getLogger("great_expectations").setLevel(logging.WARNING)


def to_gx(expectation: Expectation, params: Mapping[Param, object]) -> list[gxe.Expectation]:
    """The Great Expectations expectations for ``expectation`` (one per column where GE needs it)."""
    meta = {"check": expectation.name}
    columns = expectation.columns
    if expectation.kind == "not_null":
        return [gxe.ExpectColumnValuesToNotBeNull(column=c, meta=meta) for c in columns]
    if expectation.kind == "unique":
        if len(columns) == 1:
            return [gxe.ExpectColumnValuesToBeUnique(column=columns[0], meta=meta)]
        return [gxe.ExpectCompoundColumnsToBeUnique(column_list=list(columns), meta=meta)]
    if expectation.kind == "between":
        low, high = resolve(expectation.min_value, params), resolve(expectation.max_value, params)
        return [
            gxe.ExpectColumnValuesToBeBetween(
                column=c, min_value=low, max_value=high, strict_max=expectation.strict_max, meta=meta
            )
            for c in columns
        ]
    if expectation.kind == "in_set":
        return [
            gxe.ExpectColumnValuesToBeInSet(column=c, value_set=list(expectation.values), meta=meta)
            for c in columns
        ]
    if expectation.kind == "pair_at_least":
        first, second = columns
        return [
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A=first,
                column_B=second,
                or_equal=not expectation.strict_max,
                ignore_row_if="either_value_is_missing",
                meta=meta,
            )
        ]
    raise ValueError(f"unknown expectation kind {expectation.kind!r}")


def _subject(result) -> str:
    kwargs = result.expectation_config.kwargs
    if "column_list" in kwargs:
        return "(" + ", ".join(kwargs["column_list"]) + ")"
    if "column_A" in kwargs:
        return f"{kwargs['column_A']} vs {kwargs['column_B']}"
    return str(kwargs.get("column"))


def _summarise(check_name: str, results: list) -> ExpectationOutcome:
    """Fold the GE results of one named expectation into one outcome."""
    failures, parts, sample = 0, [], []
    for result in results:
        if result.success:
            continue
        subject = _subject(result)
        info = result.exception_info or {}
        if info.get("raised_exception"):
            parts.append(f"{subject}: could not be evaluated ({info.get('exception_message')})")
            continue
        found = result.result or {}
        count = int(found.get("unexpected_count") or 0)
        failures = max(failures, count)
        parts.append(f"{subject}: {count} of {found.get('element_count')} rows fail")
        sample.extend(
            {"column": subject, "value": jsonable(v)} for v in found.get("partial_unexpected_list") or []
        )
    if not parts:
        return ExpectationOutcome(check_name, True, 0, "passed")
    return ExpectationOutcome(check_name, False, failures, "; ".join(parts), tuple(sample))


class SuiteRunner:
    """Validates DataFrames against :class:`~schemas.quality.TableSuite` with one GE context."""

    def __init__(self, sample_size: int = 10):
        self.sample_size = sample_size
        self._context = gx.get_context(mode="ephemeral")
        self._context.variables.progress_bars = ProgressBarsConfig(globally=False)
        source = self._context.data_sources.add_spark(name="offsetlake")
        self._batches = source.add_dataframe_asset(name="table").add_batch_definition_whole_dataframe("whole")
        self._suites = 0

    def _run(
        self, df: DataFrame, expectations: list[gxe.Expectation], result_format: dict
    ) -> dict[str, list]:
        self._suites += 1
        suite = gx.ExpectationSuite(name=f"suite-{self._suites}", expectations=expectations)
        batch = self._batches.get_batch(batch_parameters={"dataframe": df})
        by_check: dict[str, list] = {}
        for result in batch.validate(suite, result_format=result_format).results:
            by_check.setdefault(result.expectation_config.meta["check"], []).append(result)
        return by_check

    def run(
        self, df: DataFrame, suite: TableSuite, params: Mapping[Param, object]
    ) -> tuple[int, list[ExpectationOutcome]]:
        """The rows of ``df`` and one outcome per expectation (none for no rows): GE reads the
        table once per expectation and column, so it is cached for them."""
        cached = df.cache()
        try:
            rows = cached.count()
            return rows, self.validate(cached, suite, params) if rows else []
        finally:
            cached.unpersist()

    def run_all(
        self,
        tables: Sequence[tuple[DataFrame, TableSuite]],
        params: Mapping[Param, object],
        statistics=None,
    ) -> list[tuple[int, list[ExpectationOutcome]]]:
        """For each (frame, suite) of ``tables``, as :meth:`run` gives it: one table after the other,
        every expectation measured by Great Expectations (``statistics`` settle none here)."""
        return [self.run(df, suite, params) for df, suite in tables]

    def validate(
        self, df: DataFrame, suite: TableSuite, params: Mapping[Param, object]
    ) -> list[ExpectationOutcome]:
        """One outcome per expectation of ``suite``, in its order (``check_name`` fully qualified)."""
        declared = {e.name: e for e in suite.expectations}
        first = self._run(
            df, [g for e in suite.expectations for g in to_gx(e, params)], {"result_format": "BOOLEAN_ONLY"}
        )
        failed = [name for name, results in first.items() if not all(r.success for r in results)]
        detail = {}
        if failed:
            again = [g for name in failed for g in to_gx(declared[name], params)]
            detail = self._run(
                df, again, {"result_format": "BASIC", "partial_unexpected_count": self.sample_size}
            )
        outcomes = []
        for expectation in suite.expectations:
            name = suite.check_name(expectation)
            if expectation.name in detail:
                outcomes.append(_summarise(name, detail[expectation.name]))
            else:
                outcomes.append(ExpectationOutcome(name, True, 0, "passed"))
        return outcomes
