"""Fixtures shared by the tests of the jobs."""

from __future__ import annotations

import pytest

from jobs.io.lake import Lake
from jobs.runtime.session import native_delta_available


@pytest.fixture(params=["delta-rs", "spark"])
def engine_lake(request, spark, tmp_path) -> Lake:
    """An empty lake in a temp dir, once through each Delta engine (native Spark Delta only where its
    extension is on the classpath)."""
    if request.param == "spark" and not native_delta_available(spark):
        pytest.skip("Delta's Spark extension is not on the classpath (no delta-spark jars here)")
    return Lake(spark, tmp_path / "lake", engine=request.param)
