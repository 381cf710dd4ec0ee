"""rocketmq_client.log: persist lines become client_persist commits; other lines are not records."""

from __future__ import annotations

from datetime import datetime

from pipelines.ingest.client_log import parse_client_log
from tests.pipelines.ingest.lines_helper import (
    broken_files_on_disk,
    broken_lines,
    broken_reasons,
    lines_frame,
    lines_of_file,
    rows_of,
    sorted_rows,
)

PERSIST_EXCERPT = "excerpts/rocketmq_client.log_persistAll__apache-rocketmq-issue-3066.log"
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


def test_real_persist_all_line_without_comma_after_topic(spark, real_samples):
    # broker of the lines frame is None: a client log names no broker; brokerName does
    parsed = parse_client_log(lines_of_file(spark, real_samples / PERSIST_EXCERPT, broker=None))

    name = PERSIST_EXCERPT.split("/")[1]
    # 2021-06-08 14:19:23,023 GMT+8 = 06:19:23.023 UTC; the other four lines (shutdown, start, rebalance) are not records
    assert rows_of(parsed.landed, *COMMIT) == [
        (
            "c1",
            "broker-a",
            datetime(2021, 6, 8, 6, 19, 23, 23000),
            "host1@29158",
            "topic-xxx",
            "topic-xxx-consumer",
            "normal",
            5,
            2678704,
            "client_persist",
            "update_offset",
            None,
            None,
            name,
            1,
        ),
    ]
    assert rows_of(parsed.rejected, "line_no") == []


def test_layouts_and_persist_variants(spark):
    lines = [
        # 4.x: comma millis, logger name; the reader already stripped the CRLF's "\r"
        "2024-01-02 03:04:05,006 INFO RocketmqClient - [persistAll] Group: billing ClientId: 10.0.0.7@12345 "
        "updateConsumeOffsetToBroker MessageQueue [topic=orders, brokerName=broker-a, queueId=3] 1470",
        "2024-01-02 03:04:05,007 INFO RocketmqClient - [persist] Group: billing ClientId: 10.0.0.7@12345 "
        "updateConsumeOffsetToBroker MessageQueue [topic=%RETRY%billing, brokerName=broker-b, queueId=0] 0",
        # 5.x: dot millis, padded level, thread and logger in brackets
        "2024-01-02 03:04:06.100 INFO  [MQClientFactoryScheduledThread] [RemoteBrokerOffsetStore] - [persistAll] "
        "Group: billing ClientId: 10.0.0.7@12345#9912#1704164645 updateConsumeOffsetToBroker "
        "MessageQueue [topic=orders, brokerName=broker-a, queueId=65535] 9007199254740991",
        "2024-01-02 03:04:06.200 INFO RocketmqClient - remove unused mq, MessageQueue [topic=orders, brokerName=broker-a, "
        "queueId=3], billing",
    ]
    parsed = parse_client_log(lines_frame(spark, lines, source_file="c.log"))

    at = lambda s, micros: datetime(2024, 1, 1, 19, 4, s, micros)  # noqa: E731  GMT+8 -> UTC
    assert rows_of(parsed.landed, *COMMIT) == sorted_rows(
        [
            (
                "c1",
                "broker-a",
                at(5, 6000),
                "10.0.0.7@12345",
                "orders",
                "billing",
                "normal",
                3,
                1470,
                "client_persist",
                "update_offset",
                None,
                None,
                "c.log",
                1,
            ),
            (
                "c1",
                "broker-b",
                at(5, 7000),
                "10.0.0.7@12345",
                "%RETRY%billing",
                "billing",
                "retry",
                0,
                0,
                "client_persist",
                "update_offset",
                None,
                None,
                "c.log",
                2,
            ),
            (
                "c1",
                "broker-a",
                at(6, 100000),
                "10.0.0.7@12345#9912#1704164645",
                "orders",
                "billing",
                "normal",
                65535,
                2**53 - 1,
                "client_persist",
                "update_offset",
                None,
                None,
                "c.log",
                3,
            ),
        ]
    )
    assert rows_of(parsed.rejected, "line_no") == []


def test_read_errors_are_records(spark):
    parsed = parse_client_log(lines_frame(spark, ["noise", (None, "invalid UTF-8")], source_file="c.log"))

    assert rows_of(parsed.rejected, "source_file", "line_no", "reason", "raw") == [
        ("c.log", 2, "invalid UTF-8", None)
    ]


def test_broken_corpus_is_listed_completely():
    assert broken_files_on_disk("client_log") == set(broken_reasons("client_log"))


def test_each_broken_file_is_rejected_with_its_reason(spark):
    parsed = parse_client_log(broken_lines(spark, "client_log"))

    assert rows_of(parsed.landed, "source_file") == []
    # each file: a shutdown line, the broken persist line (line 2), another shutdown line (CRLF endings)
    expected = [(name, 2, reason) for name, reason in broken_reasons("client_log").items()]
    assert rows_of(parsed.rejected, "source_file", "line_no", "reason") == sorted_rows(expected)
