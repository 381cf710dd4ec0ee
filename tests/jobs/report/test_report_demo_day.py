"""The report of the demo's simulated day, opened in headless Chromium: every chart drawn with
the day's data, a marker per regression the replay found; the screenshot stays in the test's
directory for a person to look at."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.io.query import open_lake_sql
from jobs.report.charts import CHARTS
from jobs.report.page import write_report
from jobs.stages.runner import run_stages
from jobs.tools.simulator import SimulationSpec, simulate
from schemas.config import Settings
from tests.jobs.report.browser import open_report

pytestmark = pytest.mark.slow
DEMO_DAY = datetime(2026, 11, 21, tzinfo=UTC)


def test_the_demo_days_report_draws_every_chart_with_its_data(spark, tmp_path):
    simulate(SimulationSpec.demo(DEMO_DAY), tmp_path / "landing")
    lake = tmp_path / "lake"
    run_stages(Settings(), lake, tmp_path / "landing", None, None, "demo-day")
    out = write_report(lake, tmp_path / "report.html")
    opened = open_report(out, tmp_path / "report.png")
    print(f"\nscreenshot: {tmp_path / 'report.png'}")
    assert opened.errors == []
    assert set(opened.charts) == {chart.key for chart in CHARTS}
    assert {key: marks for key, marks in opened.charts.items() if marks == 0} == {}
    regressions = (
        open_lake_sql(lake).run("SELECT count(*) AS n FROM silver_offset_regressions").column("n")[0]
    )
    assert opened.charts["regressions"] == regressions.as_py() > 20
