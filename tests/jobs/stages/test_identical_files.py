"""Byte-identical commit and log files of two clusters are two clusters' rows, each with its own key."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.runner import run_stages
from schemas.config import Settings
from schemas.tables import OFFSET_COMMITS, OFFSET_COMMITS_REPLAYED, OFFSET_RESETS
from tests.frames import rows
from tests.suites import assert_keys_unique

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
CLUSTERS = ("prod-1", "prod-2")
pytestmark = pytest.mark.slow


def test_two_clusters_identical_files_land_and_replay_both_clusters_rows_with_unique_keys(spark, tmp_path):
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    commit = {"committed_at": "2026-11-21T10:00:00.000Z", "broker": "broker-a", "client_host": "10.0.0.1:1",
              "topic": "t", "consumer_group": "g", "queue_id": 0, "offset": 5, "path": "update_offset"}  # fmt: skip
    reset = (
        "2026-11-21 10:00:01 INFO AdminBrokerThread_4 - [reset-offset] reset offset success. "
        "topic=t, group=g, clientId=10.0.0.1@DEFAULT@9\n"
    )
    # a standby cluster fed the same stream, or one cluster's files landed under a second name:
    # the same bytes, twice, each under its own cluster
    for cluster in CLUSTERS:
        stream = landing / "commits" / cluster / "broker-a" / "2026-11-21" / "10.jsonl"
        stream.parent.mkdir(parents=True)
        stream.write_text(json.dumps(commit) + "\n")
        log = landing / "broker_logs" / cluster / "broker-a" / "broker.log"
        log.parent.mkdir(parents=True)
        log.write_text(reset)

    run_stages(Settings(), lake_root, landing, START, START + timedelta(hours=1), "r", ("ingest", "replay"))

    lake = Lake(spark, lake_root)
    commits, resets = lake.read(OFFSET_COMMITS), lake.read(OFFSET_RESETS)
    assert rows(commits, "cluster", "offset", "line_no") == [("prod-1", 5, 1), ("prod-2", 5, 1)]
    assert rows(resets, "cluster", "reset_kind", "line_no") == [
        ("prod-1", "reset_success", 1),
        ("prod-2", "reset_success", 1),
    ]
    replayed = lake.read(OFFSET_COMMITS_REPLAYED)
    assert rows(replayed, "cluster", "offset", "line_no") == [("prod-1", 5, 1), ("prod-2", 5, 1)]
    for table, spec in (
        (commits, OFFSET_COMMITS),
        (resets, OFFSET_RESETS),
        (replayed, OFFSET_COMMITS_REPLAYED),
    ):
        assert_keys_unique(table, spec, START, START + timedelta(hours=1))
