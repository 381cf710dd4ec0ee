"""The .bak rule decided once by the ingest, stored in bronze/snapshot_files, and followed by the replay."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import pytest
from pyspark.sql import functions as F

from jobs.io.lake import Lake
from jobs.sources.snapshots import CLIENT_OFFSETS_REASON
from jobs.stages.runner import run_stages
from schemas.config import Settings
from schemas.tables import INGEST_RUNS, OFFSET_REGRESSIONS, SNAPSHOT_FILES, STORED_OFFSET_TIMELINE
from tests.frames import assert_frames_equal, rows
from tests.landings import land_snapshot as land

STAGES = ("ingest", "replay")


def at(hour: int, minute: int) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


def timeline(lake: Lake) -> list[tuple]:
    return rows(lake.read(STORED_OFFSET_TIMELINE), "observed_at", "stored_offset")


@pytest.fixture
def landing(tmp_path):
    root = tmp_path / "landing"
    land(root, at(9, 55), "consumerOffset.json", '{"offsetTable":{"t@g":{0:100}}}')
    # a healthy main file with an empty table: its .bak (one persist older) is not replayed
    land(root, at(10, 0), "consumerOffset.json", '{"offsetTable":{}}')
    land(root, at(10, 0), "consumerOffset.json.bak", '{"offsetTable":{"t@g":{0:90}}}')
    # a main file whose every entry is rejected (a string offset): healthy as a document
    land(root, at(10, 5), "consumerOffset.json", '{"offsetTable":{"t@g":{0:"x"}}}')
    land(root, at(10, 5), "consumerOffset.json.bak", '{"offsetTable":{"t@g":{0:80}}}')
    return root


def test_a_bak_beside_a_healthy_main_file_is_not_replayed_even_when_the_main_file_holds_no_rows(
    spark, landing, tmp_path
):
    run_stages(Settings(), tmp_path / "lake", landing, None, None, "r1", STAGES)
    lake = Lake(spark, tmp_path / "lake")
    assert rows(lake.read(SNAPSHOT_FILES), "snapshot_at", "snapshot_source", "selection", "is_replayed") == [
        (at(9, 55), "main", "main", True),
        (at(10, 0), "bak", "bak_older", False),
        (at(10, 0), "main", "main", True),
        (at(10, 5), "bak", "bak_older", False),
        (at(10, 5), "main", "main", True),
    ]
    assert timeline(lake) == [(at(9, 55), 100)]
    assert lake.read(OFFSET_REGRESSIONS).collect() == []


def test_a_bak_that_landed_alone_is_replaced_by_its_main_file_landing_later(spark, landing, tmp_path):
    land(landing, at(10, 10), "consumerOffset.json.bak", '{"offsetTable":{"t@g":{0:70}}}')
    run_stages(Settings(), tmp_path / "lake", landing, None, None, "r1", STAGES)
    lake = Lake(spark, tmp_path / "lake")
    assert timeline(lake) == [(at(9, 55), 100), (at(10, 10), 70)]  # the .bak stands in for its main file
    land(landing, at(10, 10), "consumerOffset.json", '{"offsetTable":{"t@g":{0:120}}}')
    run_stages(Settings(), tmp_path / "lake", landing, None, None, "r2", STAGES)
    assert timeline(lake) == [(at(9, 55), 100), (at(10, 10), 120)]
    bak = lake.read(SNAPSHOT_FILES).where(
        F.col("source_file").endswith(".bak") & (F.col("snapshot_at") == at(10, 10))
    )
    assert rows(bak, "selection", "is_replayed", "_ingest_run_id") == [("bak_older", False, "r2")]


def test_a_clients_offsets_json_among_broker_files_is_skipped_with_its_reason(spark, landing, tmp_path):
    """A client's offsets.json collected into a broker's snapshot directory is not a broker store
    file: skipped with its reason, and the broker's files beside it land."""
    land(landing, at(10, 10), "offsets.json", '{"offsetTable":{"t@g":{0:5}}}')
    land(landing, at(10, 10), "consumerOffset.json", '{"offsetTable":{"t@g":{0:110}}}')
    run_stages(Settings(), tmp_path / "lake", landing, None, None, "r1", STAGES)
    lake = Lake(spark, tmp_path / "lake")
    assert timeline(lake) == [(at(9, 55), 100), (at(10, 10), 110)]
    offsets = lake.read(INGEST_RUNS).where(F.col("source_file").endswith("/offsets.json"))
    assert rows(offsets, "status", "status_reason") == [("skipped", CLIENT_OFFSETS_REASON)]


def test_a_lake_written_before_snapshot_files_existed_gets_the_same_decisions(spark, landing, tmp_path):
    run_stages(Settings(), tmp_path / "lake", landing, None, None, "r1", STAGES)
    lake = Lake(spark, tmp_path / "lake")
    decided = spark.createDataFrame(lake.read(SNAPSHOT_FILES).collect(), SNAPSHOT_FILES.schema)
    shutil.rmtree(lake.path(SNAPSHOT_FILES))
    run_stages(Settings(), tmp_path / "lake", landing, None, None, "r2", ("replay",))
    assert_frames_equal(lake.read(SNAPSHOT_FILES), decided, ignore=("_ingest_run_id",))
    assert timeline(lake) == [(at(9, 55), 100)]
