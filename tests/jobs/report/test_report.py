"""``offsetlake report`` on a small lake: one page, every declared chart drawn in a real browser
with marks and no error; an interval with no rows says so; the run's two reports link each other;
a whole run writes the page, a stage run alone leaves it to the report command."""

from __future__ import annotations

import re
import shlex
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest

from jobs.cli import main as cli
from jobs.cli.main import main
from jobs.cli.summary import report_command
from jobs.quality.report import render as render_quality
from jobs.quality.report import report_path
from jobs.quality.results import Notification
from jobs.report.charts import CHARTS
from jobs.report.page import interval_condition, report_location
from jobs.stages.runner import STAGE_NAMES
from schemas.config import Settings
from tests.jobs.report.browser import open_report
from tests.lakes import DAY, small_lake


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    return small_lake(tmp_path_factory.mktemp("lake"))


def test_the_interval_is_a_condition_on_each_charts_time():
    assert interval_condition("observed_at", None, None) == "TRUE"
    assert interval_condition("observed_at", DAY, DAY + timedelta(hours=1)) == (
        "observed_at >= TIMESTAMP '2026-11-21T00:00:00Z' AND observed_at < TIMESTAMP '2026-11-21T01:00:00Z'"
    )


def test_every_chart_is_drawn_in_a_browser_with_marks_and_no_error(lake, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", "--lake", str(lake), "--out", str(out)]) == 0
    page = out.read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=", page)  # everything inlined: it opens offline
    opened = open_report(out, tmp_path / "report.png")
    assert opened.errors == []
    assert sorted(opened.charts) == sorted(chart.key for chart in CHARTS)
    assert {key: marks for key, marks in opened.charts.items() if marks == 0} == {}
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_an_interval_without_rows_says_so_for_every_chart(lake, tmp_path):
    out = tmp_path / "empty.html"
    args = ["--from", "2030-01-01T00:00:00Z", "--to", "2030-01-02T00:00:00Z"]
    assert main(["report", "--lake", str(lake), "--out", str(out), *args]) == 0
    assert out.read_text().count("No rows in this interval.") == len(CHARTS)


def test_the_report_needs_a_destination_and_an_ordered_interval(lake, capsys):
    assert main(["report", "--lake", str(lake)]) == 2
    assert "give --out FILE" in capsys.readouterr().err
    assert main(["report", "--lake", str(lake), "--run-id", "r", "--from", "2026-11-22T00:00:00Z",
                 "--to", "2026-11-21T00:00:00Z"]) == 2  # fmt: skip


def test_a_runs_quality_report_links_its_lake_report(lake):
    notification = Notification(
        "run 7", DAY, DAY, has_errors=False, report_path="", failed_checks=(), alerts=(), alerts_total=0
    )
    quality_page = render_quality(notification, [], None)
    link = re.search(r'<a href="([^"]+)">the lake report</a>', quality_page).group(1)
    quality_dir = lake / "reports" / "quality"
    assert (quality_dir / link).resolve() == report_location(lake, "run 7").resolve()


def test_the_report_of_a_run_links_its_quality_report_when_the_run_wrote_one(lake, tmp_path):
    quality = Path(report_path(str(lake), "audited run"))
    quality.parent.mkdir(parents=True, exist_ok=True)
    quality.write_text("<html></html>")
    pages = []
    try:
        # the page where the run's reports are kept, and one written elsewhere
        for run_id, out, linked in (
            ("audited run", report_location(lake, "audited run"), True),
            ("audited run", tmp_path / "elsewhere" / "page.html", True),
            ("unaudited run", tmp_path / "unaudited.html", False),
        ):
            pages.append(out)
            assert main(["report", "--lake", str(lake), "--run-id", run_id, "--out", str(out)]) == 0
            link = re.search(r'<a href="([^"]+)">data-quality report of this run</a>', out.read_text())
            assert (link is not None) == linked
            if linked:
                assert (out.parent / unquote(link.group(1))).resolve() == quality.resolve()
    finally:
        quality.unlink()
        for page in pages:
            page.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("stages", "interval", "page_shows"),
    [
        (STAGE_NAMES, (DAY, DAY + timedelta(hours=1)), "2026-11-21T00:00:00Z to 2026-11-21T01:00:00Z"),
        (STAGE_NAMES, (None, None), "the first event to the last"),
        (("publish",), (DAY, DAY + timedelta(hours=1)), None),
    ],
)
def test_a_whole_run_writes_its_lake_report_and_a_stage_alone_leaves_it_to_the_report_command(
    lake, monkeypatch, stages, interval, page_shows
):
    """An Airflow interval runs each stage alone, then ``offsetlake report``: the page is written once.
    A whole run's page covers the run's interval, as the report task's covers the DAG's."""
    run_id = f"{len(stages)}-stages-{interval[0] is not None}"
    start, end = interval
    context = SimpleNamespace(
        lake=SimpleNamespace(root=str(lake)), run_id=run_id, published={"t": 1}, start=start, end=end
    )
    monkeypatch.setattr(cli, "run_stages", lambda *args, **kwargs: context)
    monkeypatch.setattr(cli, "print_summary", lambda *args: None)
    monkeypatch.setattr(cli, "attach_log_file", lambda path: None)  # no handler left on the root logger
    page = report_location(lake, run_id)
    try:
        cli.run_with_display(Settings(), lake, None, SimpleNamespace(run_id=run_id), stages)
        assert page.is_file() == (page_shows is not None)
        if page_shows is not None:
            assert f"{page_shows} · generated" in page.read_text()
    finally:
        page.unlink(missing_ok=True)


def test_the_report_command_a_stage_run_alone_prints_writes_the_page_of_its_interval(lake):
    context = SimpleNamespace(
        lake=SimpleNamespace(root=str(lake)), run_id="run by hand", start=DAY, end=DAY + timedelta(hours=1)
    )
    words = shlex.split(report_command(context))
    assert words[:2] == ["offsetlake", "report"]
    assert (
        words[words.index("--lake") + 1] == str(lake) and words[words.index("--run-id") + 1] == "run by hand"
    )
    assert (words[words.index("--from") + 1], words[words.index("--to") + 1]) == (
        "2026-11-21T00:00:00Z",
        "2026-11-21T01:00:00Z",
    )
    page = report_location(lake, "run by hand")
    try:
        assert main(words[1:]) == 0
        assert page.is_file()
    finally:
        page.unlink(missing_ok=True)
