"""An admin-tool output that repeats itself byte for byte is a new observation each time it is saved."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.runner import run_stages
from jobs.tools.simulator.progress import StatusRow, render_topic_status
from schemas.config import Settings
from schemas.tables import QUEUE_OFFSETS, REJECTED_INPUTS
from tests.frames import rows
from tests.suites import assert_keys_unique

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
pytestmark = pytest.mark.slow


def test_an_idle_topics_identical_outputs_are_two_observations_with_unique_keys(spark, tmp_path):
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    # nothing produced between the two saves: the tool prints the same bytes (it prints no time)
    output = render_topic_status([StatusRow("broker-a", 0, 0, 150, "")], 0.0)
    for minutes in (0, 5):
        folder = landing / "progress" / "prod-1" / f"{START + timedelta(minutes=minutes):%Y-%m-%dT%H:%M:%SZ}"
        folder.mkdir(parents=True)
        (folder / "topicStatus-prices.txt").write_text(output)

    run_stages(Settings(), lake_root, landing, START, START + timedelta(hours=1), "r", ("ingest",))

    observed = Lake(spark, lake_root).read(QUEUE_OFFSETS)
    assert rows(observed, "observed_at", "max_offset") == [
        (START, 150),
        (START + timedelta(minutes=5), 150),
    ]
    assert_keys_unique(observed, QUEUE_OFFSETS, START, START + timedelta(hours=1))


def test_an_output_under_a_folder_time_that_is_not_read_is_observed_at_its_modification_time(spark, tmp_path):
    # the README's rule for every input: a {time} that is neither ISO-8601 nor epoch milliseconds
    # (here a collector's colons written as dashes) gives way to the file's modification time
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    path = landing / "progress" / "prod-1" / "2026-11-21T10-05-00Z" / "topicStatus-prices.txt"
    path.parent.mkdir(parents=True)
    path.write_text(render_topic_status([StatusRow("broker-a", 0, 0, 150, "")], 0.0))
    saved = START + timedelta(minutes=5)
    os.utime(path, (saved.timestamp(), saved.timestamp()))

    run_stages(Settings(), lake_root, landing, START, START + timedelta(hours=1), "r", ("ingest",))

    lake = Lake(spark, lake_root)
    assert rows(lake.read(QUEUE_OFFSETS), "observed_at", "max_offset") == [(saved, 150)]
    assert lake.read(REJECTED_INPUTS).count() == 0
