"""Run every table suite of ``schemas.quality`` on the data of one interval.

What each suite sees: bronze and silver rows of the interval; for gold, the whole staged
table when the marts stage left one (that is what publish would copy, so its rows must lie
in the interval), else gold's rows of the interval; replay checkpoints taken in the
interval (``interval_start <= as_of <= interval_end``). An absent or empty table passes
every expectation without a scan. The suites are measured together, one pass per table and a few
Spark actions for them all (jobs.quality.one_pass), or by Great Expectations' own engine where the
settings ask for it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.quality.one_pass import OnePassRunner
from jobs.quality.results import CheckResult, ExpectationEngine, ExpectationOutcome, Finding, stable_id
from pipelines.marts.exposure import DAY
from pipelines.marts.windows import window_start
from schemas.config import StatusSettings
from schemas.quality import SUITES, Param, QualitySettings, TableSuite
from schemas.statistics import TableStatistics

log = logging.getLogger("offsetlake.quality.suites")
SAMPLE_SIZE = 10
DEFAULT_STATUS_WINDOW = StatusSettings().window


def _great_expectations():
    """Great Expectations' own Spark engine (imported only when the settings ask for it: it
    takes seconds to import and runs a Spark job per expectation and column)."""
    from jobs.quality.gx_adapter import SuiteRunner

    return SuiteRunner(SAMPLE_SIZE)


def interval_params(
    quality: QualitySettings,
    start: datetime,
    end: datetime,
    throughput_window: timedelta,
    status_window: timedelta = DEFAULT_STATUS_WINDOW,
) -> dict[Param, object]:
    """Values of the suites' parameters for the interval ``[start, end)``."""
    throughput_from, day_from = window_start(start, throughput_window), window_start(start, DAY)
    status_from = window_start(start, status_window)
    return {
        Param.INTERVAL_START: start,
        Param.INTERVAL_END: end,
        Param.FIRST_DATE: start.date(),
        Param.LAST_DATE: (end - timedelta(microseconds=1)).date(),
        Param.MAX_QUEUE_ID: quality.max_queue_id,
        Param.THROUGHPUT_FROM: throughput_from,
        Param.THROUGHPUT_FIRST_DATE: throughput_from.date(),
        Param.STATUS_FROM: status_from,
        Param.STATUS_FIRST_DATE: status_from.date(),
        Param.DAY_FROM: day_from,
        Param.DAY_FIRST_DATE: day_from.date(),
    }


def audited_frame(
    lake: Lake, suite: TableSuite, start: datetime, end: datetime
) -> tuple[DataFrame, TableStatistics | None] | None:
    """The rows ``suite`` is checked on, with what the Delta log's statistics tell of them
    (Lake.statistics); None when the table does not exist."""
    spec = suite.table
    staging = lake.staging()
    if spec.layer == "gold" and staging.exists(spec):
        return staging.read(spec), staging.statistics(spec)
    if not lake.exists(spec):
        return None
    if spec.event_time is None:
        as_of = F.col("as_of")
        known = lake.statistics(spec)
        in_interval = lake.read(spec).where((as_of >= F.lit(start)) & (as_of <= F.lit(end)))
        return in_interval, known.inexact() if known is not None else None
    return lake.read(spec, start=start, end=end), lake.statistics(spec, start=start, end=end)


def _result(
    suite: TableSuite, outcome: ExpectationOutcome, quality: QualitySettings, rows: int, default
) -> CheckResult:
    return CheckResult(
        check_name=outcome.check_name,
        check_kind="expectation",
        table_name=suite.table_name,
        severity=quality.severity(outcome.check_name, default),
        is_success=outcome.is_success,
        rows_checked=rows,
        failing_rows=outcome.failing_rows,
        message=outcome.message,
        sample=outcome.sample,
    )


def _finding(result: CheckResult) -> Finding:
    """A failed expectation's finding: the check as a whole, with its sample of failing values."""
    return Finding(
        finding_id=stable_id(result.check_name, result.message),
        check_name=result.check_name,
        severity=result.severity,
        table_name=result.table_name,
        message=f"{result.check_name} failed: {result.message}",
        measured_value=result.failing_rows,
        details=json.dumps({"sample": list(result.sample)}, sort_keys=True, default=str),
    )


def _suite_results(
    suite: TableSuite, rows: int, outcomes: list[ExpectationOutcome], quality: QualitySettings, absent: bool
) -> list[CheckResult]:
    """The suite's check results from its table's rows and outcomes (``absent``: no table to check)."""
    if rows == 0:
        note = "table absent: nothing to check" if absent else "no rows to check"
        outcomes = [ExpectationOutcome(suite.check_name(e), True, 0, note) for e in suite.expectations]
    defaults = {suite.check_name(e): e.severity for e in suite.expectations}
    return [_result(suite, o, quality, rows, defaults[o.check_name]) for o in outcomes]


def validate_suites(
    runner: ExpectationEngine,
    frames: Sequence[tuple[TableSuite, tuple[DataFrame, TableStatistics | None] | None]],
    quality: QualitySettings,
    params,
) -> list[CheckResult]:
    """Every suite's check results on its frame and its files' statistics (None: the table does
    not exist), the present ones measured together (``runner.run_all``)."""
    present = [(suite, found) for suite, found in frames if found is not None]
    tables = [(df, suite) for suite, (df, _) in present]
    measured = iter(runner.run_all(tables, params, [known for _, (_, known) in present]))
    results: list[CheckResult] = []
    for suite, found in frames:
        rows, outcomes = next(measured) if found is not None else (0, [])
        results.extend(_suite_results(suite, rows, outcomes, quality, absent=found is None))
    return results


def validate_tables(
    lake: Lake,
    quality: QualitySettings,
    start: datetime,
    end: datetime,
    throughput_window: timedelta,
    status_window: timedelta = DEFAULT_STATUS_WINDOW,
) -> tuple[list[CheckResult], list[Finding]]:
    """Results of every suite for the interval, and one finding per failed expectation."""
    runner = OnePassRunner(SAMPLE_SIZE) if quality.expectation_engine == "one_pass" else _great_expectations()
    params = interval_params(quality, start, end, throughput_window, status_window)
    began = time.perf_counter()
    frames = [(suite, audited_frame(lake, suite, start, end)) for suite in SUITES]
    results = validate_suites(runner, frames, quality, params)
    checked = {r.table_name: r.rows_checked for r in results}
    log.info("%d of %d expectations passed on %d tables (%s rows) in %.1fs", sum(r.is_success for r in results),
             len(results), len(checked), sum(checked.values()), time.perf_counter() - began)  # fmt: skip
    return results, [_finding(r) for r in results if not r.is_success]
