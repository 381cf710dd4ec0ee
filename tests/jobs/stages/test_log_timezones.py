"""Logs of a cluster whose zone has daylight saving, through the ingest: the repeated hour's lines
land at their own instants, told apart by their order, and a time the zone skips is quarantined."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.runner import run_stages
from pipelines.ingest.local_times import REPEATED_HOUR, SKIPPED_HOUR
from schemas.config import ClusterSettings, Settings
from schemas.tables import OFFSET_COMMITS, REJECTED_INPUTS
from tests.frames import rows

NOTIFY = (
    "{} WARN ConsumerManageThread_1 - [NOTIFYME]update consumer offset less than store. clientHost=10.0.0.7:1, "
    "key=orders@billing, queueId=0, requestOffset={}, storeOffset=999"
)
PERSIST = (
    "{} INFO RocketmqClient - [persistAll] Group: billing ClientId: 10.0.0.7@1 updateConsumeOffsetToBroker "
    "MessageQueue [topic=orders, brokerName=broker-a, queueId=1] {}"
)


def test_logs_in_a_zone_with_daylight_saving_land_at_their_instants(spark, tmp_path):
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    broker_log = landing / "broker_logs" / "prod" / "broker-a" / "broker.log"
    client_log = landing / "client_logs" / "prod" / "app-1" / "rocketmq_client.log"
    for path in (broker_log, client_log):
        path.parent.mkdir(parents=True)
    # Berlin, 2026-10-25: 03:00 CEST goes back to 02:00 CET; 2026-03-29: 02:00 CET forward to 03:00 CEST
    broker_log.write_text(
        "".join(
            NOTIFY.format(at, offset) + "\n"
            for offset, at in enumerate(
                ["2026-10-25 02:30:00", "2026-10-25 02:10:00", "2026-03-29 02:30:00"], start=1
            )
        )
    )
    client_log.write_text(
        "".join(
            PERSIST.format(at, offset) + "\n"
            for offset, at in enumerate(["2026-10-25 02:58:00,000", "2026-10-25 02:01:00,000"], start=10)
        )
    )
    berlin = ClusterSettings(broker_log_timezone="Europe/Berlin", client_log_timezone="Europe/Berlin")
    run_stages(Settings(clusters={"prod": berlin}), lake_root, landing, None, None, "r1", ("ingest",))

    lake = Lake(spark, lake_root)
    assert rows(lake.read(OFFSET_COMMITS), "evidence", "offset", "committed_at") == [
        ("broker_notifyme", 1, datetime(2026, 10, 25, 0, 30, tzinfo=UTC)),  # the first pass, CEST
        ("broker_notifyme", 2, datetime(2026, 10, 25, 1, 10, tzinfo=UTC)),  # after the clock went back, CET
        ("client_persist", 10, datetime(2026, 10, 25, 0, 58, tzinfo=UTC)),
        ("client_persist", 11, datetime(2026, 10, 25, 1, 1, tzinfo=UTC)),
    ]
    assert rows(lake.read(REJECTED_INPUTS), "source_kind", "line_no", "reason") == [
        ("broker_logs", 3, SKIPPED_HOUR)
    ]


def test_a_growing_log_places_its_repeated_hour_across_its_copies(spark, tmp_path):
    """A collector copies a live Berlin broker.log three times through the night clocks go back. The
    first copy holds only the first pass: its lines of the repeated hour cannot be placed yet and
    are quarantined. The second holds the step back: it places them and lands them, with its own.
    The third ends without a newline; logback's archive of the same content lands next, holding
    nothing new, and is not read. Each commit lands once, at its own instant."""
    landing, lake_root = tmp_path / "landing", tmp_path / "lake"
    log = landing / "broker_logs" / "prod" / "broker-a" / "broker.log"
    log.parent.mkdir(parents=True)
    lines = [NOTIFY.format(at, offset) for offset, at in enumerate(
        ["2026-10-25 01:50:00", "2026-10-25 02:10:00", "2026-10-25 02:40:00",  # the first copy
         "2026-10-25 02:55:00", "2026-10-25 02:05:00", "2026-10-25 02:30:00",  # the second: the step back
         "2026-10-25 03:10:00"],  # the third
        start=1,
    )]  # fmt: skip
    berlin = ClusterSettings(broker_log_timezone="Europe/Berlin")
    settings = Settings(clusters={"prod": berlin})
    # each copy taken that night (a copy is read whole, to place the repeated hour, near a change)
    for run, upto, taken in (("r1", 3, "00:41"), ("r2", 6, "01:31"), ("r3", 7, "02:11")):
        log.write_text(
            "".join(line + "\n" for line in lines[:upto]).removesuffix("\n" if run == "r3" else "")
        )
        at = datetime.fromisoformat(f"2026-10-25T{taken}:00+00:00").timestamp()
        os.utime(log, (at, at))
        run_stages(settings, lake_root, landing, None, None, run, ("ingest",))
    archive = log.with_name("broker.1.log.gz")
    archive.write_bytes(gzip.compress(log.read_bytes()))
    os.utime(archive, (at, at))  # taken with the third copy, near the change
    run_stages(settings, lake_root, landing, None, None, "r4", ("ingest",))

    lake = Lake(spark, lake_root)
    assert rows(lake.read(OFFSET_COMMITS), "offset", "committed_at") == [
        (1, datetime(2026, 10, 24, 23, 50, tzinfo=UTC)),
        (2, datetime(2026, 10, 25, 0, 10, tzinfo=UTC)),  # the first pass, CEST
        (3, datetime(2026, 10, 25, 0, 40, tzinfo=UTC)),
        (4, datetime(2026, 10, 25, 0, 55, tzinfo=UTC)),
        (5, datetime(2026, 10, 25, 1, 5, tzinfo=UTC)),  # after the clock went back, CET
        (6, datetime(2026, 10, 25, 1, 30, tzinfo=UTC)),
        (7, datetime(2026, 10, 25, 2, 10, tzinfo=UTC)),
    ]
    assert rows(lake.read(REJECTED_INPUTS), "_ingest_run_id", "line_no", "reason") == [
        ("r1", 2, REPEATED_HOUR),
        ("r1", 3, REPEATED_HOUR),
    ]
