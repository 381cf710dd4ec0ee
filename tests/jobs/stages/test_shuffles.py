"""The stages' shuffles start with as many partitions as their interval's events need."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.shuffles import INITIAL_PARTITIONS, SHUFFLE_PARTITIONS, shuffle_partitions, size_shuffles
from schemas.config import SparkSettings
from schemas.tables import OFFSET_COMMITS, OFFSET_SNAPSHOTS
from tests.lakes import DAY, write_rows

HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    ("events", "partitions"),
    [
        (None, 64),  # not counted: the setting
        (0, 4),  # at least two a core
        (13_000, 4),
        (500_000, 5),
        (500_001, 6),
        (1_000_000, 10),
        (6_400_000, 64),
        (10_000_000, 64),  # at most the setting
    ],
)
def test_one_partition_per_100_000_events_between_two_a_core_and_the_setting(events, partitions):
    assert shuffle_partitions(SparkSettings(), events, cores=2) == partitions


def test_never_more_than_the_setting_even_for_many_cores():
    settings = SparkSettings(shuffle_partitions=3)
    assert shuffle_partitions(settings, 0, cores=2) == 3
    assert shuffle_partitions(settings, 10**9, cores=64) == 3


def _rows_at(time_column, *instants):
    date_column = {"committed_at": "commit_date", "snapshot_at": "snapshot_date"}[time_column]
    return [{time_column: at, date_column: at.date(), "line_no": n} for n, at in enumerate(instants)]


@pytest.fixture
def restored_partitions(spark):
    before = spark.conf.get(SHUFFLE_PARTITIONS)
    yield
    spark.conf.set(SHUFFLE_PARTITIONS, before)


def test_the_session_starts_its_shuffles_with_the_intervals_events(spark, tmp_path, restored_partitions):
    # two hours of commits, each hour its own file (the Delta log counts each hour's rows), and
    # snapshots in the second hour
    minutes = [timedelta(minutes=m) for m in range(0, 60, 10)]
    write_rows(tmp_path, OFFSET_COMMITS, _rows_at("committed_at", *(DAY + m for m in minutes)))
    write_rows(
        tmp_path,
        OFFSET_COMMITS,
        _rows_at("committed_at", *(DAY + HOUR + m / 2 for m in minutes * 2)),
        "append",
    )
    write_rows(tmp_path, OFFSET_SNAPSHOTS, _rows_at("snapshot_at", *(DAY + HOUR + m for m in minutes)))
    lake = Lake(spark, tmp_path, engine="delta-rs")
    settings = SparkSettings(shuffle_partition_rows=1)  # a partition an event
    assert spark.sparkContext.defaultParallelism == 2

    assert size_shuffles(lake, settings, DAY + HOUR, DAY + 2 * HOUR) == 12 + 6
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "18"
    assert size_shuffles(lake, settings, DAY, DAY + 2 * HOUR) == 6 + 12 + 6
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "24"
    assert size_shuffles(lake, settings, DAY + 2 * HOUR, DAY + 3 * HOUR) == 4  # no event: two a core
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "4"


def test_a_lake_without_events_starts_with_two_a_core(spark, tmp_path, restored_partitions):
    lake = Lake(spark, tmp_path, engine="delta-rs")
    assert size_shuffles(lake, SparkSettings(), DAY, DAY + HOUR) == 4
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "4"


@pytest.mark.parametrize("fixed", [SHUFFLE_PARTITIONS, INITIAL_PARTITIONS])
def test_a_number_fixed_in_the_sessions_conf_is_kept(spark, tmp_path, restored_partitions, fixed):
    write_rows(tmp_path, OFFSET_COMMITS, _rows_at("committed_at", DAY))
    lake = Lake(spark, tmp_path, engine="delta-rs")
    spark.conf.set(SHUFFLE_PARTITIONS, "7")
    assert (
        size_shuffles(lake, SparkSettings(shuffle_partition_rows=1, conf={fixed: "7"}), DAY, DAY + HOUR)
        is None
    )
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "7"
