"""offsetlake bench: the DuckDB reference agrees with the pipeline row for row, the report, the comparison."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import UTC, datetime, timedelta

import duckdb
import pytest
from pyspark.sql import functions as F

from jobs.cli.main import build_parser
from jobs.console import program_commands
from jobs.io.lake import Lake
from jobs.stages.runner import STAGE_NAMES
from jobs.tools.bench import parse_sizes, run_bench
from jobs.tools.bench.compare import CHECKS_COMPARED, compare_table
from jobs.tools.bench.figures import STAGE_ROWS
from jobs.tools.bench.memory import sample_tree
from jobs.tools.bench.oracle.quality import compare_checks
from jobs.tools.bench.oracle.reference import REFERENCE_TABLES, connect
from jobs.tools.bench.oracle.sql_text import key_kind_macro
from jobs.tools.bench.printout import print_lean, print_repeats
from jobs.tools.bench.report import largest_lean, linearity, repeated
from jobs.tools.bench.runner import BenchCase, bench
from jobs.tools.bench.spark_profile import call_site, profile_stages
from jobs.tools.simulator import MANIFEST_NAME, SimulationManifest, SimulationSpec, simulate
from schemas.config import ConfigError, Settings
from schemas.tables import GOLD_TABLES, INGEST_RUNS, QUEUE_OFFSETS, STORED_OFFSET_TIMELINE
from tests.jobs.tools.simulator_helpers import small_cluster

START = datetime(2026, 11, 21, tzinfo=UTC)
# An hour of a small cluster: every kind of evidence and of incident, 32 files.
CASE = BenchCase(
    "commits-small",
    "commits",
    small_cluster(START, timedelta(hours=1), progress_interval=timedelta(minutes=30)),
    requested_events=2306,
)
# A tiny busy broker: snapshots only, 5 keys x 8 queues, 6 snapshots; landed as cluster busy-1,
# with the first queue of its 15-minute snapshot set back to 0 (as a failover to a stale slave would).
BUSY_BROKER = SimulationSpec.busy_broker_day(START).model_copy(
    update={"topics": 3, "groups": 5, "duration": timedelta(minutes=30)}
)
BUSY_CLUSTER = "busy-1"
SET_BACK_AT = START + timedelta(minutes=15)


@pytest.fixture(scope="module")
def bench_run(spark, tmp_path_factory):
    """One in-process bench case, run twice (each run a pipeline run, then DuckDB), over the small
    cluster and the busy broker, outputs kept (the second run's)."""
    workdir = tmp_path_factory.mktemp("bench")
    landing = workdir / CASE.name / "landing"
    simulate(CASE.spec, landing)
    busy = tmp_path_factory.mktemp("busy")
    simulate(BUSY_BROKER, busy)
    (busy / "snapshots" / "prod-1").rename(landing / "snapshots" / BUSY_CLUSTER)
    set_back = (
        landing / "snapshots" / BUSY_CLUSTER / "broker-a" / "2026-11-21T00:15:00Z" / "consumerOffset.json"
    )
    text = set_back.read_text()
    key, stored = re.search(r'"([^"]+)":\{0:(\d+)', text).groups()
    assert int(stored) > 0
    set_back.write_text(text.replace(f'"{key}":{{0:{stored}', f'"{key}":{{0:0', 1))
    report, path, exit_code = bench([CASE], Settings(), workdir, isolate=False, keep_outputs=True, repeat=2)
    return workdir, report, path, exit_code, (key, int(stored))


def _reference(workdir, sql: str) -> list[tuple]:
    con = duckdb.connect(str(workdir / CASE.name / "reference.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_reference_and_pipeline_agree_row_for_row(bench_run):
    workdir, report, _, exit_code, _ = bench_run
    (case,) = report["cases"]
    results = {r["table"]: (r["lake_rows"] == r["reference_rows"], r["only_in_lake"], r["only_in_reference"])
               for r in case["comparison"]["results"]}  # fmt: skip
    assert results == dict.fromkeys(
        [*REFERENCE_TABLES, "quarantine/rejected_inputs", CHECKS_COMPARED], (True, 0, 0)
    )
    assert all(case["table_rows"][t] > 0 for t in REFERENCE_TABLES)
    (checks,) = [r for r in case["comparison"]["results"] if r["table"] == CHECKS_COMPARED]
    # every suite of a table with a reference, less the checks on columns the reference does not derive
    assert checks["lake_rows"] > 60
    assert "quality" in case["duckdb"]["steps"]
    busy = _reference(
        workdir,
        f"SELECT observation, count(*) FROM ref_stored_offset_timeline WHERE cluster = '{BUSY_CLUSTER}' GROUP BY 1",
    )
    assert busy == [("snapshot", 5 * 8 * 6)]  # keys x queues x snapshots
    assert exit_code == 0 and report["agrees"]


@pytest.mark.slow
def test_reference_finds_the_injected_incidents_and_nothing_else(bench_run):
    workdir, _, _, _, (set_back_key, stored) = bench_run
    manifest = SimulationManifest.model_validate_json(
        (workdir / CASE.name / "landing" / MANIFEST_NAME).read_bytes()
    )
    found = set(_reference(
        workdir, "SELECT DISTINCT broker, topic, consumer_group, queue_id, evidence FROM ref_offset_regressions WHERE cluster = 'prod-1'"
    ))  # fmt: skip
    by_commit = {
        (i.broker, i.topic, i.consumer_group, i.queue_id, "commit")
        for i in manifest.incidents
        if i.has_notifyme
    }
    assert by_commit and by_commit <= found
    # (a failover that the snapshots show only against the last commit, not against the snapshot before, is not found)
    assert {k[:4] for k in found} <= {
        (i.broker, i.topic, i.consumer_group, i.queue_id) for i in manifest.incidents
    }
    topic, group = set_back_key.split("@")
    busy = _reference(
        workdir,
        'SELECT cluster, broker, topic, consumer_group, queue_id, detected_at, "offset", stored_offset, regression_size, '
        f"evidence, client_host, cause FROM ref_offset_regressions WHERE cluster = '{BUSY_CLUSTER}'",
    )
    # the stored offset a snapshot pair compares with is the previous snapshot's (offsets only grow, so at most
    # what the set-back file held before)
    (row,) = busy
    assert row[:7] == (BUSY_CLUSTER, "broker-a", topic, group, 0, SET_BACK_AT.replace(tzinfo=None), 0)
    assert row[9:] == ("snapshot_pair", None, "failover")
    assert 0 < row[7] <= stored and row[8] == row[7]


@pytest.mark.slow
def test_report_json_has_expected_fields(bench_run):
    _, _, path, _, _ = bench_run
    report = json.loads(path.read_text())
    assert {"created_at", "machine", "settings", "stages_timed", "audit_timed", "targets", "cases", "duckdb_ratio_largest",
            "linearity", "driver_peak_mib", "agrees"} <= report.keys()  # fmt: skip
    assert report["stages_timed"] == list(STAGE_ROWS) == list(STAGE_NAMES) and report["audit_timed"] is True
    assert len(report["cases"]) == 1
    for case in report["cases"]:
        assert {"case", "kind", "inputs", "pipeline", "duckdb", "offsetlake_to_duckdb", "ingest_through_marts_to_duckdb",
                "offsetlake_to_duckdb_cpu", "table_rows", "comparison", "load_average"} <= case.keys()  # fmt: skip
        assert list(case["pipeline"]["stages"]) == ["ingest", "replay", "marts", "audit", "publish"]
        assert case["pipeline"]["wall_seconds"] > case["pipeline"]["seconds"] > 0
        assert (
            case["lean"]["seconds"] > 0 and case["whole_run_to_lean"] > 0 and case["whole_run_to_oracle"] > 0
        )
        for stage in case["pipeline"]["stages"].values():
            assert (
                stage["seconds"] > 0
                and stage["rows"] >= 0
                and stage["driver_peak_mib"] > 0
                and stage["jvm_peak_mib"] > 0
            )
            assert stage["rows_counted"] and "driver_cpu_seconds" in stage
        assert (
            list(case["duckdb"]["steps"]) == ["read_inputs", "replay", "marts", "quality"]
            and case["offsetlake_to_duckdb"] > 0
        )
    assert report["linearity"] is None  # one commits case only


@pytest.mark.slow
def test_a_repeated_case_lists_every_run_and_takes_the_median_runs_figures(bench_run):
    _, report, path, _, _ = bench_run
    (case,) = json.loads(path.read_text())["cases"]
    assert case["median_of_runs"] == 2 and [r["run"] for r in case["repeats"]] == [1, 2]
    for run in case["repeats"]:
        assert (
            run["agrees"]
            and run["pipeline_seconds"] > run["ingest_through_marts_seconds"] > 0
            and run["duckdb_seconds"] > 0
        )
    ratios = [r["whole_run_to_lean"] for r in case["repeats"]]
    assert case["whole_run_to_lean"] == max(ratios)  # of two, the higher middle one
    assert case["repeats"][case["median_run"] - 1]["whole_run_to_lean"] == max(ratios)
    through_marts = [r["ingest_through_marts_to_duckdb"] for r in case["repeats"]]
    assert report["duckdb_ratios_largest"] == through_marts


def _run(ratio: float, mismatches: tuple[str, ...] = ()) -> dict:
    return {"case": "commits-1000", "whole_run_to_lean": ratio, "ingest_through_marts_to_duckdb": ratio / 2,
            "duckdb": {"seconds": 10.0},
            "pipeline": {"seconds": 10.0 * ratio + 1.0, "stages": {"ingest": {"seconds": 10.0 * ratio}, "publish": {"seconds": 1.0}}},
            "comparison": {"agrees": not mismatches, "results": [], "mismatches": list(mismatches)}}  # fmt: skip


def test_repeated_runs_are_judged_by_their_median_and_agree_only_if_every_run_did():
    single = _run(2.5)
    assert repeated([single]) is single
    runs = [_run(2.4), _run(1.9, ("silver/x: 1 row only in the lake",)), _run(2.1)]
    case = repeated(runs)
    assert case["whole_run_to_lean"] == 2.1 and case["median_run"] == 3 and case["median_of_runs"] == 3
    assert [r["whole_run_to_lean"] for r in case["repeats"]] == [2.4, 1.9, 2.1]
    assert case["repeats"][0]["stage_seconds"] == {"ingest": 24.0, "publish": 1.0}
    assert case["repeats"][0]["ingest_through_marts_seconds"] == 24.0
    # the median run agreed, another did not: the case does not
    assert case["comparison"]["agrees"] is False
    assert case["comparison"]["mismatches"] == ["run 2: silver/x: 1 row only in the lake"]
    with pytest.raises(ValueError, match="DuckDB time"):
        repeated([_run(2.0), {**_run(2.0), "whole_run_to_lean": None}])


def _commits_only_run(ratio: float, spark_ratio: float) -> dict:
    run = _run(ratio)
    return {**run, "case": "commits-only-1000", "kind": "commits-only", "inputs": {"commit_events": 1000},
            "pipeline": {**run["pipeline"], "wall_seconds": 10.0 * ratio}, "lean": {"seconds": 10.0},
            "lean_spark": {"seconds": 10.0 * spark_ratio, "steps": {"replay": 10.0 * spark_ratio}},
            "lean_spark_to_lean": spark_ratio,
            "whole_run_to_lean_spark": ratio / spark_ratio}  # fmt: skip


def test_the_lean_spark_jobs_ratio_is_the_judged_runs(capsys):
    case = repeated([_commits_only_run(2.4, 4.5), _commits_only_run(1.9, 4.0), _commits_only_run(2.1, 3.5)])
    largest = largest_lean([case])
    # the run judged by its whole run over the lean job (2.1) gives the Spark ratio, not the Spark ratios' median
    assert largest["ratio"] == 2.1 and largest["lean_spark_to_lean"] == 3.5
    assert [r["lean_spark_to_lean"] for r in largest["runs"]] == [4.5, 4.0, 3.5]
    assert [r["lean_spark_seconds"] for r in largest["runs"]] == [45.0, 40.0, 35.0]
    # every run keeps its lean jobs' steps, not only the run judged
    assert [r["lean_spark_steps"] for r in case["repeats"]] == [
        {"replay": 45.0},
        {"replay": 40.0},
        {"replay": 35.0},
    ]
    # a case run once is its own one run
    single = largest_lean([_commits_only_run(2.2, 4.2)])
    assert single["ratio"] == 2.2 and single["lean_spark_to_lean"] == 4.2
    assert [(r["wall_seconds"], r["lean_spark_seconds"]) for r in single["runs"]] == [(22.0, 42.0)]
    print_repeats(case)
    assert "run 3: 21.0s / lean 10.0s = 2.10x (lean Spark 35.0s = 3.50x lean)" in capsys.readouterr().out
    steps = {"read_write": 5.0, "replay": 4.0, "outputs": 1.0}
    case |= {"lean": {"seconds": 10.0, "regressions": {}, "steps": steps},
             "lean_spark": {"seconds": 35.0, "regressions": {"agrees": True}, "steps": {"session": 3.0, **steps}}}  # fmt: skip
    print_lean(case)
    printed = capsys.readouterr().out
    assert "10.0  (a process; read_write 5.0s, replay 4.0s, outputs 1.0s)" in printed
    assert "lean Spark / lean DuckDB = 3.50x; regressions equal" in printed
    assert "(the same job on Spark, a process; session 3.0s, read_write 5.0s" in printed


@pytest.mark.slow
def test_stage_rows_are_the_rows_spark_reads_from_the_lake(bench_run, spark):
    # the report counts from the Delta log's statistics; Spark reads the tables' files
    workdir, report, _, _, _ = bench_run
    (case,) = report["cases"]
    stages = {stage: figures["rows"] for stage, figures in case["pipeline"]["stages"].items()}
    lake = Lake(spark, workdir / CASE.name / "lake")
    timeline = lake.read(STORED_OFFSET_TIMELINE).count()
    assert stages["ingest"] == lake.read(INGEST_RUNS).agg(F.sum("records_read")).first()[0] > 0
    assert stages["replay"] == timeline > 0
    assert stages["marts"] == timeline + lake.read(QUEUE_OFFSETS).count()
    assert stages["publish"] == sum(lake.read(spec).count() for spec in GOLD_TABLES) > 0


@pytest.mark.slow
def test_comparison_detects_a_planted_difference(bench_run, tmp_path):
    workdir, _, _, _, _ = bench_run
    database = tmp_path / "planted.duckdb"
    shutil.copy(workdir / CASE.name / "reference.duckdb", database)
    con = duckdb.connect(str(database))
    con.execute("SET TimeZone = 'UTC'")
    (first_id, *first), (second_id, *second) = con.execute(
        "SELECT rowid, * FROM ref_offset_regressions LIMIT 2"
    ).fetchall()
    # one row changed, another duplicated: one row only in the lake, two only in DuckDB
    con.execute(
        "UPDATE ref_offset_regressions SET regression_size = regression_size + 1 WHERE rowid = ?", [first_id]
    )
    con.execute(
        "INSERT INTO ref_offset_regressions SELECT * FROM ref_offset_regressions WHERE rowid = ?", [second_id]
    )
    result = compare_table(
        con, workdir / CASE.name / "lake", "silver/offset_regressions", "ref_offset_regressions"
    )
    changed = (*first[:8], first[8] + 1, *first[9:])
    assert (result.only_in_lake, result.only_in_reference, result.agrees) == (1, 2, False)
    assert result.lake_samples == [tuple(first)]
    assert sorted(result.reference_samples, key=repr) == sorted([changed, tuple(second)], key=repr)


@pytest.mark.slow
def test_the_audits_figures_disagree_where_the_reference_holds_other_rows(bench_run, tmp_path):
    """A row duplicated in the reference's commits: every check of bronze.offset_commits counts
    one row more, its key check finds two duplicated rows, and no other table's check moves."""
    workdir, _, _, _, _ = bench_run
    database = tmp_path / "planted.duckdb"
    shutil.copy(workdir / CASE.name / "reference.duckdb", database)
    con = duckdb.connect(str(database))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("INSERT INTO ref_offset_commits SELECT * FROM ref_offset_commits LIMIT 1")
    result = compare_checks(con, workdir / CASE.name / "lake", Settings())
    commit_checks = {
        name for (name,) in con.execute("SELECT check_name FROM ref_check_results").fetchall()
        if name.startswith("bronze.offset_commits.")
    }  # fmt: skip
    assert len(commit_checks) == 8
    assert not result.agrees and result.only_in_lake == result.only_in_reference == len(commit_checks)
    assert {row[0] for row in result.reference_samples} <= commit_checks
    (unique,) = con.execute(
        "SELECT failing_rows, is_success FROM ref_check_results WHERE check_name = 'bronze.offset_commits.keys_unique'"
    ).fetchall()
    assert unique == (2, False)


def test_key_kind_macro_classifies_like_the_pipeline():
    con = connect(None)
    con.execute(key_kind_macro())
    keys = [
        ("%RETRY%g", "g", "retry"), ("%RETRY%g_t", "g", "pop_retry"), ("%RETRY%g+t", "g", "pop_retry"),
        ("%RETRY%other", "g", "retry"), ("%DLQ%g", "g", "dlq"), ("t", "g@broadcast", "broadcast"),
        ("rmq_sys_REVIVE_LOG_c", "CID_RMQ_SYS_REVIVE_GROUP", "system"), ("OFFSET_MOVED_EVENT", "__MONITOR_CONSUMER", "system"),
        ("t", "CID_ONSAPI_x", "system"), ("TopicTest", "group_a", "normal"),
    ]  # fmt: skip
    got = con.execute(
        "SELECT topic, grp, key_kind(topic, grp) FROM (VALUES "
        + ", ".join(f"('{t}', '{g}')" for t, g, _ in keys)
        + ") v(topic, grp)"
    ).fetchall()
    assert got == keys


def test_a_repeat_below_one_is_refused_before_anything_runs(tmp_path):
    args = build_parser(program_commands()).parse_args(
        ["bench", "--repeat", "0", "--workdir", str(tmp_path / "bench")]
    )
    with pytest.raises(ConfigError, match="--repeat"):
        run_bench(args, Settings())
    assert not (tmp_path / "bench").exists()


def test_sizes_are_parsed_and_checked():
    assert parse_sizes("1000000,10_000_000") == [1_000_000, 10_000_000]
    for bad in ("", "1e6", "1999", "5000,5000"):
        with pytest.raises(ConfigError):
            parse_sizes(bad)


def _case(name, kind, events, stages, cpu):
    return {"case": name, "kind": kind, "requested_events": events, "inputs": {"commit_events": events},
            "pipeline": {"seconds": sum(stages.values()), "stages": {k: {"seconds": v} for k, v in stages.items()},
                         "run": {"driver_cpu_seconds": cpu - 2.0, "workers_cpu_seconds": 2.0}}}  # fmt: skip


def test_linearity_subtracts_the_startup_run():
    cases = [
        _case("startup", "startup", 0, {"ingest": 10.0, "replay": 5.0}, cpu=20.0),
        _case("commits-1000", "commits", 1000, {"ingest": 20.0, "replay": 7.0}, cpu=48.0),
        _case("commits-10000", "commits", 10000, {"ingest": 110.0, "replay": 25.0}, cpu=300.0),
    ]
    assert linearity(cases) == {
        "small_case": "commits-1000", "large_case": "commits-10000", "startup_seconds": 15.0,
        "cpu_ratio_minus_startup": (300.0 - 20.0) / (48.0 - 20.0), "size_ratio": 10.0,
        "events_ratio": 10.0, "time_ratio": 135.0 / 27.0, "time_ratio_minus_startup": 120.0 / 12.0,
        "per_stage_minus_startup": {"ingest": 10.0, "replay": 10.0}, "target_max": 10.5,
    }  # fmt: skip


def test_profile_sums_spark_executions_per_call_site_within_each_stage(tmp_path):
    start, end = (
        f"org.apache.spark.sql.execution.ui.SparkListenerSQLExecution{kind}" for kind in ("Start", "End")
    )
    events = [
        {"Event": start, "executionId": 1, "time": 1000, "description": "collect at a.py:1"},
        {"Event": end, "executionId": 1, "time": 3000},
        {"Event": start, "executionId": 2, "time": 2000, "description": "count at b.py:2"},
        {"Event": end, "executionId": 2, "time": 2500},
        {"Event": start, "executionId": 3, "time": 6000, "description": "parquet at c.py:3"},  # never ended
    ]
    (tmp_path / "eventlog_v2_app-1").mkdir()
    (tmp_path / "eventlog_v2_app-1" / "events_1_app-1").write_text(
        "\n".join(json.dumps(e) for e in events) + "\n"
    )
    assert profile_stages(tmp_path, {"ingest": (0.0, 5.0), "replay": (5.0, 10.0)}) == {
        "ingest": {"spark_seconds": 2.0, "outside_spark_seconds": 3.0, "sql_executions": 2,
                   "top_call_sites": [{"call_site": "collect at a.py:1", "executions": 1, "seconds": 2.0},
                                      {"call_site": "count at b.py:2", "executions": 1, "seconds": 0.5}]},
        "replay": {"spark_seconds": 0.0, "outside_spark_seconds": 5.0, "sql_executions": 0, "top_call_sites": []},
    }  # fmt: skip


def test_memory_sample_of_this_process():
    sample = sample_tree(os.getpid())
    assert sample is not None and sample.python_rss > 10 << 20 and sample.python_cpu > 0
    assert sample_tree(2**22 + 12345) is None


def test_a_parquet_write_is_named_after_its_table():
    def write(path: str) -> dict:
        return {"description": "parquet at NativeMethodAccessorImpl.java:0",
                "physicalPlanDescription": f"(43) Execute InsertIntoHadoopFsRelationCommand\nArguments: file:{path}, false, Parquet"}  # fmt: skip

    assert [
        call_site(write("/x/lake/silver/offset_regressions/_offsetlake_writes/7a3b")),
        call_site(write("/x/lake/_staging/gold/consumer_lag/_offsetlake_writes/33e6")),
        call_site(write("/x/lake/ops/ingest_runs/_offsetlake_writes/merge-c039")),
        call_site({"description": "collect at /x/jobs/ingest_stage.py:58"}),
    ] == ["write silver/offset_regressions", "write _staging/gold/consumer_lag", "merge source ops/ingest_runs",
          "collect at /x/jobs/ingest_stage.py:58"]  # fmt: skip
