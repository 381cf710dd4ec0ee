"""offsetlake bench's whole run: ``offsetlake run`` in a child process with every stage in its figures,
and the lean jobs' regressions (DuckDB's and Spark's) held against OffsetLake's on commit events only."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from jobs.stages.runner import STAGE_NAMES
from jobs.tools.bench import lean_spark
from jobs.tools.bench.commits_only import generate, queue_count
from jobs.tools.bench.lean_run import compare_regressions, run_lean
from jobs.tools.bench.pipeline_run import PipelineRunError, every_stage, run_whole, settings_toml, stage_spans
from jobs.tools.bench.runner import lean_spark_options
from schemas.config import Settings, load_settings
from schemas.quality import QualitySettings

START = datetime(2026, 11, 21, tzinfo=UTC)
LOG = """\
26/11/25 14:23:31 WARN NativeCodeLoader: Unable to load native-hadoop library
2026-11-25 14:23:53,160 INFO stage ingest: started (run r)
2026-11-25 14:24:00,660 INFO stage ingest: done in 7.5s
2026-11-25 14:24:00,700 INFO stage replay: started (run r)
2026-11-25 14:24:03,700 INFO stage replay: done in 3.0s
2026-11-25 14:24:03,800 INFO stage audit: started (run r)
"""


def test_stage_spans_come_from_the_runs_log_and_a_missing_stage_fails():
    spans = stage_spans(LOG)
    assert list(spans) == ["ingest", "replay"]  # audit started, never done
    assert [round(end - start, 3) for start, end in spans.values()] == [7.5, 3.0]
    with pytest.raises(PipelineRunError, match=r"\['marts', 'audit', 'publish'\]"):
        every_stage(spans, Path("pipeline.log"))


def test_settings_reach_the_child_run_through_its_toml_file(tmp_path):
    settings = Settings()
    settings = settings.model_copy(update={
        "spark": settings.spark.model_copy(update={"master": "local[2]", "conf": {"spark.eventLog.enabled": "true"}}),
        "quality": QualitySettings(expectation_engine="great_expectations"),
    })  # fmt: skip
    (tmp_path / "s.toml").write_text(settings_toml(settings))
    assert load_settings(tmp_path / "s.toml") == settings
    assert settings_toml(Settings()) == "\n"


def test_commits_only_inputs_are_plain_commit_events_with_regressions(tmp_path):
    figures = generate(20_000, START, tmp_path / "landing")
    assert figures["commit_files"] == 4 and figures["queues"] == queue_count(20_000) == 16
    assert generate(20_000, START, tmp_path / "landing")["reused"] is True
    run = run_lean(tmp_path / "landing", tmp_path / "lean")
    assert run.counts["commits"] == 20_000 and 5 <= run.counts["regressions"] <= 60
    assert run.regressions == {}  # no lake to compare with


def _rows(parquet: str, sql: str) -> list[tuple]:
    return duckdb.execute(
        f"SELECT * FROM ({sql.format(parquet=f'read_parquet({parquet!r})')}) ORDER BY ALL"
    ).fetchall()


def _commit(at: str | None, offset: int, queue_id: int = 0) -> str:
    at_text = "null" if at is None else f'"{at}"'
    return (f'{{"committed_at": {at_text}, "broker": "broker-a", "client_host": "10.0.0.1:1", "topic": "t", '
            f'"consumer_group": "g", "queue_id": {queue_id}, "offset": {offset}, "path": "commit"}}\n')  # fmt: skip


def _tied_landing(root: Path) -> Path:
    """Commits of one queue at one instant in three files whose names order them ("p-q" before "p.q"
    before "p_q"; by their offsets the other way round), and the same queue in a second cluster, with a
    commit of no time."""
    at = "2026-11-21T00:00:01.000Z"
    files = {
        "c-1/d/p-q.jsonl": _commit("2026-11-21T00:00:00.000Z", 50) + _commit(at, 300),
        "c-1/d/p.q.jsonl": _commit(at, 200),
        "c-1/d/p_q.jsonl": _commit(at, 100),
        "c-2/d/x.jsonl": _commit(at, 10) + _commit(None, 5) + _commit("2026-11-21T01:00:00.000Z", 7),
    }
    for name, text in files.items():
        (root / "commits" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "commits" / name).write_text(text)
    return root


@pytest.mark.parametrize("landing", ["generated", "tied"])
def test_the_lean_spark_job_computes_what_the_lean_duckdb_job_does(spark, tmp_path, landing):
    if landing == "generated":
        generate(20_000, START, tmp_path / "landing")
    else:
        _tied_landing(tmp_path / "landing")
    duck = run_lean(tmp_path / "landing", tmp_path / "lean")
    counts = lean_spark.run(spark, tmp_path / "landing", tmp_path / "spark")
    assert counts == duck.counts and counts["regressions"] >= (2 if landing == "tied" else 10)
    for name, sql in (
        (
            "replayed",
            "SELECT cluster, broker, topic, consumer_group, queue_id, CAST(committed_at AS TIMESTAMP), "
            "regexp_replace(source_file, '^file://', '') AS source_file, \"offset\", stored_offset_before, "
            "client_offset_after, client_host, path FROM {parquet}",
        ),
        (
            "regressions",
            "SELECT * EXCLUDE (detected_at), CAST(detected_at AS TIMESTAMP) AS at FROM {parquet}",
        ),
        ("throughput", "SELECT * EXCLUDE (hour_start), CAST(hour_start AS TIMESTAMP) AS hour FROM {parquet}"),
    ):
        assert _rows(str(tmp_path / "spark" / name / "*.parquet"), sql) == _rows(
            str(tmp_path / "lean" / f"{name}.parquet"), sql
        )
    if landing == "tied":  # 300, 200, 100 at one instant: two regressions, in the paths' order
        regressions = _rows(str(tmp_path / "spark" / "regressions" / "*.parquet"), "SELECT * FROM {parquet}")
        # a commit of no time comes last in its queue's order, below the one before it
        expected = [("c-1", 100, 200), ("c-1", 200, 300), ("c-2", 7, 10), ("c-2", 5, 7)]
        assert [(r[0], r[6], r[7]) for r in regressions] == expected


def test_the_lean_spark_job_gets_the_master_and_driver_memory_the_run_gets():
    def options(**update) -> tuple[str, ...]:
        settings = Settings()
        return lean_spark_options(
            settings.model_copy(update={"spark": settings.spark.model_copy(update=update)})
        )

    assert options() == ("--master", "local[*]", "--driver-memory", "4g")
    assert options(master="local[2]") == ("--master", "local[2]")  # the run's memory is then Spark's default
    assert options(master="local[2]", conf={"spark.driver.memory": "2g"})[2:] == ("--driver-memory", "2g")
    assert options(conf={"spark.master": "local[3]"}) == ("--master", "local[3]", "--driver-memory", "4g")
    assert options(conf={"spark.driver.memory": "2g"}) == ("--master", "local[*]", "--driver-memory", "2g")


def test_a_line_that_does_not_fit_the_schema_fails_both_lean_jobs(spark, tmp_path):
    landing = _tied_landing(tmp_path / "landing")
    with (landing / "commits" / "c-1" / "d" / "p-q.jsonl").open("a") as out:
        out.write(
            _commit("2026-11-21T00:00:02.000Z", 400).replace('"offset": 400', '"offset": "four hundred"')
        )
    with pytest.raises(PipelineRunError, match="the lean DuckDB job failed"):
        run_lean(landing, tmp_path / "lean")
    with pytest.raises(Exception, match="FAILFAST"):  # Spark's permissive mode would make the offset null
        lean_spark.run(spark, landing, tmp_path / "spark")


def test_the_lean_spark_job_runs_in_its_own_process(tmp_path):
    generate(20_000, START, tmp_path / "landing")
    options = ("--master", "local[1]", "--driver-memory", "1g")
    run = run_lean(tmp_path / "landing", tmp_path / "spark", engine="spark", options=options)
    duck = run_lean(tmp_path / "landing", tmp_path / "lean")
    assert run.seconds > 0 and run.counts == duck.counts
    # each job's steps as it timed them, within its whole time
    assert (
        list(run.steps) == ["session", "read_write", "replay", "outputs"]
        and list(duck.steps) == list(run.steps)[1:]
    )
    assert 0 < sum(run.steps.values()) < run.seconds and 0 < sum(duck.steps.values()) < duck.seconds
    with pytest.raises(PipelineRunError, match="the lean Spark job failed"):
        run_lean(tmp_path / "landing", tmp_path / "bad", engine="spark", options=("--master", "nowhere"))


@pytest.mark.slow
def test_the_whole_run_has_every_stage_and_the_lean_jobs_regressions_are_offsetlakes(tmp_path):
    landing, lake = tmp_path / "landing", tmp_path / "lake"
    generate(20_000, START, landing)
    settings = Settings()
    settings = settings.model_copy(update={"spark": settings.spark.model_copy(
        update={"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2})})  # fmt: skip
    run, sampler = run_whole(settings, landing, lake, tmp_path / "run")
    assert list(run.stage_seconds) == list(STAGE_NAMES) and all(s > 0 for s in run.stage_seconds.values())
    assert run.wall_seconds > run.session_seconds + sum(run.stage_seconds.values()) > 0
    assert run.published["gold"] > 0 and sampler.samples

    lean = run_lean(landing, tmp_path / "lean", lake)
    assert lean.regressions == {"lake_rows": lean.counts["regressions"], "lean_rows": lean.counts["regressions"],
                                "only_in_lake": 0, "only_in_lean": 0, "agrees": True}  # fmt: skip
    assert lean.counts["regressions"] > 0
    on_spark = run_lean(landing, tmp_path / "lean-spark", lake, "spark", lean_spark_options(settings))
    assert on_spark.regressions == lean.regressions and on_spark.counts == lean.counts

    # one regression the lean job did not find: the comparison says so
    planted = tmp_path / "planted.parquet"
    duckdb.execute(
        f"COPY (SELECT * FROM read_parquet('{tmp_path / 'lean' / 'regressions.parquet'}') OFFSET 1) "
        f"TO '{planted}' (FORMAT PARQUET)"
    )
    assert compare_regressions(lake, planted) | {"lake_rows": None, "lean_rows": None} == {
        "lake_rows": None, "lean_rows": None, "only_in_lake": 1, "only_in_lean": 0, "agrees": False,
    }  # fmt: skip
