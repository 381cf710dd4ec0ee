"""A table's maintenance (jobs.io.lake.Lake.maintain) on real Spark and real Delta tables in temp directories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from deltalake import DeltaTable
from pyspark.testing import assertDataFrameEqual

from jobs.io.engines import MIN_RETENTION, RetentionTooShortError
from jobs.io.lake import Lake, zorder_columns
from schemas.tables import CONSUMER_LAG, OFFSET_COMMITS, REPLAY_RUNS
from tests.jobs.io.test_lake import SPEC, frame, row


def hourly_appends(spark, lake: Lake, hours: int) -> None:
    """One small append per hour, as hourly runs leave them: ``hours`` commits, each its own file(s)."""
    start = datetime(2026, 11, 21, tzinfo=UTC)
    for hour in range(hours):
        at = start + timedelta(hours=hour)
        rows = [row(f"e{hour}-{n}", at + timedelta(minutes=n), hour * 10 + n, n % 2) for n in range(3)]
        lake.append(SPEC, frame(spark, rows).coalesce(1))


@pytest.fixture
def lake(spark, tmp_path):
    return Lake(spark, tmp_path / "lake", engine="delta-rs")


@pytest.mark.parametrize("zorder", [False, True])
def test_maintenance_leaves_fewer_files_the_same_rows_and_every_version_readable(spark, lake, zorder):
    hourly_appends(spark, lake, 6)  # six commits into one day's partition
    before = lake.read(SPEC)
    expected = before.collect()
    version = DeltaTable(lake.path(SPEC)).version()
    as_of = DeltaTable(lake.path(SPEC), version=3).to_pyarrow_table().sort_by("event_id").to_pylist()

    done = lake.maintain(SPEC, retention=MIN_RETENTION, zorder=zorder)

    assert (done.table, done.files_before, done.zordered) == ("test/events", 6, zorder)
    assert done.files_after == 1 < done.files_before  # every hour of one day's partition in one file
    assert done.vacuumed_files == 0  # the replaced files were removed just now: inside the retention
    assert done.log_bytes_after > done.log_bytes_before  # the checkpoint joins the log
    assert_same_rows(lake.read(SPEC), spark.createDataFrame(expected, SPEC.schema))
    table = DeltaTable(lake.path(SPEC))
    assert table.version() > version
    assert (Path(lake.path(SPEC)) / "_delta_log" / "_last_checkpoint").is_file()
    # time travel inside the retention: version 3 reads as it did, from its own (now removed) files
    assert DeltaTable(lake.path(SPEC), version=3).to_pyarrow_table().sort_by("event_id").to_pylist() == as_of


def assert_same_rows(actual, expected) -> None:
    assertDataFrameEqual(actual, expected, checkRowOrder=False)


def test_a_second_maintenance_finds_nothing_to_compact(spark, lake):
    hourly_appends(spark, lake, 3)
    lake.maintain(SPEC, retention=MIN_RETENTION)
    again = lake.maintain(SPEC, retention=MIN_RETENTION)
    assert (again.files_before, again.files_after, again.vacuumed_files) == (1, 1, 0)


def test_once_only_appends_stay_once_only_after_a_compaction(spark, lake):
    rows = [row("a", datetime(2026, 11, 21, 1, tzinfo=UTC), 1)]
    assert lake.append(SPEC, frame(spark, rows), once_as="batch-1")
    lake.append(SPEC, frame(spark, [row("b", datetime(2026, 11, 21, 2, tzinfo=UTC), 2)]))
    lake.maintain(SPEC, retention=MIN_RETENTION)
    assert not lake.append(SPEC, frame(spark, rows), once_as="batch-1")
    assert sorted(r.event_id for r in lake.read(SPEC).collect()) == ["a", "b"]


def test_a_retention_below_the_safe_minimum_is_refused_before_the_table_is_touched(spark, lake):
    hourly_appends(spark, lake, 2)
    version = DeltaTable(lake.path(SPEC)).version()
    with pytest.raises(RetentionTooShortError, match=r"shorter than the safe minimum of 168 hours"):
        lake.maintain(SPEC, retention=timedelta(hours=167))
    assert DeltaTable(lake.path(SPEC)).version() == version


def test_a_missing_table_is_not_maintained(lake):
    assert lake.maintain(SPEC, retention=MIN_RETENTION) is None


def test_zorder_clusters_by_the_queue_keys_columns_a_table_holds_outside_its_partitions():
    assert zorder_columns(OFFSET_COMMITS) == ("cluster", "broker", "topic", "consumer_group", "queue_id")
    assert zorder_columns(CONSUMER_LAG) == ("cluster", "broker", "topic", "consumer_group", "queue_id")
    assert zorder_columns(REPLAY_RUNS) == ()
    assert zorder_columns(SPEC) == ("queue_id",)
