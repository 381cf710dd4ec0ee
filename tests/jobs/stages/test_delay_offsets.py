"""bronze/delay_offsets through the ingest: a delayOffset.json's levels land beside the consumer
offsets of its snapshot, and a batch without one leaves the table in place, empty."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.runner import run_stages
from schemas.config import Settings
from schemas.tables import DELAY_OFFSETS, OFFSET_SNAPSHOTS, REJECTED_INPUTS
from tests.frames import rows
from tests.landings import land_snapshot as land


def at(minute: int) -> datetime:
    return datetime(2026, 11, 21, 10, minute, tzinfo=UTC)


def ingest(landing, lake_root, run_id: str) -> None:
    run_stages(Settings(), lake_root, landing, None, None, run_id, ("ingest",))


def test_a_delay_offset_file_lands_its_levels_and_quarantines_a_bad_one(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, at(0), "consumerOffset.json", '{"offsetTable":{"t@g":{0:100}}}')
    land(landing, at(0), "delayOffset.json", '{"offsetTable":{3:46,18:74,0:1}}')
    ingest(landing, tmp_path / "lake", "r1")
    lake = Lake(spark, tmp_path / "lake")
    assert rows(lake.read(DELAY_OFFSETS), "snapshot_at", "delay_level", "offset") == [
        (at(0), 3, 46),
        (at(0), 18, 74),
    ]
    assert rows(lake.read(OFFSET_SNAPSHOTS), "topic", "consumer_group", "queue_id", "offset") == [
        ("t", "g", 0, 100)
    ]
    rejected = lake.read(REJECTED_INPUTS).where("source_file LIKE '%delayOffset.json'")
    assert rows(rejected, "source_kind", "raw") == [("snapshots", "0:1")]


def test_a_batch_without_a_delay_offset_file_leaves_the_table_empty_until_one_lands(spark, tmp_path):
    landing = tmp_path / "landing"
    land(landing, at(0), "consumerOffset.json", '{"offsetTable":{"t@g":{0:100}}}')
    ingest(landing, tmp_path / "lake", "r1")
    lake = Lake(spark, tmp_path / "lake")
    assert lake.exists(DELAY_OFFSETS)
    assert lake.read(DELAY_OFFSETS).collect() == []
    land(landing, at(5), "consumerOffset.json", '{"offsetTable":{"t@g":{0:120}}}')
    land(landing, at(5), "delayOffset.json", '{"offsetTable":{2:7}}')
    ingest(landing, tmp_path / "lake", "r2")
    assert rows(lake.read(DELAY_OFFSETS), "snapshot_at", "delay_level", "offset", "_ingest_run_id") == [
        (at(5), 2, 7, "r2")
    ]
