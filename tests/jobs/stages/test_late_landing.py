"""A file whose path gives a time before the interval a run covers, landed after the run that
covered that time: the next run ingests it, and its replay reaches back to it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.io.lake import Lake
from jobs.stages.runner import run_stages
from schemas.config import Settings
from schemas.tables import INGEST_RUNS, OFFSET_REGRESSIONS, STORED_OFFSET_TIMELINE
from tests.frames import rows
from tests.landings import land_snapshot as land


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


@pytest.mark.slow
def test_a_snapshot_landed_after_the_run_of_its_hour_is_ingested_and_replayed_by_the_next(spark, tmp_path):
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    land(landing, at(10, 0), "consumerOffset.json", '{"offsetTable":{"t@g":{0:100}}}')
    land(landing, at(11, 10), "consumerOffset.json", '{"offsetTable":{"t@g":{0:120}}}')
    first = run_stages(Settings(), lake_root, landing, at(10), at(11), "hour-10")
    # the broker's 10:59 snapshot reaches the landing after the run of 10:00-11:00 finished
    land(landing, at(10, 59), "consumerOffset.json", '{"offsetTable":{"t@g":{0:90}}}')
    second = run_stages(Settings(), lake_root, landing, at(11), at(12), "hour-11")
    assert not (first.quality_failed or second.quality_failed)

    lake = Lake(spark, lake_root)
    assert rows(lake.read(STORED_OFFSET_TIMELINE), "observed_at", "stored_offset") == [
        (at(10, 0), 100),
        (at(10, 59), 90),
        (at(11, 10), 120),
    ]
    assert rows(lake.read(OFFSET_REGRESSIONS), "detected_at", "regression_size") == [(at(10, 59), 10)]
    late = lake.read(INGEST_RUNS).where("source_file LIKE '%T10:59:00Z%'")
    assert rows(late, "run_id", "status") == [("hour-11", "ingested")]
    # a run of an hour before the snapshot finds it ingested
    third = run_stages(Settings(), lake_root, landing, at(11), at(12), "hour-11-again")
    assert third.ingest.files_ingested == 0
