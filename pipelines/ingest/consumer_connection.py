"""Read saved ``mqadmin consumerConnection -g <group>`` outputs; render them as mqadmin prints them.

Layouts (printf formats in github.com/apache/rocketmq ``tools/src/main/java/org/apache/
rocketmq/tools/command/connection/ConsumerConnectionSubCommand.java``, 3.x under
``rocketmq-tools/src/main/java/com/alibaba/rocketmq/...``):
- 3.x-4.9.2: numbered client rows without a header, ``%03d  %-32s %-22s %-8s %s`` (id, address,
  language, version); ``Below is subscription:`` then ``%03d  Topic: %-40s SubExpression: %s``
  rows; then ``ConsumeType: %s``, ``MessageModel: %s``, ``ConsumeFromWhere: %s``. 4.0-4.9.2
  (and published 3.2.6 outputs) print ``Below is subscription:`` without a line break, so the
  first subscription row follows on that line; the 3.1.9 source prints it on its own line and
  a blank line before ``ConsumeType:``.
- 4.9.3 on, unchanged through 5.3.x: the header ``#ClientId #ClientAddr #Language #Version``
  and the client rows, printed ``%-36s %-22s %-10s %s``; a blank line; ``Below is subscription:``;
  the header ``#Topic #SubExpression`` and the subscription rows,
  printed ``%-20s %s``; a blank line; the three setting lines.
Client ids are ``<ip>@<instance>`` (``10.0.0.5@12345``, ``10.0.0.5@DEFAULT``; clients from 4.9.3
on ``10.0.0.5@12345#1234567890``), addresses ``<host>:<port>``, versions ``V4_9_7`` or
``HIGHER_VERSION``, a null cell ``null``. No cell holds a space (a SubExpression may), so rows are
split on whitespace; the connection set and subscription table are hash-ordered.

For a group without connections the tool prints a stack trace (``SubCommandException:
ConsumerConnectionSubCommand command failed`` ... ``Caused by: ...MQBrokerException: CODE: 206
DESC: the consumer group[<group>] not online BROKER: <addr>``; 3.x the ``MQBrokerException``
alone). ``CODE: 206  DESC: Not found the consumer group connection`` (the broker knows the group,
with no client) and ``CODE: 17 ... No topic route info in name server for the topic:
%RETRY%<group>`` (no client ever connected) read as not online too; other failures raise.

The group is not in the output: it comes from a line echoing the command (``mqadmin
consumerConnection -g <group>`` or ``--consumerGroup``, nearest above the output), else from the
not-online error, else from the caller (``group_from_file_name``: ``consumerConnection-<group>.txt``).
Banners (``RocketMQLog:WARN ...``, JVM warnings), shell prompts, blank lines and CRLF are skipped.
A line inside the client table or the subscription section that cannot be read, or a setting
with an unknown value, lands in ``rejected`` with its 1-based line number. Pure Python, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from schemas.records import CONSUME_TYPES, MESSAGE_MODELS

CONSUME_FROM_WHERE = (
    "CONSUME_FROM_LAST_OFFSET",
    "CONSUME_FROM_FIRST_OFFSET",
    "CONSUME_FROM_TIMESTAMP",
    "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",
    "CONSUME_FROM_MAX_OFFSET",
)
SETTINGS = {
    "ConsumeType": ("consume_type", CONSUME_TYPES),
    "MessageModel": ("message_model", MESSAGE_MODELS),
    "ConsumeFromWhere": ("consume_from_where", CONSUME_FROM_WHERE),
}
# (header name, pattern, what it should be): the four cells of a client row, in order.
CLIENT_CELLS = (
    ("#ClientId", re.compile(r"[^\s@]+@\S+"), "<ip>@<instance>"),
    ("#ClientAddr", re.compile(r"\S+:\d{1,5}"), "<host>:<port>"),
    ("#Language", re.compile(r"[A-Z][A-Z_]*"), "a language code such as JAVA"),
    ("#Version", re.compile(r"V\d+_\d+_\d+\w*|HIGHER_VERSION"), "a version such as V4_9_7"),
)
CLIENT_CELLS_REASON = "client row does not have the 4 cells #ClientId #ClientAddr #Language #Version"
NO_EXPRESSION_REASON = "subscription row has a #Topic but no #SubExpression"
NUMBERED_TOPIC_REASON = "subscription row is not 'NNN  Topic: <topic> SubExpression: <expression>'"
NO_OUTPUT_MESSAGE = (
    "no mqadmin consumerConnection output found: expected a '#ClientId #ClientAddr #Language #Version' "
    "table (or numbered client rows), 'Below is subscription:', 'ConsumeType:'/'MessageModel:'/"
    "'ConsumeFromWhere:' lines, or a 'CODE: 206 ... not online' error"
)
CLIENT_HEADER = re.compile(r"^#ClientId\s+#ClientAddr\b")
TOPIC_HEADER = re.compile(r"^#Topic\s+#SubExpression\b")
BELOW = re.compile(r"^Below is subscription:(.*)$")
SETTING = re.compile(r"^(ConsumeType|MessageModel|ConsumeFromWhere):(.*)$")
NUMBERED_ROW = re.compile(r"^\d{3,}\s+")
NUMBERED_TOPIC = re.compile(r"^\d{3,}\s+Topic:\s*(\S+)\s+SubExpression:(.*)$")
TOPIC_NAME = re.compile(r"[%|a-zA-Z0-9_-]{1,255}")  # RocketMQ's TopicValidator character set
NOT_ONLINE = re.compile(
    r"CODE:\s*206\s+DESC:\s*(?:the consumer group\[(?P<group>[^\]\s]*)\] not online"
    r"|Not found the consumer group connection)"
    r"|CODE:\s*17\s+DESC:\s*No topic route info in name server for the topic:\s*%RETRY%(?P<retry>\S+)"
)
SUBCOMMAND_FAILED = re.compile(r"\b(\w+)SubCommand command failed")
EXCEPTION_LINE = re.compile(r"^(?:Caused by: )?(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b")
COMMAND = re.compile(r"\bmqadmin(?:\.cmd)?\s+consumerConnection\b")
GROUP_OPTION = re.compile(
    r"\bmqadmin(?:\.cmd)?\s+consumerConnection\b.*?\s(?:-g|--consumerGroup)(?:\s+|=)['\"]?([^\s'\"]+)"
)
# Output of the launcher or JVM, never of the command: "RocketMQLog:WARN ...", "OpenJDK 64-Bit
# Server VM warning: ...", "Picked up JAVA_TOOL_OPTIONS: ...".
BANNER = re.compile(
    r"^(RocketMQLog:|SLF4J:|log4j:|WARNING:|Picked up \S+:|(OpenJDK|Java HotSpot\(TM\)) .*warning:)"
)
# A shell prompt ("$ ls", "user@host:~/bin$ ls", "[root@host bin]# ls").
PROMPT = re.compile(r"^(\S*[$#>]|\[[^\]]+\][$#])(\s|$)")
GROUP_FILE = re.compile(r"^consumerConnection-([%|a-zA-Z0-9_-]+)(?:\.[A-Za-z0-9]+)*$")
Section = Literal["start", "clients", "subscriptions", "settings"]


class ConsumerConnectionFormatError(ValueError):
    """The text holds no consumerConnection output that says who is in the group."""


@dataclass(frozen=True)
class ConnectionClient:
    """One client row (``line_no`` 1-based); a cell printed as ``null`` is None."""

    line_no: int
    client_id: str
    client_addr: str | None
    language: str | None
    version: str | None


@dataclass(frozen=True)
class ConnectionDocument:
    """One saved output: the group's clients, subscribed topics (file order) and settings."""

    consumer_group: str | None
    clients: tuple[ConnectionClient, ...]
    topics: tuple[str, ...]
    consume_type: str | None
    message_model: str | None
    consume_from_where: str | None
    is_online: bool
    rejected: tuple[tuple[int, str, str], ...]
    # the line saying the group is not online (None when it is online)
    not_online_line_no: int | None = None


class _Unreadable(ValueError):
    """A line that looks like a record but cannot be read; the message is the reason."""


@dataclass
class _Reading:
    section: Section = "start"
    first_no: int | None = None
    has_marker: bool = False  # numbered rows alone could be producerConnection output
    clients: list[ConnectionClient] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    settings: dict[str, str | None] = field(default_factory=dict)
    rejected: list[tuple[int, str, str]] = field(default_factory=list)

    def enter(self, section: Section, no: int, *, marker: bool) -> None:
        self.section = section
        self.first_no = self.first_no or no
        self.has_marker = self.has_marker or marker


def group_from_file_name(name: str) -> str | None:
    """The group named by ``consumerConnection-<group>.txt`` (any extensions, any folder), else None."""
    match = GROUP_FILE.match(re.split(r"[/\\]", name)[-1])
    return match.group(1) if match else None


def _numbered_lines(text: str) -> list[tuple[int, str]]:
    """``(line_no, line)`` split on ``\\n`` with one trailing ``\\r`` removed, as the file reader does."""
    lines = text.removeprefix("\ufeff").split("\n")
    return [(no, line.removesuffix("\r")) for no, line in enumerate(lines, start=1)]


def _client(no: int, text: str) -> ConnectionClient:
    cells = NUMBERED_ROW.sub("", text, count=1).split()
    if len(cells) != len(CLIENT_CELLS):
        raise _Unreadable(CLIENT_CELLS_REASON)
    for cell, (name, pattern, expected) in zip(cells, CLIENT_CELLS):
        if not pattern.fullmatch(cell) and (cell != "null" or name == "#ClientId"):
            raise _Unreadable(f"{name} {cell!r} is not {expected}")
    client_id, *rest = cells
    addr, language, version = (None if cell == "null" else cell for cell in rest)
    return ConnectionClient(no, client_id, addr, language, version)


def _subscription(text: str) -> str:
    numbered = NUMBERED_TOPIC.match(text)
    if numbered:
        topic = numbered.group(1)
    elif "Topic:" in text:
        raise _Unreadable(NUMBERED_TOPIC_REASON)
    else:
        cells = text.split(maxsplit=1)
        if len(cells) < 2:
            raise _Unreadable(NO_EXPRESSION_REASON)
        topic = cells[0]
    if not TOPIC_NAME.fullmatch(topic):
        raise _Unreadable(f"#Topic {topic!r} is not a topic name (characters %|a-zA-Z0-9_-)")
    return topic


def _setting(reading: _Reading, key: str, value: str) -> None:
    name, allowed = SETTINGS[key]
    if name in reading.settings:
        raise _Unreadable(f"{key} repeated: the first value stands")
    if value not in (*allowed, "null"):
        raise _Unreadable(f"{key} {value!r} is not one of {', '.join(allowed)}")
    reading.settings[name] = None if value == "null" else value


def _read_line(reading: _Reading, no: int, text: str) -> None:
    """Advance the section on a marker line, or read a row of the current section."""
    if CLIENT_HEADER.match(text):
        reading.enter("clients", no, marker=True)
    elif below := BELOW.match(text):
        reading.enter("subscriptions", no, marker=True)
        if below.group(1).strip():  # 3.x-4.9.2: the first row shares the line
            reading.topics.append(_subscription(below.group(1).strip()))
    elif setting := SETTING.match(text):
        reading.enter("settings", no, marker=True)
        _setting(reading, setting.group(1), setting.group(2).strip())
    elif reading.section == "subscriptions":
        if not TOPIC_HEADER.match(text):
            reading.topics.append(_subscription(text))
    elif reading.section == "clients" or (reading.section == "start" and NUMBERED_ROW.match(text)):
        reading.enter("clients", no, marker=False)
        reading.clients.append(_client(no, text))


def _read(lines: list[tuple[int, str]]) -> _Reading:
    reading = _Reading()
    for no, line in lines:
        text = line.strip()
        if not text or BANNER.match(text) or PROMPT.match(text) or COMMAND.search(text):
            continue
        try:
            _read_line(reading, no, text)
        except _Unreadable as error:
            reading.rejected.append((no, str(error), line))
    return reading


def _command_group(lines: list[tuple[int, str]], before_no: int) -> str | None:
    """The ``-g``/``--consumerGroup`` of the last command echo above line ``before_no``."""
    groups = [m.group(1) for no, line in lines if no < before_no and (m := GROUP_OPTION.search(line))]
    return groups[-1] if groups else None


def _other_command(lines: list[tuple[int, str]]) -> ConsumerConnectionFormatError | None:
    """The error for another mqadmin command's failure (it may say "not online" too)."""
    for no, line in lines:
        failed = SUBCOMMAND_FAILED.search(line)
        if failed and failed.group(1) != "ConsumerConnection":
            return ConsumerConnectionFormatError(
                f"line {no} is the failure of mqadmin's {failed.group(1)}SubCommand, not consumerConnection output"
            )
    return None


def _not_online(lines: list[tuple[int, str]], file_group: str | None) -> ConnectionDocument | None:
    for no, line in lines:
        if match := NOT_ONLINE.search(line):
            group = _command_group(lines, no) or match.group("group") or match.group("retry") or file_group
            return ConnectionDocument(group, (), (), None, None, None, False, (), not_online_line_no=no)
    return None


def _failure(lines: list[tuple[int, str]]) -> ConsumerConnectionFormatError:
    """The error for a text without output: a failed run, or no consumerConnection output at all."""
    echoed = any(COMMAND.search(line) for _, line in lines)
    for no, line in lines:
        text = line.strip()
        if SUBCOMMAND_FAILED.search(text) or (echoed and EXCEPTION_LINE.match(text)):
            return ConsumerConnectionFormatError(
                f"mqadmin consumerConnection failed without saying the group is not online (line {no}: "
                f"{text[:200]}): fix the cause and save the output again"
            )
    return ConsumerConnectionFormatError(NO_OUTPUT_MESSAGE)


def parse_consumer_connection(text: str, file_group: str | None = None) -> ConnectionDocument:
    """Read one saved ``mqadmin consumerConnection`` output (any layout in the module docstring).

    ``file_group`` is the group when neither a command echo above the output nor a not-online
    error names one. Raises ``ConsumerConnectionFormatError`` when the text holds no such output,
    or a failure other than "not online".
    """
    lines = _numbered_lines(text)
    reading = _read(lines)
    if not reading.has_marker:
        error = _other_command(lines)
        not_online = None if error else _not_online(lines, file_group)
        if not_online is None:
            raise error or _failure(lines)
        return not_online
    return ConnectionDocument(
        consumer_group=_command_group(lines, reading.first_no or 0) or file_group,
        clients=tuple(reading.clients),
        topics=tuple(reading.topics),
        consume_type=reading.settings.get("consume_type"),
        message_model=reading.settings.get("message_model"),
        consume_from_where=reading.settings.get("consume_from_where"),
        is_online=True,
        rejected=tuple(reading.rejected),
    )


# Where the trace's frames point in the rocketmq-all-4.9.7 ("4") and 5.3.2 ("5") sources.
TRACE_FRAMES = ("throw", "main0", "main", "api", "impl", "ext", "call")
TRACES = {"4": (100, 149, 100, 1300, 366, 277, 71), "5": (100, 181, 131, 1875, 641, 353, 71)}
FAQ_URLS = {
    "4": "http://rocketmq.apache.org/docs/faq/",
    "5": "https://rocketmq.apache.org/docs/bestPractice/06FAQ",
}
NOT_ONLINE_TRACE = """\
org.apache.rocketmq.tools.command.SubCommandException: ConsumerConnectionSubCommand command failed
\tat org.apache.rocketmq.tools.command.connection.ConsumerConnectionSubCommand.execute(ConsumerConnectionSubCommand.java:{throw})
\tat org.apache.rocketmq.tools.command.MQAdminStartup.main0(MQAdminStartup.java:{main0})
\tat org.apache.rocketmq.tools.command.MQAdminStartup.main(MQAdminStartup.java:{main})
Caused by: org.apache.rocketmq.client.exception.MQBrokerException: CODE: 206  DESC: the consumer group[{group}] not online BROKER: {broker}
For more information, please visit the url, {faq}
\tat org.apache.rocketmq.client.impl.MQClientAPIImpl.getConsumerConnectionList(MQClientAPIImpl.java:{api})
\tat org.apache.rocketmq.tools.admin.DefaultMQAdminExtImpl.examineConsumerConnectionInfo(DefaultMQAdminExtImpl.java:{impl})
\tat org.apache.rocketmq.tools.admin.DefaultMQAdminExt.examineConsumerConnectionInfo(DefaultMQAdminExt.java:{ext})
\tat org.apache.rocketmq.tools.command.connection.ConsumerConnectionSubCommand.execute(ConsumerConnectionSubCommand.java:{call})
\t... 2 more
"""
CLIENT_ROW = "%-36s %-22s %-10s %s\n"
TOPIC_ROW = "%-20s %s\n"


def _cell(value: str | None) -> str:
    if value is None:
        return "null"  # Java's %s of null
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"cell {value!r} must be non-empty without whitespace, or it cannot be read back")
    return value


def render_consumer_connection(
    document: ConnectionDocument, layout: Literal["4", "5"] = "4", *, broker_addr: str = "127.0.0.1:10911"
) -> str:
    """The text mqadmin 4.9.3+ (``"4"``) or 5.x (``"5"``) prints for ``document``.

    Both print the same table; they differ in the not-online stack trace, rendered for
    ``is_online=False`` (which needs ``consumer_group``; ``broker_addr`` is the broker it names).
    Subscriptions print ``*`` as their SubExpression; client ``line_no`` is ignored.
    """
    if layout not in TRACES:
        raise ValueError(f"layout must be '4' or '5', not {layout!r}")
    if not document.is_online:
        if document.consumer_group is None:
            raise ValueError("a not-online document needs its consumer_group: the error names the group")
        frames = dict(zip(TRACE_FRAMES, TRACES[layout]))
        group, broker = _cell(document.consumer_group), _cell(broker_addr)
        return NOT_ONLINE_TRACE.format(**frames, faq=FAQ_URLS[layout], group=group, broker=broker)
    if not document.clients:
        raise ValueError("an online document needs a client: for none, mqadmin prints the not-online error")
    out = [CLIENT_ROW % ("#ClientId", "#ClientAddr", "#Language", "#Version")]
    out += [
        CLIENT_ROW % tuple(map(_cell, (c.client_id, c.client_addr, c.language, c.version)))
        for c in document.clients
    ]
    out += ["\nBelow is subscription:\n", TOPIC_ROW % ("#Topic", "#SubExpression")]
    out += [TOPIC_ROW % (_cell(topic), "*") for topic in document.topics]
    settings = (document.consume_type, document.message_model, document.consume_from_where)
    out += ["\n", *(f"{key}: {_cell(value)}\n" for key, value in zip(SETTINGS, settings))]
    return "".join(out)
