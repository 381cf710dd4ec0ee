"""Log times in a zone whose clocks change: the repeated hour told by the lines' order, the skipped
hour and an undecidable repeated hour quarantined with their reasons."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from pipelines.ingest.broker_log import parse_broker_log
from pipelines.ingest.client_log import parse_client_log
from pipelines.ingest.local_times import REPEATED_HOUR, SKIPPED_HOUR, clocks_change
from tests.pipelines.ingest.lines_helper import files_frame, rows_of

NOTIFY = (
    "[NOTIFYME]update consumer offset less than store. clientHost=10.0.0.7:1, key=orders@billing, queueId=0, "
    "requestOffset={}, storeOffset=999"
)
BERLIN = "Europe/Berlin"


@pytest.mark.parametrize(
    ("zone", "changes"),
    [("Europe/Berlin", True), ("America/New_York", True), ("Asia/Shanghai", False), ("UTC", False)],
)
def test_a_zone_whose_clocks_change_is_told_apart(zone, changes):
    # Asia/Shanghai kept daylight saving until 1991, before any RocketMQ log
    assert clocks_change(zone) is changes


def _notify(at: str, offset: int) -> str:
    return f"{at} WARN ConsumerManageThread_1 - " + NOTIFY.format(offset)


def _tick(at: str) -> str:
    return f"{at} INFO StoreStatsThread - [TIMER] put tps 0"


def test_the_repeated_hour_is_told_by_the_order_of_the_lines(spark):
    """Berlin, 2026-10-25: 03:00 CEST goes back to 02:00 CET, so 02:00-02:59 is written twice."""
    lines = {
        "b.log": [
            _tick("2026-10-25 01:59:00"),
            _notify("2026-10-25 02:10:00,500", 1),  # the first pass: CEST, UTC+2
            _notify("2026-10-25 02:10:00,200", 2),  # a line written out of order: still the first pass
            _tick("2026-10-25 02:50:00"),
            _tick("2026-10-25 02:05:00"),  # the clock went back: the second pass, CET, UTC+1
            _notify("2026-10-25 02:55:00", 3),  # before 02:59 of the first pass, but after the step
            _notify("2026-10-25 03:05:00", 4),
        ],
        # a file holding one line of the repeated hour cannot say which pass it is
        "sparse.log": [_notify("2026-10-25 02:30:00", 5)],
        # 2026-03-29: 02:00 CET goes forward to 03:00 CEST; no Berlin log says 02:30
        "spring.log": [_notify("2026-03-29 02:30:00", 6)],
    }
    parsed = parse_broker_log(files_frame(spark, lines, source_timezone=BERLIN), clocks_change=True)

    assert rows_of(parsed.commits.landed, "offset", "committed_at") == [
        (1, datetime(2026, 10, 25, 0, 10, 0, 500000)),
        (2, datetime(2026, 10, 25, 0, 10, 0, 200000)),
        (3, datetime(2026, 10, 25, 1, 55)),
        (4, datetime(2026, 10, 25, 2, 5)),
    ]
    assert rows_of(parsed.commits.rejected, "source_file", "reason") == [
        ("sparse.log", REPEATED_HOUR),
        ("spring.log", SKIPPED_HOUR),
    ]
    # without the flag (a zone that never changes) the same lines are read as they always were
    assert parse_broker_log(files_frame(spark, lines, source_timezone="UTC")).commits.landed.count() == 6


def test_a_client_logs_repeated_hour_is_told_by_its_persist_lines(spark):
    persist = (
        "{} INFO RocketmqClient - [persistAll] Group: billing ClientId: 10.0.0.7@1 updateConsumeOffsetToBroker "
        "MessageQueue [topic=orders, brokerName=broker-a, queueId=0] {}"
    )
    at = [
        "2026-10-25 02:40:00,000",
        "2026-10-25 02:59:55,000",
        "2026-10-25 02:00:00,000",
        "2026-10-25 02:40:00,000",
    ]
    lines = {"client.log": [persist.format(t, offset) for offset, t in enumerate(at)]}
    parsed = parse_client_log(files_frame(spark, lines, source_timezone=BERLIN), clocks_change=True)

    assert rows_of(parsed.landed, "offset", "committed_at") == [
        (0, datetime(2026, 10, 25, 0, 40)),
        (1, datetime(2026, 10, 25, 0, 59, 55)),
        (2, datetime(2026, 10, 25, 1, 0)),
        (3, datetime(2026, 10, 25, 1, 40)),
    ]


def test_a_copy_near_a_change_is_read_near_it():
    from datetime import UTC

    from pipelines.ingest.local_times import clock_change_near

    change = datetime(2026, 10, 25, 1, 0, tzinfo=UTC)  # Berlin: 03:00 CEST back to 02:00 CET
    assert clock_change_near(BERLIN, change)
    assert clock_change_near(BERLIN, change + timedelta(hours=23))
    assert not clock_change_near(BERLIN, change + timedelta(days=2))
    assert not clock_change_near(BERLIN, change - timedelta(hours=2))
    assert not clock_change_near("Asia/Shanghai", change)


@pytest.mark.parametrize(
    ("first_line", "landed"),
    [
        # the continued copy held lines 1-2 (the first pass alone): it quarantined them, they land now
        (3, [1, 2, 3, 4]),
        # it held lines 1-3, the step back among them: it landed them, only line 4 is new
        (4, [4]),
    ],
)
def test_a_copy_read_whole_lands_what_the_copy_it_continues_could_not_place(spark, first_line, landed):
    from pyspark.sql import functions as F

    lines = {
        "b.log": [
            _notify("2026-10-25 02:10:00", 1),
            _notify("2026-10-25 02:50:00", 2),
            _notify("2026-10-25 02:05:00", 3),  # the clock went back
            _notify("2026-10-25 02:20:00", 4),
        ]
    }
    frame = files_frame(spark, lines, source_timezone=BERLIN).withColumn(
        "_first_line", F.lit(first_line).cast("long")
    )
    parsed = parse_broker_log(frame, clocks_change=True)

    assert [offset for (offset,) in rows_of(parsed.commits.landed, "offset")] == landed
    assert parsed.commits.rejected.count() == 0
