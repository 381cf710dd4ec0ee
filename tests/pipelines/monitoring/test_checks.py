"""Each monitoring check on tiny inline data, comparing whole offending rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pipelines.monitoring import checks
from tests.frames import rows

SNAPSHOTS = "cluster string, broker string, snapshot_at timestamp, snapshot_source string"
LAG = (
    "cluster string, broker string, topic string, consumer_group string, queue_id int, observed_at timestamp, "
    "broker_offset long, broker_min_offset long, consumer_offset long, lag_messages long"
)
QUEUE_SNAPSHOTS = (
    "cluster string, broker string, topic string, consumer_group string, queue_id int, snapshot_at timestamp, "
    "snapshot_source string, offset long"
)
COMMITS = (
    "cluster string, broker string, topic string, consumer_group string, queue_id int, committed_at timestamp, "
    "offset long, _file_hash string, line_no long"
)
REGRESSIONS = (
    "cluster string, broker string, topic string, consumer_group string, queue_id int, detected_at timestamp, "
    "offset long, stored_offset long, regression_size long, client_host string, evidence string, commit_path string, "
    "key_kind string"
)


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, second, tzinfo=UTC)


START, END = at(10), at(11)


def test_snapshot_gaps_report_long_gaps_ending_in_the_interval_and_stopped_brokers(spark):
    data = [
        ("c1", "broker-a", at(9, 55), "main"),
        ("c1", "broker-a", at(10, 0), "main"),
        ("c1", "broker-a", at(10, 0), "bak"),  # same instant, a second file
        ("c1", "broker-a", at(10, 20), "main"),  # 20 min after the previous one
        ("c1", "broker-a", at(10, 25), "bak"),
        ("c1", "broker-b", at(9, 0), "main"),  # gap ends inside the interval, started before it
        ("c1", "broker-b", at(10, 16), "main"),
        ("c1", "broker-b", at(10, 30), "main"),
        ("c1", "broker-b", at(10, 45), "main"),  # exactly the allowed 15 min: fine
        ("c1", "broker-b", at(10, 50), "client_offsets"),  # not a broker snapshot
        ("c1", "broker-c", at(11, 0), "main"),  # after the interval: not seen
        ("c1", "broker-c", at(10, 44, 59), "main"),  # 15 min 1 s before the end: stopped
    ]
    found = checks.find_snapshot_gaps(
        spark.createDataFrame(data, SNAPSHOTS),
        interval_start=START,
        interval_end=END,
        max_gap=timedelta(minutes=15),
    )
    assert rows(found) == [
        (
            "c1",
            "broker-a",
            at(10, 0),
            at(10, 20),
            1200,
            "no snapshot for 1200s between 2026-11-21T10:00:00Z and 2026-11-21T10:20:00Z (allowed gap 900s)",
        ),
        (
            "c1",
            "broker-a",
            at(10, 25),
            None,
            2100,
            "snapshots stopped: none for 2100s since 2026-11-21T10:25:00Z (allowed gap 900s)",
        ),
        (
            "c1",
            "broker-b",
            at(9, 0),
            at(10, 16),
            4560,
            "no snapshot for 4560s between 2026-11-21T09:00:00Z and 2026-11-21T10:16:00Z (allowed gap 900s)",
        ),
        (
            "c1",
            "broker-c",
            at(10, 44, 59),
            None,
            901,
            "snapshots stopped: none for 901s since 2026-11-21T10:44:59Z (allowed gap 900s)",
        ),
    ]


def test_snapshot_gaps_of_regular_snapshots_are_none(spark):
    data = [("c1", "broker-a", at(10, m), "main") for m in range(0, 60, 5)]
    found = checks.find_snapshot_gaps(
        spark.createDataFrame(data, SNAPSHOTS),
        interval_start=START,
        interval_end=END,
        max_gap=timedelta(minutes=15),
    )
    assert rows(found) == []


def lag_rows(spark, data):
    return spark.createDataFrame(data, LAG)


def test_negative_lag_and_expired_offsets(spark):
    data = [
        ("c1", "broker-a", "orders", "billing", 0, at(10), 100, 10, 120, -20),  # above max: negative lag
        ("c1", "broker-a", "orders", "billing", 1, at(10), 100, 40, 5, 95),  # below min: expired
        ("c1", "broker-a", "orders", "billing", 2, at(10), 100, 0, 100, 0),  # at the max: fine
        ("c1", "broker-a", "orders", "billing", 3, at(10), 100, 40, 40, 60),  # at the min: fine
        ("c1", "broker-a", "orders", "audit", 0, at(10), 100, None, None, None),  # nothing known: fine
        ("c1", "broker-b", "orders", "audit", 0, at(10), 100, None, 3, 97),  # min unknown: fine
    ]
    negative = checks.find_negative_lag(lag_rows(spark, data))
    expired = checks.find_expired_before_consumed(lag_rows(spark, data))
    assert rows(negative) == [
        (
            "c1", "broker-a", "orders", "billing", 0, at(10), 120, 100, 20,
            "consumer offset 120 is 20 above the broker's max offset 100 (negative lag): "
            "the topic was recreated or the store wiped while the group kept its offset",
        )
    ]  # fmt: skip
    assert rows(expired) == [
        (
            "c1", "broker-a", "orders", "billing", 1, at(10), 5, 40, 35,
            "consumer offset 5 is below the broker's min offset 40: 35 messages expired before being consumed",
        )
    ]  # fmt: skip


def test_abandoned_group_is_reported_when_offsets_stand_still_while_lag_grows(spark):
    stuck = [
        ("c1", "broker-a", "orders", "old-reports", 0, at(8), 40, 0, 40, 0),
        ("c1", "broker-a", "orders", "old-reports", 0, at(9), 65, 0, 40, 25),
        ("c1", "broker-a", "orders", "old-reports", 0, at(10, 30), 130, 0, 40, 90),
        ("c1", "broker-a", "orders", "old-reports", 1, at(8, 30), 10, 0, 7, 3),
        ("c1", "broker-a", "orders", "old-reports", 1, at(10, 30), 12, 0, 7, 5),
    ]
    busy = [  # moves at 10:00: stalled for only 30 minutes
        ("c1", "broker-a", "orders", "billing", 0, at(8), 40, 0, 40, 0),
        ("c1", "broker-a", "orders", "billing", 0, at(10), 90, 0, 80, 10),
        ("c1", "broker-a", "orders", "billing", 0, at(10, 30), 130, 0, 80, 50),
    ]
    idle = [  # offsets still, but no new messages: not abandoned-looking
        ("c1", "broker-a", "quiet", "sleepy", 0, at(8), 5, 0, 5, 0),
        ("c1", "broker-a", "quiet", "sleepy", 0, at(10, 30), 5, 0, 5, 0),
    ]
    gone = [  # stalled and growing, but not observed in the interval any more
        ("c1", "broker-a", "orders", "retired", 0, at(7), 10, 0, 10, 0),
        ("c1", "broker-a", "orders", "retired", 0, at(9, 30), 60, 0, 10, 50),
        ("c1", "broker-a", "orders", "retired", 0, at(11), 90, 0, 10, 80),
    ]
    found = checks.find_abandoned_groups(
        lag_rows(spark, stuck + busy + idle + gone),
        interval_start=START,
        interval_end=END,
        stalled_after=timedelta(hours=1),
    )
    assert rows(found) == [
        (
            "c1", "orders", "old-reports", at(8, 30), at(10, 30), 7200, 2, 95, 92,
            "offsets of old-reports on orders have not moved for 7200s (since 2026-11-21T08:30:00Z) "
            "while lag grew by 92 to 95 messages over 2 queues",
        )
    ]  # fmt: skip


def snapshot_commit_frames(spark, snapshot_rows, commit_rows):
    key = ("c1", "broker-a", "orders", "billing", 3)
    snapshots = spark.createDataFrame(
        [(*key, ts, source, offset) for ts, source, offset in snapshot_rows], QUEUE_SNAPSHOTS
    )
    commits = spark.createDataFrame(
        [(*key, ts, offset, "f1", line) for line, (ts, offset) in enumerate(commit_rows, start=1)], COMMITS
    )
    return snapshots, commits


@pytest.mark.parametrize(
    ("tolerance", "expected"),
    [
        (
            timedelta(seconds=10),
            [("c1", "broker-a", "orders", "billing", 3, at(10, 0, 30), 90, 110, at(10, 0, 7), -20,
              "snapshot at 2026-11-21T10:00:30Z holds offset 90 but the last commit at or before it (at 2026-11-21T10:00:07Z) is 110")],
        ),
        (
            timedelta(0),
            [("c1", "broker-a", "orders", "billing", 3, at(10, 0, 15), 100, 110, at(10, 0, 7), -10,
              "snapshot at 2026-11-21T10:00:15Z holds offset 100 but the last commit at or before it (at 2026-11-21T10:00:07Z) is 110"),
             ("c1", "broker-a", "orders", "billing", 3, at(10, 0, 30), 90, 110, at(10, 0, 7), -20,
              "snapshot at 2026-11-21T10:00:30Z holds offset 90 but the last commit at or before it (at 2026-11-21T10:00:07Z) is 110")],
        ),
    ],
)  # fmt: skip
def test_snapshot_commit_mismatches(spark, tolerance, expected):
    snapshots, commits = snapshot_commit_frames(
        spark,
        [
            (at(9, 59, 55), "main", 100),  # before the interval: not judged
            (at(10, 0, 10), "main", 110),  # the last commit
            (at(10, 0, 15), "main", 100),  # 10:00:05 still held 100: fine with a tolerance
            (at(10, 0, 30), "main", 90),  # matches nothing
            (at(10, 0, 30), "bak", 80),  # a .bak is an older snapshot: not judged
        ],
        [(at(9, 50), 50), (at(10), 100), (at(10, 0, 7), 110), (at(11), 999)],
    )
    found = checks.find_snapshot_commit_mismatches(
        snapshots, commits, interval_start=START, interval_end=END, tolerance=tolerance
    )
    assert rows(found) == sorted(expected)


def test_snapshot_commit_mismatch_needs_a_commit_old_enough_and_orders_ties_by_line(spark):
    snapshots, commits = snapshot_commit_frames(
        spark,
        [(at(10, 0, 5), "main", 7), (at(10, 30), "main", 300)],
        # two commits in the same instant: the later line is the last commit
        [(at(10, 0, 1), 5), (at(10, 20), 200), (at(10, 20), 300)],
    )
    found = checks.find_snapshot_commit_mismatches(
        snapshots, commits, interval_start=START, interval_end=END, tolerance=timedelta(seconds=10)
    )
    assert rows(found) == []


def test_snapshot_commit_mismatch_judges_the_look_backs_commits_by_their_last(spark):
    snapshots, commits = snapshot_commit_frames(
        spark,
        [(at(10, 0, 5), "main", 40), (at(10, 0, 6), "main", 41), (at(10, 0, 20), "main", 60)],
        [
            *[(at(9, minute), 10 + minute) for minute in range(30)],  # the look-back's commits
            # two commits at the last instant before the cutoff (09:59:55): the later line is the last
            (at(9, 59, 50), 41),
            (at(9, 59, 50), 40),
            (at(9, 59, 58), 50),  # after the cutoff: recent for the first two snapshots, held for the third
        ],
    )
    found = checks.find_snapshot_commit_mismatches(
        snapshots, commits, interval_start=START, interval_end=END, tolerance=timedelta(seconds=10)
    )
    # 10:00:05 holds the last commit (40); 10:00:06 holds an older one; 10:00:20 one it already passed
    assert rows(found, "snapshot_at", "snapshot_offset", "last_commit_offset", "last_committed_at") == [
        (at(10, 0, 6), 41, 50, at(9, 59, 58)),
        (at(10, 0, 20), 60, 50, at(9, 59, 58)),
    ]


def test_large_regressions_carry_group_queue_size_and_client_host(spark):
    data = [
        (
            "c1",
            "broker-a",
            "orders",
            "billing",
            5,
            at(10, 5),
            900,
            1000,
            100,
            "10.0.0.7:35394",
            "commit",
            "update_offset",
            "normal",
        ),
        (
            "c1",
            "broker-a",
            "orders",
            "billing",
            6,
            at(10, 6),
            995,
            1000,
            5,
            "10.0.0.7:35394",
            "commit",
            "update_offset",
            "normal",
        ),
        (
            "c1",
            "broker-b",
            "orders",
            "audit",
            0,
            at(10, 7),
            10,
            60,
            50,
            None,
            "snapshot_pair",
            None,
            "normal",
        ),
    ]
    found = checks.find_large_regressions(spark.createDataFrame(data, REGRESSIONS), above=10)
    assert rows(found) == [
        ("c1", "broker-a", "orders", "billing", 5, at(10, 5), 900, 1000, 100, "10.0.0.7:35394", "commit", "update_offset", "normal",
         "offset moved back by 100 messages (from 1000 to 900), committed by client host 10.0.0.7:35394"),
        ("c1", "broker-b", "orders", "audit", 0, at(10, 7), 10, 60, 50, None, "snapshot_pair", None, "normal",
         "offset moved back by 50 messages (from 60 to 10), committed by an unknown client (seen between snapshots)"),
    ]  # fmt: skip


STATUS = (
    "cluster string, topic string, consumer_group string, window_start timestamp, window_end timestamp, "
    "status string, status_reason string, last_lag_messages long"
)


def test_status_changes_are_one_finding_per_change_of_a_window_completed_in_the_interval(spark):
    def window(group, hour, status, lag=0):
        return ("c1", "t", group, at(hour - 1), at(hour), status, f"lag {lag}", lag)

    data = [
        window("g", 9, "OK"),  # before the interval: the status it changes from
        window("g", 10, "STALL", 500),  # ends at 10:00, the interval's start: the last run's
        window("g", 11, "STALL", 600),  # ends at 11:00: no change
        window("h", 11, "WARN", 300),  # first seen and not OK
        window("k", 11, "OK"),  # first seen and OK: nothing to tell
        ("c1", "t", "g", at(11), at(12), "OK", "lag 0", 0),  # ends after the interval: not final yet
    ]
    found = checks.find_status_changes(
        spark.createDataFrame(data, STATUS), interval_start=at(10), interval_end=at(11)
    )
    assert rows(found) == [
        ("c1", "t", "h", at(10), None, "WARN", 300, "h on t: first seen -> WARN in the window from 2026-11-21T10:00:00Z (lag 300)"),
    ]  # fmt: skip
    found = checks.find_status_changes(
        spark.createDataFrame(data, STATUS), interval_start=at(9), interval_end=at(12)
    )
    assert rows(found, "consumer_group", "window_start", "previous_status", "status") == [
        ("g", at(9), "OK", "STALL"),
        ("g", at(11), "STALL", "OK"),
        ("h", at(10), None, "WARN"),
    ]


def test_dead_letter_growth_counts_each_increase_once_and_names_the_group(spark):
    schema = (
        "cluster string, broker string, topic string, queue_id int, observed_at timestamp, max_offset long, "
        "source_file string, line_no long"
    )
    offsets = spark.createDataFrame(
        [
            ("c1", "broker-a", "%DLQ%billing", 0, at(9, 55), 10, "topicStatus-%DLQ%billing.txt", 3),
            ("c1", "broker-a", "%DLQ%billing", 0, at(10, 5), 12, "topicStatus-%DLQ%billing.txt", 3),
            ("c1", "broker-a", "%DLQ%billing", 0, at(10, 20), 12, "topicStatus-%DLQ%billing.txt", 3),
            (
                "c1",
                "broker-b",
                "%DLQ%billing",
                0,
                at(10, 30),
                4,
                "topicStatus-%DLQ%billing.txt",
                4,
            ),  # first seen
            ("c1", "broker-b", "%DLQ%billing", 0, at(10, 40), 7, "topicStatus-%DLQ%billing.txt", 4),
            ("c1", "broker-a", "%DLQ%audit", 0, at(10, 5), 30, "topicStatus-%DLQ%audit.txt", 3),
            ("c1", "broker-a", "%DLQ%audit", 0, at(10, 15), 2, "topicStatus-%DLQ%audit.txt", 3),  # rebuilt
            ("c1", "broker-a", "orders", 0, at(9, 55), 100, "topicStatus-orders.txt", 3),  # not a DLQ
            ("c1", "broker-a", "orders", 0, at(10, 5), 200, "topicStatus-orders.txt", 3),
            ("c1", "broker-a", "%DLQ%late", 0, at(10, 50), 1, "topicStatus-%DLQ%late.txt", 3),
            ("c1", "broker-a", "%DLQ%late", 0, at(11, 0), 5, "topicStatus-%DLQ%late.txt", 3),  # next interval
        ],
        schema,
    )
    found = checks.find_dead_letter_growth(offsets, interval_start=START, interval_end=END)
    assert rows(found) == [
        ("c1", "%DLQ%billing", "billing", 5, at(10, 5), at(10, 40),
         "5 messages of group billing went to its dead-letter queue %DLQ%billing between 2026-11-21T10:05:00Z "
         "and 2026-11-21T10:40:00Z: consumed and retried until the retries ran out, then given up"),
    ]  # fmt: skip
