"""A table's key check, measured as the audit measures it, for the tests of what lands."""

from __future__ import annotations

from datetime import date

from pyspark.sql import DataFrame

from jobs.quality.one_pass import OnePassRunner
from schemas.quality import SUITES, Param, QualitySettings
from schemas.tables import TableSpec


def assert_keys_unique(table: DataFrame, spec: TableSpec, day: date) -> None:
    """Fail unless ``table``'s rows (all of ``day``) pass its suite's ``keys_unique`` check."""
    suite = next(s for s in SUITES if s.table == spec)
    params = {Param.FIRST_DATE: day, Param.LAST_DATE: day, Param.MAX_QUEUE_ID: QualitySettings().max_queue_id}
    outcomes = {o.check_name: o for o in OnePassRunner().validate(table, suite, params)}
    unique = outcomes[f"{spec.layer}.{spec.name}.keys_unique"]
    assert unique.is_success, unique.message
