"""mqadmin consumerConnection outputs: real 3.2.6, 4.9.7 and 5.3.2 layouts, not-online errors, rendering."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.ingest.consumer_connection import (
    CLIENT_CELLS_REASON,
    CONSUME_FROM_WHERE,
    CONSUME_TYPES,
    MESSAGE_MODELS,
    NO_EXPRESSION_REASON,
    NO_OUTPUT_MESSAGE,
    ConnectionClient,
    ConnectionDocument,
    ConsumerConnectionFormatError,
    group_from_file_name,
    parse_consumer_connection,
    render_consumer_connection,
)

# 3.2.6, verbatim from a stored public blog post "MQ1# RocketMQ Connection命令" (hexo front matter
# abbrlink 6957c801, 2020-12-14): the command, JVM warnings and output as the post shows them (its
# Markdown doubled every line break and collapsed the column padding).
REAL_3_2_6 = """\
bin/mqadmin consumerConnection -g T_SCANRECORD_NEW_GROUP -n 192.168.1.x:9876



Java HotSpot(TM) 64-Bit Server VM warning: ignoring option PermSize=128m; support was removed in 8.0

Java HotSpot(TM) 64-Bit Server VM warning: ignoring option MaxPermSize=128m; support was removed in 8.0

001 127.0.0.1@60190 192.168.2.x:50104 JAVA V3_2_6_SNAPSHOT

002 127.0.0.1@7454 192.168.7.x:27692 JAVA V3_2_6_SNAPSHOT

003 127.0.0.1@31600 192.168.21.x:40243 JAVA V3_2_6_SNAPSHOT

004 127.0.0.1@21322 192.168.21.x:31416 JAVA V3_2_6_SNAPSHOT

005 127.0.0.1@39557 192.168.2.x:45959 JAVA V3_2_6_SNAPSHOT

006 127.0.0.1@24765 192.168.7.x:15166 JAVA V3_2_6_SNAPSHOT

007 127.0.0.1@26993 192.168.7.x:57864 JAVA V3_2_6_SNAPSHOT

008 127.0.0.1@652 192.168.21.x:59261 JAVA V3_2_6_SNAPSHOT

009 127.0.0.1@10388 192.168.21.x:1671 JAVA V3_2_6_SNAPSHOT

Below is subscription:001 Topic: %RETRY%T_SCANRECORD_NEW_GROUP SubExpression: *

002 Topic: T_SCANRECORD_NEW SubExpression: 1||2||3||4 || 5 || -5||7 || 45

ConsumeType: CONSUME_PASSIVELY

MessageModel: CLUSTERING

ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET
"""

# 4.9.7 client (5.1.2 broker), verbatim from a stored public troubleshooting note "RocketMQ相关问题排查"
# (section 查看消费者组当前有哪些客户端实例在线): its command block, then its output block.
REAL_4_9_7 = """\
sh mqadmin consumerConnection -n localhost:9876 -g topic-id-res
#ClientId                                           #ClientAddr           #Language  #Version
10.4.100.123@10.4.100.123:9876@20@1245146303493722 10.4.100.123:43588     JAVA       V4_9_7

Below is subscription:
#Topic                      #SubExpression
%RETRY%topic-id-res         *
topic-id-restopicExchange   *

ConsumeType: CONSUME_PASSIVELY
MessageModel: CLUSTERING
ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET
"""

# 5.3.2, verbatim from a stored public Go client test (TestParseConsumerConnectionReadsConnectionsAndSubscriptions):
# a 5.x client id (<ip>@<pid>#<nanotime>); no command echo, so the group comes from the file name.
REAL_5_3_2 = """\
#ClientId                            #ClientAddr            #Language  #Version
127.0.0.1@1#9790766882943522    127.0.0.1:44832     JAVA       V5_3_2

Below is subscription:
#Topic               #SubExpression
sample_order_events_topic order_created
%RETRY%sample-order-events-consumer *

ConsumeType: CONSUME_PASSIVELY
MessageModel: CLUSTERING
ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET"""

# The exception a 5.x mqadmin consumerConnection prints for a group without connections, verbatim
# from github.com/apache/rocketmq-dashboard issue #218 (the dashboard calls the same admin path).
REAL_NOT_ONLINE_5X = """\
Caused by: org.apache.rocketmq.client.exception.MQBrokerException: CODE: 206  DESC: the consumer group[TOPIC_NORMAL_CONSUMER_GROUP_01] not online BROKER: 10.26.22.29:10911
For more information, please visit the url, https://rocketmq.apache.org/docs/bestPractice/06FAQ
        at org.apache.rocketmq.client.impl.MQClientAPIImpl.getConsumerConnectionList(MQClientAPIImpl.java:1648)
        at org.apache.rocketmq.tools.admin.DefaultMQAdminExtImpl.examineConsumerConnectionInfo(DefaultMQAdminExtImpl.java:642)
        at org.apache.rocketmq.tools.admin.DefaultMQAdminExt.examineConsumerConnectionInfo(DefaultMQAdminExt.java:334)
"""

# The head of a 5.4.0 mqadmin consumerConnection failure, verbatim (trailing padding dropped) from
# github.com/apache/rocketmq issue #10282: the quoted part names no cause.
REAL_FAILURE_HEAD_5_4_0 = """\
ip:/home/rocketmq/rocketmq-5.4.0.0/bin# ./mqadmin consumerConnection -n ip:9876 -g GROUP-1
  org.apache.rocketmq.tools.command.SubCommandException: ConsumerConnectionSubCommand command failed
          at org.apache.rocketmq.tools.command.connection.ConsumerConnectionSubCommand.execute(ConsumerConnectionSubCommand.java:100)
          at org.apache.rocketmq.tools.command.MQAdminStartup.main0(MQAdminStartup.java:178)
"""

PUSH = ("CONSUME_PASSIVELY", "CLUSTERING")


def document(group, clients, topics, settings, *, rejected=()) -> ConnectionDocument:
    return ConnectionDocument(group, tuple(clients), tuple(topics), *settings, True, tuple(rejected))


def not_online(group: str | None, line: int | None = None) -> ConnectionDocument:
    return ConnectionDocument(group, (), (), None, None, None, False, (), not_online_line_no=line)


def test_real_3_2_6_numbered_rows_first_subscription_on_the_below_line():
    ids = ["60190", "7454", "31600", "21322", "39557", "24765", "26993", "652", "10388"]
    hosts = ["2.x:50104", "7.x:27692", "21.x:40243", "21.x:31416", "2.x:45959", "7.x:15166", "7.x:57864"]
    hosts += ["21.x:59261", "21.x:1671"]
    clients = [
        ConnectionClient(no, f"127.0.0.1@{pid}", f"192.168.{host}", "JAVA", "V3_2_6_SNAPSHOT")
        for no, pid, host in zip(range(9, 26, 2), ids, hosts)
    ]
    expected = document(
        "T_SCANRECORD_NEW_GROUP",
        clients,
        ["%RETRY%T_SCANRECORD_NEW_GROUP", "T_SCANRECORD_NEW"],
        (*PUSH, "CONSUME_FROM_FIRST_OFFSET"),
    )
    assert parse_consumer_connection(REAL_3_2_6, file_group="from-file") == expected


def test_real_4_9_7_group_from_the_echoed_command():
    client = ConnectionClient(
        3, "10.4.100.123@10.4.100.123:9876@20@1245146303493722", "10.4.100.123:43588", "JAVA", "V4_9_7"
    )
    expected = document(
        "topic-id-res",
        [client],
        ["%RETRY%topic-id-res", "topic-id-restopicExchange"],
        (*PUSH, "CONSUME_FROM_LAST_OFFSET"),
    )
    assert parse_consumer_connection(REAL_4_9_7, file_group="other") == expected


REAL_5_3_2_DOCUMENT = document(
    "sample-order-events-consumer",
    [ConnectionClient(2, "127.0.0.1@1#9790766882943522", "127.0.0.1:44832", "JAVA", "V5_3_2")],
    ["sample_order_events_topic", "%RETRY%sample-order-events-consumer"],
    (*PUSH, "CONSUME_FROM_LAST_OFFSET"),
)


def test_real_5_3_2_group_from_the_file_name():
    group = group_from_file_name("landing/c1/consumerConnection-sample-order-events-consumer.txt")
    assert parse_consumer_connection(REAL_5_3_2, group) == REAL_5_3_2_DOCUMENT


def test_crlf_banner_prompt_tabs_and_trailing_blanks_change_nothing():
    banner = [
        "RocketMQLog:WARN No appenders could be found for logger (io.netty.util.internal.PlatformDependent0).",
        "RocketMQLog:WARN Please initialize the logger system properly.",
    ]
    tabbed = REAL_5_3_2.replace("    127.0.0.1:44832     ", "\t127.0.0.1:44832\t")
    text = "\r\n".join(["$ date", *banner, *tabbed.split("\n"), "$ exit", "", "", ""])
    expected = replace(REAL_5_3_2_DOCUMENT, clients=(replace(REAL_5_3_2_DOCUMENT.clients[0], line_no=5),))
    assert parse_consumer_connection(text, "sample-order-events-consumer") == expected


def test_numbered_layout_of_4_0_to_4_9_2_from_its_printf_formats():
    rows = "%03d  %-32s %-22s %-8s %s\n" % (1, "10.0.0.5@DEFAULT", "10.0.0.5:53524", "JAVA", "V4_3_0")
    rows += "%03d  %-32s %-22s %-8s %s\n" % (2, "10.0.0.6@4712", "10.0.0.6:53530", "GO", "V4_3_0")
    text = "$ sh mqadmin consumerConnection --consumerGroup=billing\n" + rows + "\nBelow is subscription:"
    text += "%03d  Topic: %-40s SubExpression: %s\n" % (1, "%RETRY%billing", "*")
    text += "%03d  Topic: %-40s SubExpression: %s\n" % (2, "orders", "TagA || TagB")
    text += "ConsumeType: CONSUME_ACTIVELY\nMessageModel: BROADCASTING\nConsumeFromWhere: CONSUME_FROM_TIMESTAMP\n"
    clients = [
        ConnectionClient(2, "10.0.0.5@DEFAULT", "10.0.0.5:53524", "JAVA", "V4_3_0"),
        ConnectionClient(3, "10.0.0.6@4712", "10.0.0.6:53530", "GO", "V4_3_0"),
    ]
    expected = document(
        "billing",
        clients,
        ["%RETRY%billing", "orders"],
        ("CONSUME_ACTIVELY", "BROADCASTING", "CONSUME_FROM_TIMESTAMP"),
    )
    assert parse_consumer_connection(text) == expected


def test_truncated_and_garbled_rows_are_rejected_with_their_line_numbers():
    lines = REAL_5_3_2.split("\n")
    lines[1] = "127.0.0.1@1#9790766882943522    127.0.0.1:44832"  # cut mid-row
    lines.insert(2, "10.0.0.9@77 10.0.0.9 JAVA V5_3_2")  # address without its port
    lines.insert(7, "orders-only")  # a subscription row cut after its topic
    lines[-3] = "ConsumeType: CONSUME_SOMEHOW"
    expected = replace(
        REAL_5_3_2_DOCUMENT,
        clients=(),
        consume_type=None,
        rejected=(
            (2, CLIENT_CELLS_REASON, lines[1]),
            (3, "#ClientAddr '10.0.0.9' is not <host>:<port>", lines[2]),
            (8, NO_EXPRESSION_REASON, "orders-only"),
            (
                11,
                "ConsumeType 'CONSUME_SOMEHOW' is not one of CONSUME_ACTIVELY, CONSUME_PASSIVELY, CONSUME_POP",
                "ConsumeType: CONSUME_SOMEHOW",
            ),
        ),
    )
    assert parse_consumer_connection("\n".join(lines), "sample-order-events-consumer") == expected


def test_real_not_online_error_names_the_group():
    assert parse_consumer_connection(REAL_NOT_ONLINE_5X, "from-file") == not_online(
        "TOPIC_NORMAL_CONSUMER_GROUP_01", line=1
    )


@pytest.mark.parametrize(
    ("text", "group", "line"),
    [
        (
            "com.alibaba.rocketmq.client.exception.MQBrokerException: CODE: 206  DESC: the consumer "
            "group[cg_3x] not online\nFor more information, please visit the url, "
            "https://github.com/alibaba/RocketMQ/issues/64\n",
            "cg_3x",
            1,
        ),
        (
            "Caused by: org.apache.rocketmq.client.exception.MQClientException: CODE: 206  DESC: Not found "
            "the consumer group connection\n",
            "from-file",
            1,
        ),
        (
            "$ mqadmin consumerConnection -g echoed\nCaused by: org.apache.rocketmq.client.exception."
            "MQClientException: CODE: 17  DESC: No topic route info in name server for the topic: %RETRY%echoed\n",
            "echoed",
            2,
        ),
    ],
)
def test_other_not_online_forms(text, group, line):
    assert parse_consumer_connection(text, "from-file") == not_online(group, line)


def test_a_failure_that_does_not_say_not_online_raises():
    with pytest.raises(ConsumerConnectionFormatError, match=r"failed without saying .* \(line 2: "):
        parse_consumer_connection(REAL_FAILURE_HEAD_5_4_0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", NO_OUTPUT_MESSAGE),
        (
            "#Topic  #Broker Name  #QID  #Broker Offset  #Consumer Offset  #Diff  #Inflight  #LastTime\n"
            "topic-id-res  broker-a     0     8               8                 0      0          2026-08-18 14:52:30\n"
            "\nConsume TPS: 0.00\nConsume Diff Total: 0\n",
            NO_OUTPUT_MESSAGE,
        ),
        # producerConnection prints numbered rows too, and nothing else
        (
            "0001  10.0.0.5@4711                    10.0.0.5:53524         JAVA     V4_9_7\n",
            NO_OUTPUT_MESSAGE,
        ),
        (
            "org.apache.rocketmq.tools.command.SubCommandException: ConsumerStatusSubCommand command failed\n"
            "Caused by: org.apache.rocketmq.client.exception.MQClientException: CODE: 17  DESC: No topic "
            "route info in name server for the topic: %RETRY%g\n",
            "line 1 is the failure of mqadmin's ConsumerStatusSubCommand, not consumerConnection output",
        ),
    ],
)
def test_text_that_is_not_consumer_connection_output_raises(text, message):
    with pytest.raises(ConsumerConnectionFormatError) as raised:
        parse_consumer_connection(text, "g")
    assert str(raised.value) == message


def test_render_4_online_is_the_printf_layout():
    doc = document(
        "billing",
        [ConnectionClient(0, "10.0.0.5@4711", "10.0.0.5:53524", "JAVA", "V4_9_7")],
        ["%RETRY%billing", "orders"],
        (*PUSH, "CONSUME_FROM_LAST_OFFSET"),
    )
    assert render_consumer_connection(doc) == (
        "#ClientId                            #ClientAddr            #Language  #Version\n"
        "10.0.0.5@4711                        10.0.0.5:53524         JAVA       V4_9_7\n"
        "\n"
        "Below is subscription:\n"
        "#Topic               #SubExpression\n"
        "%RETRY%billing       *\n"
        "orders               *\n"
        "\n"
        "ConsumeType: CONSUME_PASSIVELY\n"
        "MessageModel: CLUSTERING\n"
        "ConsumeFromWhere: CONSUME_FROM_LAST_OFFSET\n"
    )


def test_render_5_not_online_is_the_stack_trace_of_5_3_2():
    text = render_consumer_connection(not_online("billing"), "5", broker_addr="10.0.0.1:10911")
    assert text.split("\n")[:6] == [
        "org.apache.rocketmq.tools.command.SubCommandException: ConsumerConnectionSubCommand command failed",
        "\tat org.apache.rocketmq.tools.command.connection.ConsumerConnectionSubCommand.execute("
        "ConsumerConnectionSubCommand.java:100)",
        "\tat org.apache.rocketmq.tools.command.MQAdminStartup.main0(MQAdminStartup.java:181)",
        "\tat org.apache.rocketmq.tools.command.MQAdminStartup.main(MQAdminStartup.java:131)",
        "Caused by: org.apache.rocketmq.client.exception.MQBrokerException: CODE: 206  DESC: the consumer "
        "group[billing] not online BROKER: 10.0.0.1:10911",
        "For more information, please visit the url, https://rocketmq.apache.org/docs/bestPractice/06FAQ",
    ]
    assert text.endswith("(ConsumerConnectionSubCommand.java:71)\n\t... 2 more\n")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (not_online(None), "a not-online document needs its consumer_group"),
        (document("g", [], [], (None, None, None)), "an online document needs a client"),
        (document("g", [ConnectionClient(0, "a b", None, None, None)], [], (None,) * 3), "cell 'a b'"),
    ],
)
def test_render_refuses_documents_mqadmin_cannot_print(doc, message):
    with pytest.raises(ValueError, match=message):
        render_consumer_connection(doc)


IP = st.ip_addresses(v=4).map(str)
CLIENT_IDS = st.builds(
    lambda ip, instance: f"{ip}@{instance}",
    IP,
    st.one_of(
        st.just("DEFAULT"),
        st.integers(1, 99999).map(str),
        st.tuples(st.integers(1, 99999), st.integers(0, 10**16)).map(lambda t: f"{t[0]}#{t[1]}"),
    ),
)
NAMES = st.text(alphabet="%|abcXYZ019_-", min_size=1, max_size=40)
CLIENT_ROWS = st.tuples(
    CLIENT_IDS,
    st.none() | st.builds(lambda ip, port: f"{ip}:{port}", IP, st.integers(1, 65535)),
    st.none() | st.sampled_from(["JAVA", "CPP", "GO", "NODE_JS"]),
    st.none() | st.sampled_from(["V4_9_7", "V5_3_2", "V3_2_6_SNAPSHOT", "HIGHER_VERSION"]),
)
ONLINE_DOCUMENTS = st.builds(
    lambda group, cells, topics, settings: document(
        group, [ConnectionClient(no, *c) for no, c in enumerate(cells, start=2)], topics, settings
    ),
    st.none() | NAMES,
    st.lists(CLIENT_ROWS, min_size=1, max_size=5),
    st.lists(NAMES, max_size=5, unique=True),
    st.tuples(
        st.none() | st.sampled_from(CONSUME_TYPES),
        st.none() | st.sampled_from(MESSAGE_MODELS),
        st.none() | st.sampled_from(CONSUME_FROM_WHERE),
    ),
)


@given(doc=ONLINE_DOCUMENTS | NAMES.map(not_online), layout=st.sampled_from(["4", "5"]))
def test_render_then_parse_gives_the_document_back(doc, layout):
    file_group = doc.consumer_group if doc.is_online else None
    parsed = parse_consumer_connection(render_consumer_connection(doc, layout), file_group)
    assert replace(parsed, not_online_line_no=None) == doc
    assert (parsed.not_online_line_no is None) == doc.is_online


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("consumerConnection-billing.txt", "billing"),
        ("landing/c1/2026-06-07/consumerConnection-%RETRY%|x_1-y.txt.gz", "%RETRY%|x_1-y"),
        ("C:\\saved\\consumerConnection-billing", "billing"),
        ("consumerProgress-billing.txt", None),
        ("consumerConnection-.txt", None),
        ("consumerConnection-bad name.txt", None),
    ],
)
def test_group_from_file_name(name, group):
    assert group_from_file_name(name) == group


def test_echo_nearest_above_the_output_wins_over_the_file_group():
    text = "$ mqadmin consumerConnection -g first\n$ mqadmin consumerConnection -n ns:9876 -g 'second'\n"
    assert parse_consumer_connection(text + REAL_5_3_2, "from-file") == replace(
        REAL_5_3_2_DOCUMENT,
        consumer_group="second",
        clients=(replace(REAL_5_3_2_DOCUMENT.clients[0], line_no=4),),
    )
