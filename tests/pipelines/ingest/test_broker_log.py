"""broker.log: NOTIFYME commits and reset/correction lines, read exactly; other lines are not records."""

from __future__ import annotations

from datetime import datetime

import pytest

from pipelines.ingest.broker_log import RESET_COLUMNS, parse_broker_log
from schemas.tables import OFFSET_RESETS
from tests.pipelines.ingest.lines_helper import (
    broken_files_on_disk,
    broken_lines,
    broken_reasons,
    files_frame,
    lines_frame,
    lines_of_file,
    read_lines,
    rows_of,
    sorted_rows,
)

NOTIFYME_EXCERPT = "excerpts/broker.log_NOTIFYME__apache-rocketmq-issue-3066.log"
COMMIT = (
    "cluster",
    "broker",
    "committed_at",
    "client_host",
    "topic",
    "consumer_group",
    "key_kind",
    "queue_id",
)
COMMIT += (
    "offset",
    "evidence",
    "commit_path",
    "reported_store_offset",
    "extra_fields",
    "source_file",
    "line_no",
)
RESET = tuple(RESET_COLUMNS)
NOTIFY = "[NOTIFYME]update consumer offset less than store. clientHost={}, key={}, queueId={}, requestOffset={}, storeOffset={}"


def test_reset_columns_are_the_bronze_table_without_run_id_and_partition():
    assert [c for c in OFFSET_RESETS.columns if c not in ("_ingest_run_id", "reset_date")] == RESET_COLUMNS


def test_real_notifyme_lines(spark, real_samples):
    parsed = parse_broker_log(lines_of_file(spark, real_samples / NOTIFYME_EXCERPT, broker="broker-a"))

    name = NOTIFYME_EXCERPT.split("/")[1]
    # 2021-06-04 00:00:00 GMT+8 = 2021-06-03 16:00:00 UTC; thread PullMessageThread_* = commit piggy-backed on a pull
    common = (
        "c1",
        "broker-a",
        datetime(2021, 6, 3, 16, 0),
        "host2:35394",
        "topic-xxx",
        "topic-xxx-consumer",
        "normal",
        5,
    )
    assert rows_of(parsed.commits.landed, *COMMIT) == [
        (*common, 2611518, "broker_notifyme", "pull_piggyback", 2613665, None, name, 1),
        (*common, 2611518, "broker_notifyme", "pull_piggyback", 2613666, None, name, 2),
    ]
    assert rows_of(parsed.commits.rejected, "line_no") == []
    assert rows_of(parsed.resets.landed, "line_no") == []
    assert rows_of(parsed.resets.rejected, "line_no") == []


@pytest.mark.parametrize(
    "name",
    ["v4.8.0_broker.log__haohao1029-java.log.gz", "v4.9.4-then-5.1.4_broker.log__my-fastcms-nexfly.log.gz"],
)
def test_real_broker_logs_without_evidence_give_nothing(spark, real_samples, name):
    assert len(read_lines(real_samples / name)) > 6000  # config dumps, stack traces, registrations
    parsed = parse_broker_log(lines_of_file(spark, real_samples / name))

    for frame in (
        parsed.commits.landed,
        parsed.commits.rejected,
        parsed.resets.landed,
        parsed.resets.rejected,
    ):
        assert rows_of(frame, "line_no") == []


def test_commit_path_comes_from_the_thread_and_millis_are_accepted(spark):
    key = "%RETRY%billing@billing"
    lines = [
        "2021-06-04 00:00:05 WARN ConsumerManageThread_3 - " + NOTIFY.format("10.0.0.7:40122", key, 0, 7, 9),
        "2021-06-04 00:00:06,250 WARN SomeOtherThread - "
        + NOTIFY.format("", "orders@billing@broadcast", 65535, 0, 1),
        "2021-06-04 00:00:07 INFO ConsumerManageThread_3 - some unrelated line",
    ]
    parsed = parse_broker_log(lines_frame(spark, lines, source_timezone="UTC", source_file="b.log"))

    assert rows_of(parsed.commits.landed, *COMMIT) == sorted_rows(
        [
            (
                "c1",
                "broker-a",
                datetime(2021, 6, 4, 0, 0, 5),
                "10.0.0.7:40122",
                "%RETRY%billing",
                "billing",
                "retry",
                0,
                7,
                "broker_notifyme",
                "update_offset",
                9,
                None,
                "b.log",
                1,
            ),
            (
                "c1",
                "broker-a",
                datetime(2021, 6, 4, 0, 0, 6, 250000),
                None,
                "orders",
                "billing@broadcast",
                "broadcast",
                65535,
                0,
                "broker_notifyme",
                None,
                1,
                None,
                "b.log",
                2,
            ),
        ]
    )


def test_reset_and_correction_lines(spark):
    lines = [
        # 4.x and 5.x broker lines quoted from a public MQCloud write-up (AdminBrokerThread = admin request)
        "2020-12-03 18:30:18 INFO AdminBrokerThread_4 - [reset-offset] reset offset started by 10.1.2.3:57522. "
        "topic=broadcast-test-topic, group=broadcast-test-consumer, timestamp=1606991358536, isForce=true",
        "2020-12-03 18:30:18 INFO AdminBrokerThread_4 - [reset-offset] reset offset success. "
        "topic=broadcast-test-topic, group=broadcast-test-consumer, clientId=10.1.2.4@DEFAULT@9",
        "2020-12-03 18:30:19 WARN PullMessageThread_1 - PULL_OFFSET_MOVED:correction offset. topic=orders, "
        "groupId=billing, requestOffset=12, newOffset=100, suggestBrokerId=0",
        "2020-12-03 18:30:19 WARN PullMessageThread_1 - PULL_OFFSET_MOVED:correction offset. topic=orders, "
        "groupId=billing, requestOffset=13, newOffset=101",
        "2020-12-03 18:30:19 INFO PullMessageThread_1 - the request offset too small. group=billing, topic=orders, "
        "requestOffset=12, brokerMinOffset=100, clientIp=/10.0.0.7:40122",
        "2020-12-03 18:30:20 INFO PullMessageThread_2 - the request offset: 900 over flow badly, broker max offset: 500, "
        "consumer: /10.0.0.7:40122",
        "2020-12-03 18:30:21 INFO PullMessageThread_2 - the request offset: 901 over flow badly, fix to 500, "
        "broker max offset: 500, consumer: 10.0.0.7:40122",
        "2020-12-03 18:30:22 WARN PullMessageThread_2 - PULL_OFFSET_MOVED:none correction. topic=orders, groupId=billing, "
        "requestOffset=12, suggestBrokerId=0",
    ]
    parsed = parse_broker_log(lines_frame(spark, lines, source_file="r.log"))

    at = lambda second: datetime(2020, 12, 3, 10, 30, second)  # noqa: E731  GMT+8 -> UTC
    tail = ("r.log", "h-r.log")
    assert rows_of(parsed.resets.landed, *RESET) == sorted_rows(
        [
            (
                "c1",
                "broker-a",
                at(18),
                "broadcast-test-topic",
                "broadcast-test-consumer",
                None,
                None,
                None,
                None,
                1606991358536,
                True,
                "reset_started",
                tail[0],
                1,
                tail[1],
            ),
            (
                "c1",
                "broker-a",
                at(18),
                "broadcast-test-topic",
                "broadcast-test-consumer",
                None,
                "10.1.2.4@DEFAULT@9",
                None,
                None,
                None,
                None,
                "reset_success",
                tail[0],
                2,
                tail[1],
            ),
            (
                "c1",
                "broker-a",
                at(19),
                "orders",
                "billing",
                None,
                None,
                12,
                100,
                None,
                None,
                "pull_offset_moved",
                tail[0],
                3,
                tail[1],
            ),
            (
                "c1",
                "broker-a",
                at(19),
                "orders",
                "billing",
                None,
                None,
                13,
                101,
                None,
                None,
                "pull_offset_moved",
                tail[0],
                4,
                tail[1],
            ),
            (
                "c1",
                "broker-a",
                at(19),
                "orders",
                "billing",
                None,
                "10.0.0.7:40122",
                12,
                None,
                None,
                None,
                "offset_too_small",
                tail[0],
                5,
                tail[1],
            ),
            (
                "c1",
                "broker-a",
                at(20),
                None,
                None,
                None,
                "10.0.0.7:40122",
                900,
                None,
                None,
                None,
                "offset_overflow",
                tail[0],
                6,
                tail[1],
            ),
            (
                "c1",
                "broker-a",
                at(21),
                None,
                None,
                None,
                "10.0.0.7:40122",
                901,
                500,
                None,
                None,
                "offset_overflow",
                tail[0],
                7,
                tail[1],
            ),
        ]
    )
    assert rows_of(parsed.resets.rejected, "line_no") == []
    assert rows_of(parsed.commits.landed, "line_no") == []


def test_read_errors_and_unknown_broker_are_rejected_once(spark):
    notify = "2021-06-04 00:00:00 WARN PullMessageThread_55 - " + NOTIFY.format("h:1", "t@g", 1, 2, 3)
    reset = "2021-06-04 00:00:00 INFO AdminBrokerThread_1 - [reset-offset] reset offset success. topic=t, group=g, clientId=c"
    frame = files_frame(
        spark, {"a.log": [notify, (None, "corrupt gzip stream: unexpected end"), reset]}, broker=None
    )
    parsed = parse_broker_log(frame)

    unknown = "broker unknown: the landing path names no broker"
    assert rows_of(parsed.commits.rejected, "line_no", "reason", "raw") == sorted_rows(
        [(1, unknown, notify), (2, "corrupt gzip stream: unexpected end", None)]
    )
    assert rows_of(parsed.resets.rejected, "line_no", "reason", "raw") == [(3, unknown, reset)]


def test_broken_corpus_is_listed_completely():
    assert broken_files_on_disk("broker_log") == set(broken_reasons("broker_log"))


def test_each_broken_file_is_rejected_with_its_reason(spark):
    parsed = parse_broker_log(broken_lines(spark, "broker_log"))

    assert rows_of(parsed.commits.landed, "source_file") == []
    assert rows_of(parsed.resets.landed, "source_file") == []
    rejected = rows_of(parsed.commits.rejected, "source_file", "line_no", "reason")
    rejected += rows_of(parsed.resets.rejected, "source_file", "line_no", "reason")
    # each file: a context line, the broken evidence line (line 2), a stack-trace line
    assert sorted_rows(rejected) == sorted_rows(
        [(name, 2, reason) for name, reason in broken_reasons("broker_log").items()]
    )
