"""The soak (jobs.tools.soak): a few hourly runs on a plain and a maintained lake."""

from __future__ import annotations

from datetime import timedelta

import pytest
from deltalake import DeltaTable

from jobs.stages.runner import STAGE_NAMES
from jobs.tools.lake_compare import compare_table, delta_tables
from jobs.tools.soak import (
    START,
    land_until,
    probe,
    probe_summary,
    run_line,
    soak,
    soak_settings,
    summary,
)
from schemas.config import Settings


def test_the_landing_gets_the_files_that_begin_before_each_hours_end(tmp_path):
    from jobs.tools.simulator import simulate
    from jobs.tools.soak import soak_spec

    simulate(soak_spec(2), tmp_path / "source")
    landing = tmp_path / "landing"
    first = land_until(tmp_path / "source", landing, START + timedelta(hours=1), Settings())
    assert {p.name for p in (landing / "commits").rglob("*.jsonl")} == {"00.jsonl"}
    assert list((landing / "broker_logs").rglob("*.log"))  # the whole run's logs land before the first hour
    second = land_until(tmp_path / "source", landing, START + timedelta(hours=2), Settings())
    assert {p.name for p in (landing / "commits").rglob("*.jsonl")} == {"00.jsonl", "01.jsonl"}
    assert first > second > 0
    assert land_until(tmp_path / "source", landing, START + timedelta(hours=2), Settings()) == 0


def test_a_soak_whose_hours_have_landed_cannot_grow(tmp_path):
    from jobs.tools.soak import SoakError, source_landing

    assert source_landing(tmp_path, 1) == tmp_path / "source"
    made = {p: p.stat().st_mtime_ns for p in (tmp_path / "source").rglob("*.jsonl")}
    assert source_landing(tmp_path, 1) == tmp_path / "source"  # reused as it is
    land_until(tmp_path / "source", tmp_path / "landing", START + timedelta(hours=1), Settings())
    with pytest.raises(SoakError, match="needs a new --workdir"):
        source_landing(tmp_path, 2)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "source").rglob("*.jsonl")} == made


@pytest.mark.slow
@pytest.mark.long
def test_three_hourly_runs_with_and_without_maintenance_give_the_same_rows_in_fewer_files(spark, tmp_path):
    records, probed = soak(tmp_path, runs=3, maintain_every=2, lakes=("plain", "maintained"))
    assert probed == []
    assert [(r["run"], r["lake"]) for r in records] == [
        (n, lake) for n in range(3) for lake in ("plain", "maintained")
    ]
    assert not any(r["quality_failed"] for r in records)
    by = {(r["run"], r["lake"]): r for r in records}
    assert "maintain_seconds" in by[(1, "maintained")] and "maintain_seconds" not in by[(2, "maintained")]
    # two hours of hourly appends compacted into one file per table and day
    assert by[(1, "maintained")]["files"]["commits"] < by[(1, "plain")]["files"]["commits"]
    assert all(line.split()[0] in ("plain", "maintained") for line in summary(records))
    assert run_line(by[(1, "maintained")]).split()[:4] == ["run", "1", "2026-11-21T01", "maintained"]
    for path in delta_tables(tmp_path / "plain"):
        if path.split("/")[0] in ("bronze", "silver", "gold", "quarantine"):
            latest = "as_of" if path == "silver/replay_checkpoints" else None
            comparison = compare_table(tmp_path / "plain", tmp_path / "maintained", path, latest_of=latest)
            assert comparison.agrees, comparison.line()


@pytest.mark.slow
@pytest.mark.long
def test_the_probe_reruns_a_lakes_last_interval_on_a_copy_beside_a_young_lake(spark, tmp_path):
    soak(tmp_path, runs=2, maintain_every=0, lakes=("plain",))
    publishes = tmp_path / "plain" / "ops" / "publish_runs"
    version = DeltaTable(str(publishes)).version()
    records = probe(soak_settings(), tmp_path, {"plain": 1}, repeats=2, early_runs=1)
    # two rounds, the second in the reverse order; the young lake re-runs the first hour
    assert [(r["lake"], r["runs"], r["repeat"]) for r in records] == [
        ("early", 1, 0), ("plain", 2, 0), ("plain", 2, 1), ("early", 1, 1)
    ]  # fmt: skip
    assert all(set(r["stages"]) == set(STAGE_NAMES) and r["seconds"] > 0 for r in records)
    # the re-runs touched copies: the soaked lake is as it was, and no copy is left
    assert DeltaTable(str(publishes)).version() == version
    assert not (tmp_path / "probe" / "scratch").exists()
    lines = probe_summary(records)
    assert [line.split()[1] for line in lines] == ["early", "plain"]
    assert "on the young lake" in lines[1] and "on the young lake" not in lines[0]
    assert (tmp_path / "probe" / "early" / "done").read_text() == "1\n"  # the young lake is made once
