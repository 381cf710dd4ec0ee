"""The session build_session starts: the JVM options it gives the driver it launches, how its
shuffles are partitioned, how it lists explicit paths, and how it caches and writes."""

from __future__ import annotations

import logging
import re
import subprocess
from datetime import timedelta

import pytest
from pydantic import ValidationError
from pyspark.sql import Window
from pyspark.sql import functions as F

from jobs.runtime.java import java_executable
from jobs.runtime.session import (
    GC_OPTIONS,
    JIT_OPTIONS,
    STARTUP_JIT_OPTIONS,
    driver_java_options,
    launched_conf,
    quick_start,
)
from schemas.config import SparkSettings


def test_the_driver_jvm_compiles_generated_methods_of_any_size_and_collects_for_throughput(spark):
    # the test session is a local master started by build_session (tests/conftest.py)
    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()  # type: ignore[union-attr]
    arguments = list(runtime.getInputArguments())
    assert JIT_OPTIONS in arguments
    assert STARTUP_JIT_OPTIONS not in arguments  # a session without an interval compiles fully
    assert GC_OPTIONS in arguments
    collectors = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()  # type: ignore[union-attr]
    assert {c.getName() for c in collectors} == {"PS Scavenge", "PS MarkSweep"}
    assert any(a.startswith("-Dderby.system.home=") for a in arguments)


def test_a_run_over_a_short_interval_starts_its_jvm_for_a_quick_start_unless_the_settings_say():
    hour, day = timedelta(hours=1), timedelta(days=1)
    auto = SparkSettings()
    assert quick_start(auto, hour) and quick_start(auto, auto.startup_jit_interval)
    assert not quick_start(auto, day) and not quick_start(auto, None)  # a backfill, a whole landing
    assert quick_start(SparkSettings(jit="startup"), None)
    assert not quick_start(SparkSettings(jit="throughput"), hour)
    assert not quick_start(SparkSettings(startup_jit_interval="PT0S"), hour)
    assert STARTUP_JIT_OPTIONS in driver_java_options(auto, hour)
    assert STARTUP_JIT_OPTIONS not in driver_java_options(auto, day)
    assert JIT_OPTIONS in driver_java_options(auto, hour).split(" ")
    with pytest.raises(ValidationError, match="jit"):
        SparkSettings(jit="fast")


def test_launched_conf_is_the_master_and_memory_build_session_starts_with(spark):
    # the suite's session (tests/conftest.py) was started by build_session from these two settings
    launched = launched_conf(SparkSettings(master="local[2]", conf={"spark.driver.memory": "3g"}))
    assert launched == {"spark.master": "local[2]", "spark.driver.memory": "3g"}
    assert spark.sparkContext.master == launched["spark.master"]
    assert spark.sparkContext.getConf().get("spark.driver.memory") == launched["spark.driver.memory"]
    assert launched_conf(SparkSettings()) == {"spark.master": "local[*]", "spark.driver.memory": "4g"}
    assert launched_conf(SparkSettings(master="local[3]")) == {"spark.master": "local[3]"}  # Spark's memory


def test_a_short_interval_whose_replay_takes_many_rows_compiles_fully(caplog):
    # the quick tier slows the replay's shuffle, sort and rewrite most: over many rows a short
    # interval compiles fully (docs/experiments.md, "A short interval over many rows compiles fully")
    caplog.set_level(logging.INFO, logger="jobs.runtime.session")
    hour, auto = timedelta(hours=1), SparkSettings()
    most = auto.startup_jit_rows
    assert quick_start(auto, hour, lambda: most)
    assert quick_start(auto, hour, lambda: None)  # unknown: the interval decides
    assert not quick_start(auto, hour, lambda: most + 1)
    assert (
        "the replay takes 2,000,001 rows of the lake (startup_jit_rows 2,000,000): the driver JVM compiles fully"
        in caplog.text
    )
    assert STARTUP_JIT_OPTIONS in driver_java_options(auto, hour, lambda: most)
    assert STARTUP_JIT_OPTIONS not in driver_java_options(auto, hour, lambda: most + 1)
    assert not quick_start(SparkSettings(startup_jit_rows=0), hour, lambda: 1)
    with pytest.raises(ValidationError, match="startup_jit_rows"):
        SparkSettings(startup_jit_rows=-1)


def test_the_replays_rows_are_counted_only_where_they_can_change_the_compiler():
    def uncounted() -> int:
        raise AssertionError("the lake's rows were counted")

    hour, auto = timedelta(hours=1), SparkSettings()
    assert not quick_start(auto, timedelta(days=1), uncounted) and not quick_start(auto, None, uncounted)
    assert quick_start(SparkSettings(jit="startup"), hour, uncounted)
    assert not quick_start(SparkSettings(jit="throughput"), hour, uncounted)


def test_a_quick_start_jvm_keeps_the_code_cache_of_a_tiered_one():
    # with C1 alone HotSpot reserves 48 MiB of code cache, and one run's generated classes filled
    # it: "Out of space in CodeCache for adapters" stopped the SparkContext mid-run
    def reserved(options: str) -> int:
        flags = subprocess.run(
            [java_executable(), *options.split(), "-XX:+PrintFlagsFinal", "-version"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return int(re.search(r"ReservedCodeCacheSize\s+=\s+(\d+)", flags)[1])

    assert reserved(STARTUP_JIT_OPTIONS) >= reserved("") >= 240 * 2**20


def test_execution_memory_comes_in_pages_of_four_mib(spark):
    # a broadcast hash table takes a whole page: with the default (up to 64 MiB) a long session's
    # broadcasts of a few rows filled the heap
    manager = spark.sparkContext._jvm.org.apache.spark.SparkEnv.get().memoryManager()  # type: ignore[union-attr]
    assert manager.pageSizeBytes() == 4 * 2**20
    small = spark.range(100).withColumn("w", F.lit(1))
    assert spark.range(1000).join(F.broadcast(small), "id").count() == 100


def test_a_kept_sessions_plans_compile_their_code_once_however_many_plans_come_between(spark):
    """A session kept between intervals runs the same plans each hour, with a thousand others between
    (the test session is built as one: tests/conftest.py)."""
    compiled = (
        spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    )  # type: ignore[union-attr]

    def plan(width: int):
        # columns of distinct arithmetic: code of its own for each width, whatever the data
        return spark.range(10).select(*[(F.col("id") * k + k).alias(f"c{k}") for k in range(1, width + 1)])

    plan(1).collect()
    before = compiled.getCount()
    plan(1).collect()
    assert compiled.getCount() == before  # the same code again: taken from the cache
    for width in range(2, 160):  # more distinct plans than Spark's default cache holds (100)
        plan(width).collect()
    between = compiled.getCount()
    assert between - before >= 150
    plan(1).collect()
    assert compiled.getCount() == between


def test_a_column_expression_costs_a_few_calls_to_the_jvm(spark, monkeypatch):
    # with PySpark's call sites recorded, F.col alone made 13 calls and this expression 54
    F.col("first")  # PySpark reads whether to record them once, at its first expression
    client = spark.sparkContext._gateway._gateway_client  # type: ignore[union-attr]
    sent = []
    send = client.send_command

    def counted(command, *args, **kwargs):
        # py4j also sends "m\nd\n" (free a JVM object) whenever Python's collector drops a proxy,
        # at any moment: those are not calls the expression makes
        if not command.startswith("m\nd\n"):
            sent.append(command)
        return send(command, *args, **kwargs)

    monkeypatch.setattr(client, "send_command", counted)
    F.when(F.col("a").isNull(), F.lit("x")).otherwise(F.col("b"))
    assert len(sent) <= 14
    assert spark.conf.get("spark.python.sql.dataFrameDebugging.enabled") == "false"


def test_a_small_cached_shuffle_is_coalesced_to_one_partition(spark):
    # the replay caches its windowed state: Spark keeps every shuffle partition of a cached
    # plan unless spark.sql.optimizer.canChangeCachedPlanOutputPartitioning lets it merge them
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "64")
    try:
        rows = spark.range(1000).withColumn("queue", F.col("id") % 10)
        ranked = rows.withColumn(
            "n", F.row_number().over(Window.partitionBy("queue").orderBy("id"))
        ).persist()
        try:
            assert ranked.count() == 1000
            assert ranked.rdd.getNumPartitions() == 1
        finally:
            ranked.unpersist()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


def test_a_partition_size_spark_cannot_read_is_refused_when_settings_load():
    assert SparkSettings(partition_bytes="16MB").partition_bytes == "16MB"
    with pytest.raises(ValidationError, match="partition_bytes"):
        SparkSettings(partition_bytes="8 MB")


def _cached_bytes(frame) -> int:
    cached = frame.persist()
    try:
        cached.count()
        return sum(info.memSize() for info in frame.sparkSession.sparkContext._jsc.sc().getRDDStorageInfo())
    finally:
        cached.unpersist(blocking=True)


def test_the_session_caches_columns_as_they_are(spark):
    # compressing a cache gathers dictionary statistics on every integer and text value for
    # caches that live one stage: build_session turns it off, and a cache takes its full size
    rows = spark.range(200_000).select(F.lit(7).alias("constant"), (F.col("id") % 3).alias("few"))
    as_built = _cached_bytes(rows)
    spark.conf.set("spark.sql.inMemoryColumnarStorage.compressed", "true")
    try:
        compressed = _cached_bytes(rows)
    finally:
        spark.conf.set("spark.sql.inMemoryColumnarStorage.compressed", "false")
    assert as_built > 5 * compressed


def _last_plan(spark) -> str:
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()  # type: ignore[union-attr]
    return executions.apply(executions.size() - 1).physicalPlanDescription()


def test_partitioned_writes_go_through_open_files_instead_of_a_planned_sort(spark, tmp_path):
    # a planned write puts a WriteFiles step (ordered by the partition columns) before the
    # writers; build_session has each task write through its open files instead
    days = (
        spark.range(30)
        .withColumn("day", F.expr("date_add(date'2026-11-21', cast(id % 3 as int))"))
        .coalesce(1)
    )
    days.write.partitionBy("day").parquet(str(tmp_path / "as-built"))
    as_built = _last_plan(spark)
    spark.conf.set("spark.sql.optimizer.plannedWrite.enabled", "true")
    try:
        days.write.partitionBy("day").parquet(str(tmp_path / "planned"))
        planned = _last_plan(spark)
    finally:
        spark.conf.set("spark.sql.optimizer.plannedWrite.enabled", "false")
    assert "WriteFiles" in planned and "WriteFiles" not in as_built
    assert sorted(p.name for p in (tmp_path / "as-built").glob("day=*")) == [
        f"day=2026-11-{d}" for d in (21, 22, 23)
    ]


def test_a_local_session_lists_many_explicit_paths_without_a_spark_job(spark, tmp_path):
    # beyond 32 paths Spark lists them in a job, a task per path: on a local master those
    # tasks run on the driver's own cores, so build_session has the driver list them itself
    paths = []
    for n in range(40):
        path = tmp_path / f"doc-{n}.json"
        path.write_text(f'{{"n": {n}}}')
        paths.append(str(path))
    spark.sparkContext.setJobGroup("listing-test", "reading 40 explicit paths")
    try:
        frame = spark.read.schema("n long").json(paths)
        assert list(spark.sparkContext.statusTracker().getJobIdsForGroup("listing-test")) == []
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert sorted(r.n for r in frame.collect()) == list(range(40))


def test_the_driver_jvm_maps_the_class_archive_when_one_was_built(spark):
    # `make test` builds it first (jobs/tools/class_archive_training.py); without one the JVM starts as before
    from jobs.runtime import class_archive

    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()  # type: ignore[union-attr]
    mapped = [a for a in runtime.getInputArguments() if a.startswith("-XX:SharedArchiveFile=")]
    path = class_archive.built_archive()
    assert mapped == ([f"-XX:SharedArchiveFile={path}"] if path is not None else [])
