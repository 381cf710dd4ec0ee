"""Every stage end to end on simulator data: findings, split-run invariance, idempotent re-runs, crash recovery;
and bad lines through the ingest stage into quarantine."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.io.lake import Lake, rows_in_delta_logs
from jobs.io.worker_files import FILE_METADATA_KEY
from jobs.stages import runner, shuffles
from jobs.stages.context import StageOrderError
from jobs.stages.intervals import replayed_interval
from jobs.stages.replay import READS, REWRITES, _ingest_bounds, rows_taken
from jobs.stages.runner import run_stages
from jobs.stages.shuffles import SHUFFLE_PARTITIONS, shuffle_partitions
from jobs.tools.demo import regression_of
from jobs.tools.simulator import simulate
from schemas.config import ReplaySettings, Settings, SparkSettings
from schemas.quality import REGRESSION_CAUSES
from schemas.tables import (
    BRONZE_TABLES,
    GOLD_TABLES,
    INGEST_RUNS,
    OFFSET_COMMITS,
    OFFSET_COMMITS_REPLAYED,
    OFFSET_REGRESSIONS,
    OFFSET_SNAPSHOTS,
    PUBLISH_RUNS,
    REJECTED_INPUTS,
    REPLAY_CHECKPOINTS,
    REPLAY_RUNS,
    SILVER_TABLES,
    STORED_OFFSET_TIMELINE,
    TableSpec,
)
from tests.frames import assert_frames_equal
from tests.jobs.tools.simulator_helpers import small_cluster

START = datetime(2026, 11, 21, tzinfo=UTC)
END = START + timedelta(hours=2)
SPLIT = START + timedelta(hours=1, minutes=7, seconds=30)  # not on a throughput window boundary
STAGES = ("ingest", "replay", "marts", "publish")
# whole runs of every stage over two hours of a simulated cluster
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def landing(tmp_path_factory):
    spec = small_cluster(START, END - START, progress_interval=timedelta(minutes=10))
    root = tmp_path_factory.mktemp("landing")
    manifest = simulate(spec, root)
    return root, manifest


def run(spark, lake_root, landing_root, start=None, end=None, run_id="r", stages=STAGES, settings=None):
    return run_stages(settings or Settings(), lake_root, landing_root, start, end, run_id, stages)


# what differs between two runs that landed the same rows: the run that did it, and when
RUN_COLUMNS = ("_ingest_run_id", "rejected_at")


def assert_same_table(actual: Lake, expected: Lake, spec: TableSpec, ignore=RUN_COLUMNS) -> None:
    assert_frames_equal(
        actual.read(spec), expected.read(spec), ignore=tuple(c for c in ignore if c in spec.columns)
    )


@pytest.fixture(scope="module")
def one_run(spark, landing, tmp_path_factory):
    root = tmp_path_factory.mktemp("one")
    run(spark, root, landing[0], START, END, run_id="whole")
    return Lake(spark, root)


def test_every_injected_incident_gets_its_cause_and_nothing_else_is_found(one_run, landing):
    _, manifest = landing
    regressions = one_run.read(OFFSET_REGRESSIONS).collect()
    explained = set()
    for incident in manifest.incidents:
        regression = regression_of(incident, regressions, manifest.spec.snapshot_interval)
        assert regression is not None, incident
        assert (regression.cause, regression.cause_evidence is not None) == (incident.cause, True), (
            incident,
            regression,
        )
        explained.add((regression.broker, regression.topic, regression.consumer_group, regression.queue_id,
                       regression.detected_at, regression.evidence, regression.observation_seq))  # fmt: skip
    assert {i.cause for i in manifest.incidents} == set(REGRESSION_CAUSES) - {"unexplained"}
    every = {tuple(r[c] for c in ("broker", "topic", "consumer_group", "queue_id", "detected_at", "evidence",
                                  "observation_seq")) for r in regressions}  # fmt: skip
    assert explained == every
    commits = [i for i in manifest.incidents if i.kind == "stale_commit"]
    by_commit = {
        (r.broker, r.topic, r.consumer_group, r.queue_id, r.offset, r.stored_offset)
        for r in regressions
        if r.evidence == "commit"
    }
    for incident in commits:
        assert (
            incident.broker,
            incident.topic,
            incident.consumer_group,
            incident.queue_id,
            incident.offset,
            incident.stored_offset_before,
        ) in by_commit


def test_bronze_holds_every_commit_event_and_nothing_is_quarantined(one_run, landing):
    _, manifest = landing
    logged = one_run.read(OFFSET_COMMITS).where("evidence = 'commit_log'").count()
    assert logged == manifest.commit_events
    assert one_run.read(REJECTED_INPUTS).collect() == []


def test_a_run_records_the_ingest_version_its_replay_planned_from_and_the_replay_it_published(one_run):
    """What the next run's late files are told by (jobs.stages.replay._ingest_bounds)."""
    (replay,) = one_run.read(REPLAY_RUNS).collect()
    (published,) = one_run.read(PUBLISH_RUNS).collect()
    assert replay.planned_version == one_run.version(INGEST_RUNS)  # nothing was ingested after it
    assert published.replayed_at == replay.finished_at
    assert _ingest_bounds(one_run)[0] is None  # the run's files are seen: nothing is late


def test_the_rows_a_replay_takes_are_told_by_the_delta_logs_before_a_session_starts(one_run):
    """What sizes the JVM of a stage run over a short interval (jobs.runtime.session.quick_start)."""
    events = one_run.read(OFFSET_COMMITS).count() + one_run.read(OFFSET_SNAPSHOTS).count()
    # again over the run's whole interval: its events, read; the replayed files, all inside it, dropped unread
    assert rows_taken(one_run.root, START, END) == events
    # over its second part: the replayed files straddle its start (each holds rows of the whole run) and
    # are rewritten, rows before it included
    replayed = one_run.read(OFFSET_COMMITS_REPLAYED).count() + one_run.read(STORED_OFFSET_TIMELINE).count()
    assert rows_in_delta_logs(one_run.root, [], SPLIT, END, rewrites=REWRITES) == replayed
    later = rows_taken(one_run.root, SPLIT, END)
    assert rows_in_delta_logs(one_run.root, READS, SPLIT, END) + replayed == later
    assert rows_taken(one_run.root, END + timedelta(days=1), END + timedelta(days=2)) == 0


def test_a_process_that_replays_gives_its_session_the_rows_its_replay_takes(one_run, monkeypatch):
    asked = []

    class Started(Exception):
        pass

    def build_session(settings, output, interval, rows_taken=None):
        asked.append((interval, rows_taken() if rows_taken is not None else None))
        raise Started  # the stages are not what is tested

    monkeypatch.setattr(runner, "build_session", build_session)
    for stages in (("replay", "marts"), ("marts", "audit")):
        with pytest.raises(Started):
            run_stages(Settings(), one_run.root, None, SPLIT, END, "sized", stages)
    assert asked == [(END - SPLIT, rows_taken(one_run.root, SPLIT, END)), (END - SPLIT, None)]


def test_two_runs_give_the_tables_of_one_run_and_the_first_run_again_changes_none(
    spark, landing, one_run, tmp_path
):
    split_root = tmp_path / "split"
    # the one run broadcasts the log-told commits to corroborate them; these two use the anti-join
    anti_join = Settings(replay=ReplaySettings(broadcast_logged_commits=0))
    run(spark, split_root, landing[0], START, SPLIT, run_id="first", settings=anti_join)
    run(spark, split_root, landing[0], SPLIT, END, run_id="second", settings=anti_join)
    split = Lake(spark, split_root)

    def assert_tables_of_one_run() -> None:
        for spec in (*BRONZE_TABLES, *SILVER_TABLES, *GOLD_TABLES):
            if spec is REPLAY_CHECKPOINTS:  # the one run has no checkpoint at SPLIT: compare those at the end
                final = F.col("as_of") == F.lit(END)
                assert_frames_equal(split.read(spec).where(final), one_run.read(spec).where(final))
                continue
            assert_same_table(split, one_run, spec)

    assert_tables_of_one_run()
    # the first interval run again (a cleared Airflow task), the second published since: the
    # windows that hold SPLIT (its hour, its day) stay whole, as the second run completed them
    run(spark, split_root, landing[0], START, SPLIT, run_id="first again", settings=anti_join)
    assert_tables_of_one_run()


def _lake_without_a_brokers_first_hour(spark, landing, tmp_path, settings: Settings) -> Path:
    """A lake whose runs went through END while one broker's first hour of commits had not
    landed (the module's landing, as it was once the two runs are done)."""
    held = min((landing[0] / "commits").rglob("00*"))
    aside = tmp_path / held.name
    lake_root = tmp_path / "lake"
    held.rename(aside)
    try:
        run(spark, lake_root, landing[0], START, SPLIT, run_id="first", settings=settings)
        run(spark, lake_root, landing[0], SPLIT, END, run_id="second", settings=settings)
    finally:
        aside.rename(held)
    return lake_root


def latest_checkpoint(lake: Lake):
    """The queues' state in a lake's latest checkpoint (at END or after), without its time: a run
    after END, with nothing landed after it, checkpoints the same state at its own end."""
    checkpoints = lake.read(REPLAY_CHECKPOINTS)
    latest = checkpoints.agg(F.max("as_of")).collect()[0][0]
    assert latest >= END.replace(tzinfo=None)
    return checkpoints.where(F.col("as_of") == F.lit(latest)).drop("as_of")


def assert_lake_of_one_run(lake: Lake, one_run: Lake) -> None:
    for spec in (*BRONZE_TABLES, *SILVER_TABLES, *GOLD_TABLES):
        if spec is REPLAY_CHECKPOINTS:  # the one run has none at SPLIT: compare those at the end
            assert_frames_equal(latest_checkpoint(lake), latest_checkpoint(one_run))
            continue
        assert_same_table(lake, one_run, spec)


def test_a_run_of_an_earlier_interval_replays_what_it_lands_through_the_later_ones(
    spark, landing, one_run, tmp_path
):
    """A run asked for the first half hour lands the broker's first hour: its commits after that
    half hour change the state every later checkpoint holds, so the run replays through them,
    and the lake is the one run's."""
    anti_join = Settings(replay=ReplaySettings(broadcast_logged_commits=0))
    lake_root = _lake_without_a_brokers_first_hour(spark, landing, tmp_path, anti_join)
    half_hour = START + timedelta(minutes=30)
    run(spark, lake_root, landing[0], START, half_hour, run_id="backfill", settings=anti_join)
    assert_lake_of_one_run(Lake(spark, lake_root), one_run)


@pytest.mark.parametrize(
    "interval", [(None, None), (END, END + timedelta(hours=1))], ids=["no interval asked", "the next hour"]
)
def test_late_files_of_a_run_that_stopped_after_its_ingest_are_replayed_by_the_next_run(
    spark, landing, one_run, tmp_path, interval
):
    """The run that lands the broker's first hour stops after its ingest (a hand run that crashed):
    the next run, under an id of its own, replays those files through every later checkpoint,
    whether it is asked for no interval or for the schedule's next hour."""
    anti_join = Settings(replay=ReplaySettings(broadcast_logged_commits=0))
    lake_root = _lake_without_a_brokers_first_hour(spark, landing, tmp_path, anti_join)
    half_hour = START + timedelta(minutes=30)
    run(spark, lake_root, landing[0], START, half_hour, run_id="hand", stages=("ingest",), settings=anti_join)
    run(spark, lake_root, landing[0], *interval, run_id="next", settings=anti_join)
    assert_lake_of_one_run(Lake(spark, lake_root), one_run)


def test_a_run_between_a_runs_marts_and_its_publish_makes_it_stage_its_rows_again(
    spark, landing, one_run, tmp_path
):
    """A hand run over the first hour comes between the marts and the publish of a run over both
    hours: that run's publish refuses the hand run's staged rows instead of publishing them over
    its own ranges; once its marts run again, the lake is the one run's."""
    lake_root = tmp_path / "lake"
    run(spark, lake_root, landing[0], START, END, run_id="whole", stages=("ingest", "replay", "marts"))
    run(spark, lake_root, landing[0], START, SPLIT, run_id="hand")
    with pytest.raises(
        StageOrderError,
        match="staging holds the gold rows of run hand, not those of run whole's latest replay",
    ):
        run(spark, lake_root, landing[0], START, END, run_id="whole", stages=("publish",))
    run(spark, lake_root, landing[0], START, END, run_id="whole", stages=("marts", "publish"))
    assert_lake_of_one_run(Lake(spark, lake_root), one_run)


def _queryable_tables(spark, lake: Lake) -> dict[TableSpec, DataFrame]:
    """Every bronze, silver and gold table of ``lake`` as it is now, held in memory."""
    tables = (*BRONZE_TABLES, *SILVER_TABLES, *GOLD_TABLES)
    return {spec: spark.createDataFrame(lake.read(spec).collect(), spec.schema) for spec in tables}


def _assert_tables_are(lake: Lake, tables: dict[TableSpec, DataFrame]) -> None:
    for spec, rows in tables.items():
        assert_frames_equal(lake.read(spec), rows)


def test_rerunning_an_interval_leaves_the_tables_unchanged(spark, landing, one_run, tmp_path):
    before = _queryable_tables(spark, one_run)
    run(spark, one_run.root, landing[0], START, END, run_id="again")
    _assert_tables_are(one_run, before)


def test_shuffles_sized_to_the_interval_leave_the_tables_as_they_were(spark, landing, one_run, monkeypatch):
    """The replay, marts and publish start their shuffles with a partition per
    ``shuffle_partition_rows`` events of the interval they replayed (jobs.stages.shuffles); the one
    run's started with 4 (two a core, its events being few). Run again with a partition per 200
    events, they start with more, and the tables are the one run's."""
    if one_run.statistics(OFFSET_COMMITS) is None:
        pytest.skip("the engine keeps the Delta log's statistics to itself: the shuffles are not sized")
    sized = []

    def recorded(settings, events, cores):
        sized.append(events)
        return shuffle_partitions(settings, events, cores)

    monkeypatch.setattr(shuffles, "shuffle_partitions", recorded)
    before = _queryable_tables(spark, one_run)
    resized = Settings(spark=SparkSettings(shuffle_partition_rows=200))
    run(spark, one_run.root, landing[0], START, END, run_id="resized", settings=resized)
    replayed = replayed_interval(one_run, "resized")
    events = sum(
        one_run.statistics(spec, start=replayed.replayed_from, end=replayed.replayed_to).rows
        for spec in (OFFSET_COMMITS, OFFSET_SNAPSHOTS)
    )
    assert 4 * 200 < events < 64 * 200  # neither bound decides the number
    assert sized == [events] * 3  # the replay, the marts, the publish
    assert spark.conf.get(SHUFFLE_PARTITIONS) == str(-(-events // 200))
    _assert_tables_are(one_run, before)


def test_an_interrupted_ingest_is_completed_without_duplicates(
    spark, landing, one_run, tmp_path, monkeypatch
):
    import jobs.stages.ingest as ingest_stage

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
        assert_same_table(recovered, one_run, spec)


def test_the_reader_lands_the_rows_and_counts_spark_would(spark, landing, one_run, tmp_path, monkeypatch):
    """On the embedded lake the commit reader lands the lines it has checked itself; where it
    cannot (native Spark Delta, a cluster), Spark lands them: the same tables and accounting."""

    def reader_written(lake: Lake) -> list[Path]:
        files = Path(lake.path(OFFSET_COMMITS)).rglob("*.parquet")
        return [p for p in files if FILE_METADATA_KEY in (pq.read_metadata(p).metadata or {})]

    assert reader_written(one_run)
    monkeypatch.setattr(Lake, "worker_dir", lambda self, spec, name: None)
    run(spark, tmp_path / "by-spark", landing[0], START, END, run_id="whole", stages=("ingest",))
    by_spark = Lake(spark, tmp_path / "by-spark")
    assert not reader_written(by_spark)
    for spec in (*BRONZE_TABLES, REJECTED_INPUTS):
        assert_same_table(by_spark, one_run, spec)
    accounting = {
        "source_file",
        "status",
        "records_read",
        "records_landed",
        "records_quarantined",
        "event_min_at",
        "event_max_at",
    }
    not_accounting = tuple(c for c in INGEST_RUNS.columns if c not in accounting)
    assert_same_table(by_spark, one_run, INGEST_RUNS, ignore=not_accounting)


def test_the_simulators_manifest_beside_the_landed_files_is_not_taken_for_input(landing, one_run):
    root, _ = landing
    manifest = str(root / "_simulation_manifest.json")
    assert Path(manifest).is_file()
    ingested = {r.source_file for r in one_run.read(INGEST_RUNS).collect()}
    assert ingested and manifest not in ingested
    assert one_run.read(REJECTED_INPUTS).where(F.col("source_file") == manifest).count() == 0


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
    assert (ops.status, ops.records_read, ops.records_landed, ops.records_quarantined) == (
        "ingested",
        3,
        1,
        2,
    )
