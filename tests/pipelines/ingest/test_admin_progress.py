"""mqadmin consumerProgress / topicStatus outputs: every layout, read by each file's own header."""

from __future__ import annotations

import re
from datetime import datetime

from pipelines.ingest.admin_progress import (
    NO_HEADER_REASON,
    QUEUE_OFFSET_COLUMNS,
    SUMMARY_REASON,
    parse_admin_progress,
)
from schemas.tables import QUEUE_OFFSETS
from tests.frames import assert_cached_parse_gives_the_same
from tests.pipelines.ingest.lines_helper import (
    broken_files_on_disk,
    broken_lines,
    broken_reasons,
    files_frame,
    read_lines,
    rows_of,
    sorted_rows,
)

AT = datetime(2026, 6, 7, 3, 0)
PROGRESS_EXCERPT = "excerpts/mqadmin_consumerProgress_5x_with-Inflight__unknown-repo.txt"
STATUS_EXCERPT = "excerpts/mqadmin_topicStatus_5x__unknown-repo.txt"
ROW = (
    "broker",
    "topic",
    "queue_id",
    "max_offset",
    "min_offset",
    "consumer_group",
    "consumer_offset",
    "inflight",
)
ROW += ("client_ip", "last_consumed_at", "evidence", "is_name_truncated")
GROUP_UNKNOWN = (
    "consumer group unknown: name the file consumerProgress-<group>.txt or keep the "
    "'mqadmin consumerProgress -g <group>' line"
)


def java_printf(pattern: str, *args: object) -> str:
    """Java's ``String.format`` for the ``%-Ns``, ``%-Nd``, ``%s``, ``%d``, ``%n`` the admin tools use."""
    python = (
        re.sub(r"%-(\d+)[sd]", r"{:<\1}", pattern).replace("%s", "{}").replace("%d", "{}").replace("%n", "")
    )
    return python.format(*args)


def parse(spark, files: dict[str, list], event_at: datetime | None = AT):
    return parse_admin_progress(files_frame(spark, files, event_at=event_at))


def test_landed_columns_are_the_bronze_table_without_run_id_and_partition():
    assert [
        c for c in QUEUE_OFFSETS.columns if c not in ("_ingest_run_id", "observed_date")
    ] == QUEUE_OFFSET_COLUMNS


def test_real_5x_consumer_progress_and_topic_status(spark, real_samples):
    files = {
        "progress/c1/t/consumerProgress-BadConsumerGroup.txt": read_lines(real_samples / PROGRESS_EXCERPT),
        "progress/c1/t/topicStatus-%DLQ%BadConsumerGroup.txt": read_lines(real_samples / STATUS_EXCERPT),
    }
    parsed = parse(spark, files)

    broker, group = "873fe6a3414c", "BadConsumerGroup"
    progress = [
        (broker, "%RETRY%BadConsumerGroup_TestTopic", 0, 3, None, group, 3, 0, None, "2026-06-07 02:49:41"),
        (broker, "%RETRY%BadConsumerGroup_TestTopic2", 0, 3, None, group, 3, 0, None, "2026-06-07 02:49:42"),
    ]
    for topic, busy_queue, busy_time in (
        ("TestTopic", 4, "2026-06-07 02:44:59"),
        ("TestTopic2", 2, "2026-06-07 02:45:03"),
    ):
        for queue in range(8):
            offset = 1 if queue == busy_queue else 0
            progress.append(
                (broker, topic, queue, offset, None, group, offset, 0, None, busy_time if offset else None)
            )
    status = [
        (broker, "%DLQ%BadConsumerGroup", q, 2 if q == 0 else 0, 0, None, None, None, None, None)
        for q in range(8)
    ]
    assert rows_of(parsed.landed, *ROW) == sorted_rows(
        [(*row, "consumer_progress", False) for row in progress]
        + [(*row, "topic_status", False) for row in status]
    )
    assert rows_of(parsed.landed.where("evidence = 'consumer_progress'"), "line_no") == [
        (n,) for n in range(2, 20)
    ]
    assert rows_of(parsed.landed, "observed_at", "cluster") == [(AT, "c1")] * 26
    assert rows_of(parsed.rejected, "line_no") == []


def test_group_from_the_echoed_command_and_files_without_a_group_rejected(spark, real_samples):
    table = read_lines(real_samples / PROGRESS_EXCERPT)
    echo = "rocketmq@873fe6a3414c:~/rocketmq-5.5.0/bin$ sh mqadmin consumerProgress -g BadConsumerGroup -n ns:9876"
    parsed = parse(spark, {"saved/echoed.txt": [echo, *table], "saved/bare.txt": table})

    assert (
        rows_of(parsed.landed, "source_file", "consumer_group")
        == [("saved/echoed.txt", "BadConsumerGroup")] * 18
    )
    assert rows_of(parsed.rejected, "source_file", "line_no", "reason") == [
        ("saved/bare.txt", n, GROUP_UNKNOWN) for n in range(2, 20)
    ]


def test_old_32_wide_layout_truncation_negative_diff_and_epoch_zero(spark):
    header = java_printf(
        "%-32s  %-32s  %-4s  %-20s  %-20s  %-20s  %s%n",
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Diff",
        "#LastTime",
    )
    row = "%-32s  %-32s  %-4d  %-20d  %-20d  %-20d  %s%n"
    long_topic = "orders_with_a_name_longer_than_thirty_two_characters"
    lines = [
        header,
        java_printf(row, long_topic[:32], "broker-a", 0, 100, 105, -5, "2019-03-13 10:00:00"),
        java_printf(row, "orders", "broker-a", 1, 0, 0, 0, "1970-01-01 08:00:00"),
        "",
        "Consume TPS: 0.0",
        "Diff Total: -5",
    ]
    parsed = parse(spark, {"p/consumerProgress-billing.txt": lines})

    assert rows_of(parsed.landed, *ROW) == sorted_rows(
        [
            (
                "broker-a",
                long_topic[:32],
                0,
                100,
                None,
                "billing",
                105,
                None,
                None,
                "2019-03-13 10:00:00",
                "consumer_progress",
                True,
            ),
            ("broker-a", "orders", 1, 0, None, "billing", 0, None, None, None, "consumer_progress", False),
        ]
    )
    assert rows_of(parsed.rejected, "line_no") == []


def test_client_ip_layouts_of_4x_and_5x(spark):
    # 4.3-4.9.2: 32-wide topic, #Client IP always printed ("NA" when unassigned)
    header_4 = java_printf(
        "%-32s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s  %s%n",
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Client IP",
        "#Diff",
        "#LastTime",
    )
    row_4 = "%-32s  %-32s  %-4d  %-20d  %-20d  %-20s %-20d  %s%n"
    # 5.1+ with -s true: 64-wide topic, #Client IP and #Inflight
    header_5 = java_printf(
        "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s %-20s%s%n",
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Client IP",
        "#Diff",
        "#Inflight",
        "#LastTime",
    )
    row_5 = "%-64s  %-32s  %-4d  %-20d  %-20d  %-20s %-20d %-20d %s%n"
    topic_64, broker_32 = "t" * 64, "b" * 32
    files = {
        "p/consumerProgress-g4.txt": [
            header_4,
            java_printf(row_4, "orders", "broker-a", 0, 10, 7, "10.0.0.7", 3, "2021-06-08 14:19:23"),
            java_printf(row_4, "orders", "broker-a", 1, 10, 10, "NA", 0, "2021-06-08 14:19:24"),
        ],
        "p/consumerProgress-g5.txt": [
            header_5,
            java_printf(row_5, topic_64, "broker-a", 0, 10, 7, "10.0.0.8", 3, 2, "N/A"),
            java_printf(row_5, "orders", broker_32, 7, 5, 5, "N/A", 0, -1, "2026-06-07 02:49:41"),
            "",
            "Consume TPS: 0.13",
            "Consume Diff Total: 3",
            "Consume Inflight Total: 1",
        ],
    }
    parsed = parse(spark, files)

    assert rows_of(parsed.landed, *ROW) == sorted_rows(
        [
            (
                "broker-a",
                "orders",
                0,
                10,
                None,
                "g4",
                7,
                None,
                "10.0.0.7",
                "2021-06-08 14:19:23",
                "consumer_progress",
                False,
            ),
            (
                "broker-a",
                "orders",
                1,
                10,
                None,
                "g4",
                10,
                None,
                None,
                "2021-06-08 14:19:24",
                "consumer_progress",
                False,
            ),
            ("broker-a", topic_64, 0, 10, None, "g5", 7, 2, "10.0.0.8", None, "consumer_progress", True),
            (
                broker_32,
                "orders",
                7,
                5,
                None,
                "g5",
                5,
                -1,
                None,
                "2026-06-07 02:49:41",
                "consumer_progress",
                True,
            ),
        ]
    )
    assert rows_of(parsed.rejected, "line_no") == []


def test_any_whitespace_around_a_line_is_not_part_of_it(spark):
    header = java_printf(
        "%-32s  %-32s  %-4s  %-20s  %-20s  %-20s  %s%n",
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Diff",
        "#LastTime",
    )
    row = "%-32s  %-32s  %-4d  %-20d  %-20d  %-20d  %s%n"
    padded = {
        "p/consumerProgress-g.txt": [
            " \t" + header + "\f ",
            "\x0b " + java_printf(row, "orders", "broker-a", 0, 10, 7, 3, "2021-06-08 14:19:23") + "\t\x0b",
            java_printf(row, "orders", "broker-a", 1, 10, 10, 0, "") + " \t ",
        ]
    }
    plain = {
        "p/consumerProgress-g.txt": [line.strip(" \t\x0b\f") for line in padded["p/consumerProgress-g.txt"]]
    }

    landed = rows_of(parse(spark, padded).landed, *ROW)
    assert landed == rows_of(parse(spark, plain).landed, *ROW)
    queue_id, last_time = ROW.index("queue_id"), ROW.index("last_consumed_at")
    assert [(r[queue_id], r[last_time]) for r in landed] == [(0, "2021-06-08 14:19:23"), (1, None)]


def test_group_column_of_the_broker_consume_stats_layout(spark):
    header = java_printf(
        "%-64s  %-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s%n",
        "#Topic",
        "#Group",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Diff",
        "#LastTime",
    )
    row = "%-64s  %-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s%n"
    lines = [
        header,
        java_printf(row, "orders", "billing", "broker-a", 0, 12, 2, 10, "2021-06-08 14:19:23"),
        java_printf(row, "orders", "audit", "broker-a", 0, 12, 12, 0, "2021-06-08 14:19:24"),
        "",
        "Diff Total: 10",
    ]
    parsed = parse(spark, {"p/brokerConsumeStats.txt": lines})

    assert rows_of(parsed.landed, *ROW) == [
        (
            "broker-a",
            "orders",
            0,
            12,
            None,
            "audit",
            12,
            None,
            None,
            "2021-06-08 14:19:24",
            "consumer_progress",
            False,
        ),
        (
            "broker-a",
            "orders",
            0,
            12,
            None,
            "billing",
            2,
            None,
            None,
            "2021-06-08 14:19:23",
            "consumer_progress",
            False,
        ),
    ]
    assert rows_of(parsed.rejected, "line_no") == []


def test_one_file_with_two_outputs_each_read_by_its_own_header_and_command(spark):
    status_header = java_printf(
        "%-32s  %-4s  %-20s  %-20s    %s%n",
        "#Broker Name",
        "#QID",
        "#Min Offset",
        "#Max Offset",
        "#Last Updated",
    )
    progress_header = java_printf(
        "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s%n",
        "#Topic",
        "#Broker Name",
        "#QID",
        "#Broker Offset",
        "#Consumer Offset",
        "#Diff",
        "#LastTime",
    )
    lines = [
        "$ sh mqadmin consumerProgress -n ns:9876 -g billing",
        "RocketMQLog:WARN No appenders could be found for logger (io.netty.util.internal.PlatformDependent0).",
        progress_header,
        java_printf("%-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s%n", "orders", "broker-a", 0, 9, 9, 0, "N/A"),
        "",
        "Consume TPS: 0.00",
        "Diff Total: 0",
        "$ sh mqadmin topicStatus -t orders",
        status_header,
        java_printf("%-32s  %-4d  %-20d  %-20d    %s%n", "broker-a", 0, 3, 9, "2021-06-08 14:19:23,023"),
        (None, "invalid UTF-8"),
        java_printf("%-32s  %-4d  %-20d  %-20d    %s%n", "broker-a", 1, 0, 0, ""),
        "$ exit",
    ]
    parsed = parse(spark, {"p/session.txt": lines})

    assert rows_of(parsed.landed, "line_no", *ROW) == [
        (4, "broker-a", "orders", 0, 9, None, "billing", 9, None, None, None, "consumer_progress", False),
        (10, "broker-a", "orders", 0, 9, 3, None, None, None, None, None, "topic_status", False),
        (12, "broker-a", "orders", 1, 0, 0, None, None, None, None, None, "topic_status", False),
    ]
    assert rows_of(parsed.rejected, "line_no", "reason", "raw") == [(11, "invalid UTF-8", None)]


def test_unknown_observation_time_summary_and_headerless_files(spark, real_samples):
    summary_header = java_printf(
        "%-64s  %-6s  %-24s %-5s  %-14s  %-7s  %s%n",
        "#Group",
        "#Count",
        "#Version",
        "#Type",
        "#Model",
        "#TPS",
        "#Diff Total",
    )
    files = {
        "p/consumerProgress-BadConsumerGroup.txt": read_lines(real_samples / PROGRESS_EXCERPT)[:2],
        "p/all.txt": [
            "$ mqadmin consumerProgress",
            summary_header,
            java_printf(
                "%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d%n",
                "billing",
                1,
                "V4_9_4",
                "PUSH",
                "CLUSTERING",
                0,
                12,
            ),
        ],
        "p/empty-ish.txt": ["", "   ", "java.net.ConnectException: connection refused", "\tat x.y(Z.java:1)"],
    }
    parsed = parse(spark, files, event_at=None)

    assert rows_of(parsed.landed, "line_no") == []
    assert rows_of(parsed.rejected, "source_file", "line_no", "reason") == sorted_rows(
        [
            (
                "p/consumerProgress-BadConsumerGroup.txt",
                2,
                "observation time unknown: the landing path carries no time",
            ),
            ("p/all.txt", 2, SUMMARY_REASON),
            ("p/empty-ish.txt", 3, NO_HEADER_REASON),
        ]
    )
    assert_cached_parse_gives_the_same(parsed, "observed_at")


def test_broken_corpus_is_listed_completely():
    assert broken_files_on_disk("admin_progress") == set(broken_reasons("admin_progress"))


def test_each_broken_file_is_rejected_with_its_reason(spark):
    parsed = parse_admin_progress(broken_lines(spark, "admin_progress", event_at=AT))

    assert rows_of(parsed.landed, "source_file") == []
    expected = [(name, reason) for name, reason in broken_reasons("admin_progress").items()]
    assert rows_of(parsed.rejected, "source_file", "reason") == sorted_rows(expected)
    assert_cached_parse_gives_the_same(parsed, "observed_at")
