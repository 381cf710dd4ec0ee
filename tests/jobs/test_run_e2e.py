"""Every stage end to end on simulator data: findings, split-run invariance, idempotent re-runs, crash recovery;
and bad lines through the ingest stage into quarantine."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from jobs.commands import run_stages
from jobs.lake import Lake
from jobs.reader_landing import FILE_METADATA_KEY
from jobs.simulator import simulate
from schemas.config import ReplaySettings, Settings
from schemas.tables import (
    BRONZE_TABLES,
    GOLD_TABLES,
    INGEST_RUNS,
    OFFSET_COMMITS,
    OFFSET_REGRESSIONS,
    REJECTED_INPUTS,
    REPLAY_CHECKPOINTS,
    SILVER_TABLES,
    TableSpec,
)
from tests.jobs.simulator_helpers import small_cluster

START = datetime(2026, 11, 21, tzinfo=timezone.utc)
END = START + timedelta(hours=2)
SPLIT = START + timedelta(hours=1, minutes=7, seconds=30)  # not on a throughput window boundary
STAGES = ("ingest", "replay", "marts", "publish")


@pytest.fixture(scope="module")
def landing(tmp_path_factory):
    spec = small_cluster(START, END - START, progress_interval=timedelta(minutes=10))
    root = tmp_path_factory.mktemp("landing")
    manifest = simulate(spec, root)
    return root, manifest


def run(spark, lake_root, landing_root, start=None, end=None, run_id="r", stages=STAGES, settings=None):
    return run_stages(settings or Settings(), lake_root, landing_root, start, end, run_id, stages)


def table_rows(lake: Lake, spec: TableSpec, drop=("_ingest_run_id", "rejected_at")):
    df = lake.read(spec)
    columns = [c for c in spec.columns if c not in drop]
    return sorted((tuple(r[c] for c in columns) for r in df.select(*columns).collect()), key=repr)


@pytest.fixture(scope="module")
def one_run(spark, landing, tmp_path_factory):
    root = tmp_path_factory.mktemp("one")
    run(spark, root, landing[0], START, END, run_id="whole")
    return Lake(spark, root)


def test_every_injected_incident_is_found_and_nothing_else(one_run, landing):
    _, manifest = landing
    regressions = one_run.read(OFFSET_REGRESSIONS).collect()
    found = {(r.broker, r.topic, r.consumer_group, r.queue_id) for r in regressions}
    injected = {(i.broker, i.topic, i.consumer_group, i.queue_id) for i in manifest.incidents}
    assert injected and found == injected
    commits = [i for i in manifest.incidents if i.kind == "stale_commit"]
    by_commit = {(r.broker, r.topic, r.consumer_group, r.queue_id, r.offset, r.stored_offset) for r in regressions if r.evidence == "commit"}
    for incident in commits:
        assert (incident.broker, incident.topic, incident.consumer_group, incident.queue_id, incident.offset, incident.stored_offset_before) in by_commit


def test_bronze_holds_every_commit_event_and_nothing_is_quarantined(one_run, landing):
    _, manifest = landing
    logged = one_run.read(OFFSET_COMMITS).where("evidence = 'commit_log'").count()
    assert logged == manifest.commit_events
    assert one_run.read(REJECTED_INPUTS).collect() == []


def test_two_runs_give_the_tables_of_one_run(spark, landing, one_run, tmp_path):
    split_root = tmp_path / "split"
    # the one run broadcasts the log-told commits to corroborate them; these two use the anti-join
    anti_join = Settings(replay=ReplaySettings(broadcast_logged_commits=0))
    run(spark, split_root, landing[0], START, SPLIT, run_id="first", settings=anti_join)
    run(spark, split_root, landing[0], SPLIT, END, run_id="second", settings=anti_join)
    split = Lake(spark, split_root)
    for spec in (*BRONZE_TABLES, *SILVER_TABLES, *GOLD_TABLES):
        if spec is REPLAY_CHECKPOINTS:
            final = lambda lake: sorted(r for r in table_rows(lake, spec) if r[0] == END)  # noqa: E731
            assert final(split) == final(one_run), spec.path
            continue
        assert table_rows(split, spec) == table_rows(one_run, spec), spec.path


def test_rerunning_an_interval_leaves_the_tables_unchanged(spark, landing, one_run, tmp_path):
    before = {spec.path: table_rows(one_run, spec) for spec in (*BRONZE_TABLES, *SILVER_TABLES, *GOLD_TABLES)}
    run(spark, one_run.root, landing[0], START, END, run_id="again")
    after = {spec.path: table_rows(one_run, spec) for spec in (*BRONZE_TABLES, *SILVER_TABLES, *GOLD_TABLES)}
    assert after == before


def test_an_interrupted_ingest_is_completed_without_duplicates(spark, landing, one_run, tmp_path, monkeypatch):
    import jobs.ingest_stage as ingest_stage

    crashed_root = tmp_path / "crashed"

    def crash(*args, **kwargs):
        raise RuntimeError("simulated crash after the bronze tables were written")

    monkeypatch.setattr(ingest_stage, "_final_rows", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run(spark, crashed_root, landing[0], START, END, run_id="crashed", stages=("ingest",))
    monkeypatch.undo()
    run(spark, crashed_root, landing[0], START, END, run_id="recovered")
    recovered = Lake(spark, crashed_root)
    for spec in BRONZE_TABLES:
        assert table_rows(recovered, spec) == table_rows(one_run, spec), spec.path


def test_the_reader_lands_the_rows_and_counts_spark_would(spark, landing, one_run, tmp_path, monkeypatch):
    """On the embedded lake the commit reader lands the lines it has checked itself; where it
    cannot (native Spark Delta, a cluster), Spark lands them: the same tables and accounting."""

    def reader_written(lake: Lake) -> list[Path]:
        files = Path(lake.path(OFFSET_COMMITS)).rglob("*.parquet")
        return [p for p in files if FILE_METADATA_KEY in (pq.read_metadata(p).metadata or {})]

    assert reader_written(one_run)
    monkeypatch.setattr(Lake, "files_dir", lambda self, spec, name: None)
    run(spark, tmp_path / "by-spark", landing[0], START, END, run_id="whole", stages=("ingest",))
    by_spark = Lake(spark, tmp_path / "by-spark")
    assert not reader_written(by_spark)
    for spec in (*BRONZE_TABLES, REJECTED_INPUTS):
        assert table_rows(by_spark, spec) == table_rows(one_run, spec), spec.path
    accounting = {"source_file", "status", "records_read", "records_landed", "records_quarantined", "event_min_at", "event_max_at"}
    not_accounting = [c for c in INGEST_RUNS.columns if c not in accounting]
    assert table_rows(by_spark, INGEST_RUNS, drop=not_accounting) == table_rows(one_run, INGEST_RUNS, drop=not_accounting)


def test_manifest_is_not_mistaken_for_input(landing):
    root, manifest = landing
    assert json.loads((root / "_simulation_manifest.json").read_text())["commit_events"] == manifest.commit_events


def test_bad_commit_lines_are_quarantined_with_their_reason_and_counted_and_the_rest_lands(spark, tmp_path):
    good = {"committed_at": "2026-11-21T10:00:00.000Z", "broker": "broker-a", "client_host": "10.0.0.1:1",
            "topic": "t", "consumer_group": "g", "queue_id": 0, "offset": 5, "path": "update_offset"}  # fmt: skip
    bad = {**good, "offset": -1}
    stream = tmp_path / "landing" / "commits" / "prod-1" / "broker-a" / "2026-11-21" / "10.jsonl"
    stream.parent.mkdir(parents=True)
    stream.write_text("\n".join([json.dumps(good), json.dumps(bad), "not json"]) + "\n")
    run(spark, tmp_path / "lake", tmp_path / "landing", run_id="bad", stages=("ingest",))
    lake = Lake(spark, tmp_path / "lake")
    assert [(r.offset, r.line_no) for r in lake.read(OFFSET_COMMITS).collect()] == [(5, 1)]
    rejected = sorted(lake.read(REJECTED_INPUTS).collect(), key=lambda r: r.line_no)
    assert [(r.source_file, r.line_no, r.raw, r.source_kind) for r in rejected] == [
        (str(stream), 2, json.dumps(bad), "commits"),
        (str(stream), 3, "not json", "commits"),
    ]
    assert all(r.reason for r in rejected)
    (ops,) = lake.read(INGEST_RUNS).collect()
    assert (ops.status, ops.records_read, ops.records_landed, ops.records_quarantined) == ("ingested", 3, 1, 2)
