"""Shared fixtures: one tuned local SparkSession for the whole test session."""

from __future__ import annotations

import gc
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
            # a broadcast table's block is freed once the context's cleaner sees its handle collected,
            # and a handle that lived long enough waits for a full collection: Spark's default (30min)
            # let the suite's dead broadcasts fill the driver's old generation (docs/experiments.md,
            # "The test session's heap")
            "spark.cleaner.periodicGC.interval": "1min",
        },
    )
    # the suite's plans, like a kept session's intervals, come back between others: it keeps their code
    session = build_session(settings, kept=True)
    # what the suite has imported lives as long as it: frozen, each collection after a test
    # (_release_frames) scans only the objects made since
    gc.collect()
    gc.freeze()
    try:
        yield session
        session.stop()
    finally:
        # what was frozen is collected at exit again: DuckDB's bindings report the objects of theirs
        # left uncollected then as leaks, a screenful at the end of the suite
        gc.unfreeze()


@pytest.fixture(autouse=True)
def _release_frames(request):
    """After a test with Spark, the DataFrames it left in reference cycles: each holds its plan in
    the driver, and with it every broadcast table the plan built (a page of spark.buffer.pageSize
    at least), until Python's collector of cycles next reaches it, which in a process as long-lived
    as the suite is seldom. The suite's one driver filled its heap with them (docs/experiments.md,
    "The test session's heap")."""
    yield
    if "spark" in request.fixturenames:
        gc.collect()


@pytest.fixture(scope="session")
def real_samples() -> Path:
    """Real broker and client files (see tests/fixtures/real_samples/PROVENANCE.md)."""
    return REAL_SAMPLES
