"""A table's key check, measured as the audit measures it, for the tests of what lands."""

from __future__ import annotations

from datetime import datetime, timedelta

from pyspark.sql import DataFrame

from jobs.quality.one_pass import OnePassRunner
from jobs.quality.suites import interval_params
from schemas.quality import SUITES, QualitySettings
from schemas.tables import TableSpec


def assert_keys_unique(table: DataFrame, spec: TableSpec, start: datetime, end: datetime) -> None:
    """Fail unless ``table``'s rows pass its suite's ``keys_unique`` check, as the audit of the
    interval ``[start, end)`` runs it."""
    suite = next(s for s in SUITES if s.table == spec)
    params = interval_params(QualitySettings(), start, end, throughput_window=timedelta(hours=1))
    outcomes = {o.check_name: o for o in OnePassRunner().validate(table, suite, params)}
    unique = outcomes[f"{spec.layer}.{spec.name}.keys_unique"]
    assert unique.is_success, unique.message
