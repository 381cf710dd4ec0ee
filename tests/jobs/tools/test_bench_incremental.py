"""offsetlake bench's incremental case: the landing split into history and interval, and the run on the history's lake."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from deltalake import DeltaTable

from jobs.io.landing import discover
from jobs.sources import patterns
from jobs.tools.bench.incremental import content_begins, split_landing, split_time
from jobs.tools.bench.runner import BenchCase, bench, default_cases
from jobs.tools.simulator import simulate
from schemas.config import Settings
from tests.jobs.tools.simulator_helpers import small_cluster

START = datetime(2026, 11, 21, tzinfo=UTC)
SPEC = small_cluster(START, timedelta(hours=2, minutes=20), progress_interval=timedelta(minutes=30))
SPLIT = START + timedelta(hours=1)  # the last whole hour at least an hour before 02:20


def test_the_split_is_the_last_whole_hour_an_interval_before_the_end():
    assert split_time(START, START + timedelta(hours=21, minutes=30)) == START + timedelta(hours=20)
    assert split_time(START, START + timedelta(hours=2)) == START + timedelta(hours=1)
    with pytest.raises(ValueError, match="too short"):
        split_time(START, START + timedelta(hours=1, minutes=59))


def test_each_landed_file_goes_to_history_or_interval_by_when_its_content_begins(tmp_path):
    simulate(SPEC, tmp_path)
    split = split_landing(tmp_path, patterns(Settings()), SPEC.start, SPEC.end)
    everything = discover(tmp_path, patterns(Settings()))
    assert split.split == SPLIT
    assert sorted(f.relative for f in split.history + split.interval) == sorted(
        f.relative for f in everything
    )
    by_kind = {}
    for side, files in (("history", split.history), ("interval", split.interval)):
        for f in files:
            by_kind.setdefault((f.source_kind, side), []).append(f)
    assert {f.relative.split("/")[-1] for f in by_kind[("commits", "interval")]} == {"01.jsonl", "02.jsonl"}
    assert {f.relative.split("/")[-1] for f in by_kind[("commits", "history")]} == {"00.jsonl"}
    assert all(content_begins(f) >= SPLIT for f in split.interval)
    assert all(content_begins(f) is None or content_begins(f) < SPLIT for f in split.history)
    # logs span the whole run: they land with the history
    assert {k for k in by_kind if k[0].endswith("_logs")} == {
        ("broker_logs", "history"),
        ("client_logs", "history"),
    }
    assert by_kind[("snapshots", "interval")] and by_kind[("progress", "interval")]


@pytest.fixture(scope="module")
def incremental_run(spark, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("bench-incremental")
    case = BenchCase("incremental-small", "incremental", SPEC)
    report, _, exit_code = bench([case], Settings(), workdir, isolate=False, keep_outputs=True)
    return workdir / case.name, report, exit_code


@pytest.mark.slow
def test_the_increment_on_the_historys_lake_gives_every_table_of_one_run(incremental_run):
    _, report, exit_code = incremental_run
    (case,) = report["cases"]
    # DuckDB computed every file at once; the lake holds the history's run and the increment's
    assert exit_code == 0 and case["comparison"]["agrees"]
    assert all(
        r["lake_rows"] > 0 for r in case["comparison"]["results"] if not r["table"].startswith("quarantine")
    )


@pytest.mark.slow
def test_the_increments_figures_count_its_interval_only(incremental_run):
    case_dir, report, _ = incremental_run
    (case,) = report["cases"]
    figures = case["incremental"]
    assert (figures["split_at"], figures["end"]) == (SPLIT.isoformat(), SPEC.end.isoformat())
    observed = DeltaTable(str(case_dir / "lake" / "silver" / "stored_offset_timeline")).to_pyarrow_table(
        columns=["observed_at"]
    )
    at = [t if t.tzinfo else t.replace(tzinfo=UTC) for t in observed["observed_at"].to_pylist()]
    in_interval = sum(t >= SPLIT for t in at)
    assert 0 < in_interval < len(at)
    assert case["pipeline"]["stages"]["replay"]["rows"] == in_interval
    # the same interval alone replays the same events, only without the history's checkpoint
    assert figures["interval_alone"]["rows"]["replay"] == in_interval
    assert 0 < case["pipeline"]["stages"]["ingest"]["rows"] == figures["interval_alone"]["rows"]["ingest"]
    assert case["pipeline"]["stages"]["publish"]["rows"] > 0  # the gold rows this run published
    seconds = {name: figures[name]["seconds"] for name in ("history", "increment", "interval_alone")}
    assert all(s > 0 for s in seconds.values())
    assert figures["increment_to_interval_alone"] == pytest.approx(
        seconds["increment"] / seconds["interval_alone"]
    )
    assert figures["increment_to_history"] == pytest.approx(seconds["increment"] / seconds["history"])
    assert report["incremental"] == {"incremental-small": figures}
    assert case["offsetlake_to_duckdb"] is None  # DuckDB's time covers every file, not the interval


def test_the_incremental_case_reuses_the_smallest_commits_case_that_can_be_split():
    names = lambda cases: [(c.name, c.kind, c.inputs_of) for c in cases]  # noqa: E731
    assert names(default_cases([10_000_000, 1_000_000], skip_snapshots=True)) == [
        ("startup", "startup", None), ("commits-1000000", "commits", None), ("commits-10000000", "commits", None),
        ("incremental-1000000", "incremental", "commits-1000000"),
    ]  # fmt: skip
    # twenty thousand events span an hour and twenty minutes: too short; a hundred thousand span six and a half hours
    assert [c.name for c in default_cases([20_000, 100_000], skip_snapshots=True)][-1] == "incremental-100000"
    assert [c.kind for c in default_cases([20_000], skip_snapshots=False)] == [
        "startup",
        "commits",
        "snapshots",
    ]
    assert "incremental" not in [
        c.kind for c in default_cases([1_000_000], skip_snapshots=True, skip_incremental=True)
    ]
