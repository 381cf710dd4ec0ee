"""Broadcasting consumers end to end: each client's own offsets.json replayed as its own state,
with lag and status from the brokers' topicStatus outputs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.runner import run_stages
from jobs.tools.simulator.progress import StatusRow, render_topic_status
from schemas.config import Settings
from schemas.tables import CONSUMER_LAG, CONSUMER_STATUS, OFFSET_REGRESSIONS, STORED_OFFSET_TIMELINE
from tests.frames import rows

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
pytestmark = pytest.mark.slow


def _offsets_json(queues: dict[int, int]) -> str:
    # LocalFileOffsetStore's fastjson: whole MessageQueue objects as keys
    entries = ",".join(
        f'{{"brokerName":"broker-a","queueId":{q},"topic":"prices"}}:{offset}' for q, offset in queues.items()
    )
    return f'{{"offsetTable":{{{entries}}}}}'


def _land(landing, minutes: int, clients: dict[str, int], max_offset: int) -> None:
    stamp = f"{START + timedelta(minutes=minutes):%Y-%m-%dT%H:%M:%SZ}"
    for client, offset in clients.items():
        folder = landing / "client_offsets" / "prod-1" / stamp / client / "quotes"
        folder.mkdir(parents=True)
        (folder / "offsets.json").write_text(_offsets_json({0: offset}))
    status = landing / "progress" / "prod-1" / stamp / "topicStatus-prices.txt"
    status.parent.mkdir(parents=True, exist_ok=True)
    status.write_text(render_topic_status([StatusRow("broker-a", 0, 0, max_offset, "")], 1.0))


def test_each_broadcasting_client_has_its_own_timeline_lag_and_status(spark, tmp_path):
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    a, b = "10.0.0.5@DEFAULT", "10.0.0.6@DEFAULT"
    _land(landing, 0, {a: 100, b: 100}, 150)
    _land(landing, 10, {a: 140, b: 100}, 160)  # b stopped moving
    _land(landing, 20, {a: 160, b: 100}, 170)
    context = run_stages(
        Settings(),
        lake_root,
        landing,
        START,
        START + timedelta(hours=1),
        "b",
        ("ingest", "replay", "marts", "audit", "publish"),
    )
    # the two clients' first files hold the same bytes: their rows are told apart by their paths
    assert not context.quality_failed
    lake = Lake(spark, lake_root)
    assert rows(lake.read(STORED_OFFSET_TIMELINE), "consumer_group", "observed_at", "stored_offset") == [
        (f"quotes@{a}", START, 100),
        (f"quotes@{a}", START + timedelta(minutes=10), 140),
        (f"quotes@{a}", START + timedelta(minutes=20), 160),
        (f"quotes@{b}", START, 100),
        (f"quotes@{b}", START + timedelta(minutes=10), 100),
        (f"quotes@{b}", START + timedelta(minutes=20), 100),
    ]
    assert rows(lake.read(CONSUMER_LAG), "consumer_group", "observed_at", "lag_messages") == [
        (f"quotes@{a}", START, 50),
        (f"quotes@{a}", START + timedelta(minutes=10), 20),
        (f"quotes@{a}", START + timedelta(minutes=20), 10),
        (f"quotes@{b}", START, 50),
        (f"quotes@{b}", START + timedelta(minutes=10), 60),
        (f"quotes@{b}", START + timedelta(minutes=20), 70),
    ]
    # each client's status window reads that client's own lag (under the allowed lag: OK)
    assert rows(
        lake.read(CONSUMER_STATUS), "consumer_group", "status", "first_lag_messages", "last_lag_messages"
    ) == [
        (f"quotes@{a}", "OK", 50, 10),
        (f"quotes@{b}", "OK", 50, 70),
    ]


def test_a_clients_offsets_landed_again_with_other_content_replace_what_they_said(spark, tmp_path):
    # a client's offsets.json is its state at one instant: of two versions of one path, the one
    # landed last is replayed, and the re-run of the interval passes the audit
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    client = "10.0.0.5@DEFAULT"
    _land(landing, 0, {client: 100}, 150)
    _land(landing, 10, {client: 140}, 160)
    end = START + timedelta(hours=1)
    first = run_stages(Settings(), lake_root, landing, START, end, "r1")
    stamp = f"{START + timedelta(minutes=10):%Y-%m-%dT%H:%M:%SZ}"
    (landing / "client_offsets" / "prod-1" / stamp / client / "quotes" / "offsets.json").write_text(
        _offsets_json({0: 145})
    )
    second = run_stages(Settings(), lake_root, landing, START, end, "r2")
    assert not (first.quality_failed or second.quality_failed)
    lake = Lake(spark, lake_root)
    assert rows(lake.read(STORED_OFFSET_TIMELINE), "observed_at", "stored_offset") == [
        (START, 100),
        (START + timedelta(minutes=10), 145),
    ]


@pytest.mark.parametrize("landed_first", ["offsets.json", "offsets.json.bak"])
def test_a_clients_bak_landed_apart_from_its_offsets_json_is_replayed_only_without_it(
    spark, tmp_path, landed_first
):
    # LocalFileOffsetStore moves offsets.json to offsets.json.bak before it writes the new state: a
    # collector may copy the two at different moments, so they land in different runs, either first
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    client = "10.0.0.5@DEFAULT"
    _land(landing, 0, {client: 100}, 150)
    folder = landing / "client_offsets" / "prod-1" / f"{START + timedelta(minutes=10):%Y-%m-%dT%H:%M:%SZ}"
    written = {"offsets.json": 140, "offsets.json.bak": 120}  # the .bak: the write before
    (folder / client / "quotes").mkdir(parents=True)
    end = START + timedelta(hours=1)
    for run_id, name in enumerate((landed_first, *[n for n in written if n != landed_first])):
        (folder / client / "quotes" / name).write_text(_offsets_json({0: written[name]}))
        context = run_stages(Settings(), lake_root, landing, START, end, f"r{run_id}")
        assert not context.quality_failed
    lake = Lake(spark, lake_root)
    assert rows(lake.read(STORED_OFFSET_TIMELINE), "observed_at", "stored_offset") == [
        (START, 100),
        (START + timedelta(minutes=10), 140),
    ]
    assert lake.read(OFFSET_REGRESSIONS).count() == 0


def test_a_clients_bak_stays_replayed_when_its_offsets_json_lands_later_refused(spark, tmp_path):
    # an offsets.json cut by the copy parses as nothing: the .bak landed before it stays the state
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    client = "10.0.0.5@DEFAULT"
    _land(landing, 0, {client: 100}, 150)
    folder = landing / "client_offsets" / "prod-1" / f"{START + timedelta(minutes=10):%Y-%m-%dT%H:%M:%SZ}"
    (folder / client / "quotes").mkdir(parents=True)
    end = START + timedelta(hours=1)
    (folder / client / "quotes" / "offsets.json.bak").write_text(_offsets_json({0: 120}))
    run_stages(Settings(), lake_root, landing, START, end, "r1")
    (folder / client / "quotes" / "offsets.json").write_text(_offsets_json({0: 140})[:20])
    run_stages(Settings(), lake_root, landing, START, end, "r2")
    lake = Lake(spark, lake_root)
    assert rows(lake.read(STORED_OFFSET_TIMELINE), "observed_at", "stored_offset") == [
        (START, 100),
        (START + timedelta(minutes=10), 120),
    ]
