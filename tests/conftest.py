"""Shared fixtures: one tuned local SparkSession for the whole test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Copies of ../shared/real-samples (the two large broker logs gzipped), so tests never skip.
REAL_SAMPLES = FIXTURES / "real_samples"


def pytest_collection_modifyitems(items):
    """A test that uses Spark is an integration test (``-m "not integration"`` runs the unit tests alone)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A small local Spark: 2 cores, 2 shuffle partitions, UI off, UTC."""
    from jobs.runtime.session import build_session
    from schemas.config import SparkSettings

    os.environ.setdefault("OFFSETLAKE_SPARK_LOG_LEVEL", "ERROR")
    warehouse = tmp_path_factory.mktemp("warehouse")
    # every test's pipelines share this one driver for the whole suite, where a run has a driver of
    # its own: with 2g the soak test ran out of memory building a broadcast late in the suite, and
    # passed when run alone
    settings = SparkSettings(
        master="local[2]",
        app_name="offsetlake-tests",
        driver_memory="3g",
        shuffle_partitions=2,
        conf={
            "spark.ui.enabled": "false",
            "spark.sql.warehouse.dir": str(warehouse),
            "spark.default.parallelism": "2",
            "spark.driver.memory": "3g",
        },
    )
    session = build_session(settings)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def real_samples() -> Path:
    """Real broker and client files (see tests/fixtures/real_samples/PROVENANCE.md)."""
    return REAL_SAMPLES
