"""The stages' shuffles start with as many partitions as their interval's commit events need."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.shuffles import SHUFFLE_PARTITIONS, shuffle_partitions, size_shuffles
from schemas.config import SparkSettings
from schemas.tables import OFFSET_COMMITS
from tests.lakes import DAY, write_rows

HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    ("commit_events", "partitions"),
    [
        (None, 64),  # not counted: the setting
        (0, 4),  # at least two a core
        (13_000, 4),
        (500_000, 5),  # an hour of a large cluster
        (1_000_000, 10),
        (6_400_000, 64),
        (10_000_000, 64),  # at most the setting
    ],
)
def test_one_partition_per_100_000_commit_events_between_two_a_core_and_the_setting(
    commit_events, partitions
):
    assert shuffle_partitions(SparkSettings(), commit_events, cores=2) == partitions


def test_never_more_than_the_setting_even_for_many_cores():
    settings = SparkSettings(shuffle_partitions=3)
    assert shuffle_partitions(settings, 0, cores=2) == 3
    assert shuffle_partitions(settings, 10**9, cores=64) == 3


def _commits_at(*instants):
    return [{"committed_at": at, "commit_date": at.date(), "line_no": n} for n, at in enumerate(instants)]


@pytest.fixture
def restored_partitions(spark):
    before = spark.conf.get(SHUFFLE_PARTITIONS)
    yield
    spark.conf.set(SHUFFLE_PARTITIONS, before)


def test_the_session_starts_its_shuffles_with_the_intervals_count(spark, tmp_path, restored_partitions):
    # two hours of commits, each hour its own file: the Delta log counts each hour's rows
    write_rows(tmp_path, OFFSET_COMMITS, _commits_at(*(DAY + timedelta(minutes=m) for m in range(0, 60, 10))))
    write_rows(
        tmp_path,
        OFFSET_COMMITS,
        _commits_at(*(DAY + HOUR + timedelta(minutes=m) for m in range(0, 60, 5))),
        mode="append",
    )
    lake = Lake(spark, tmp_path, engine="delta-rs")
    settings = SparkSettings(shuffle_partition_rows=1)  # a partition a commit event
    cores = spark.sparkContext.defaultParallelism
    assert cores == 2

    assert size_shuffles(lake, settings, DAY + HOUR, DAY + 2 * HOUR) == 12
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "12"
    assert size_shuffles(lake, settings, DAY, DAY + 2 * HOUR) == 18
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "18"
    assert size_shuffles(lake, settings, DAY + 2 * HOUR, DAY + 3 * HOUR) == 4  # no commit: two a core
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "4"


def test_a_number_fixed_in_the_sessions_conf_is_kept(spark, tmp_path, restored_partitions):
    write_rows(tmp_path, OFFSET_COMMITS, _commits_at(DAY))
    lake = Lake(spark, tmp_path, engine="delta-rs")
    spark.conf.set(SHUFFLE_PARTITIONS, "7")  # as the session was built with the conf below
    settings = SparkSettings(shuffle_partition_rows=1, conf={SHUFFLE_PARTITIONS: "7"})
    assert size_shuffles(lake, settings, DAY, DAY + HOUR) == 7
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "7"
