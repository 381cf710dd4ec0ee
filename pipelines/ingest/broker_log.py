"""Parse a broker's ``broker.log`` into offset commits (NOTIFYME) and resets.

Layout (the shipped logback pattern ``%d{yyy-MM-dd HH:mm:ss,GMT+8} %p %t - %m%n``):
``yyyy-MM-dd HH:mm:ss LEVEL thread - message``, no milliseconds (a ``,SSS``/``.SSS``
suffix is accepted), local time read in the line's ``source_timezone`` (GMT+8 when
the reader gives none).

What a record is: a line that is offset evidence, recognised by one of the markers in
``MARKERS`` anywhere in the line, plus every line the reader could not decode. All
other lines (configuration dumps, stack traces, registrations...) are not records:
neither landed nor rejected. A line carrying a marker that does not parse in full is
rejected with the reason. Read errors are rejected once, in ``commits.rejected``.

Message formats, as logged by Apache RocketMQ (source: github.com/apache/rocketmq, module
``broker``, package ``org.apache.rocketmq.broker``; the same text in 4.9.x and 5.3.x unless noted):
- ``offset/ConsumerOffsetManager.java`` ``commitOffset``: ``[NOTIFYME]update consumer offset
  less than store. clientHost={}, key={}, queueId={}, requestOffset={}, storeOffset={}``
- ``client/net/Broker2Client.java`` ``resetOffset``: ``[reset-offset] reset offset success.
  topic={}, group={}, clientId={}``
- ``processor/AdminBrokerProcessor.java`` ``resetOffset``: ``[reset-offset] reset offset started
  by {}. topic={}, group={}, timestamp={}, isForce={}`` (timestamp -1 means "to the max offset")
- ``processor/PullMessageProcessor.java`` (5.x: ``DefaultPullMessageResultHandler.java``):
  ``PULL_OFFSET_MOVED:correction offset. topic={}, groupId={}, requestOffset={}, newOffset={},
  suggestBrokerId={}``; ``the request offset too small. group={}, topic={}, requestOffset={},
  brokerMinOffset={}, clientIp={}``; ``the request offset: {} over flow badly, broker max
  offset: {}, consumer: {}`` (4.x) and ``the request offset: {} over flow badly, fix to {},
  broker max offset: {}, consumer: {}`` (5.x). ``clientIp``/``consumer`` print the channel's
  remote address with a leading ``/``, which is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.ingest.commit_events import COMMIT_COLUMNS, integer_in_range
from pipelines.ingest.local_times import REPEATED_HOUR, SKIPPED_HOUR, with_utc_times
from pipelines.ingest.quarantine import Parsed, first_failure, in_calendar, split_valid
from pipelines.keys import group_of_key, key_kind, topic_of_key
from schemas.records import MAX_QUEUE_ID, OFFSET_LIMIT
from schemas.tables import OFFSET_RESETS

RESET_COLUMNS = [c for c in OFFSET_RESETS.columns if c not in ("_ingest_run_id", "reset_date")]
DEFAULT_LOG_TIMEZONE = "Asia/Shanghai"
LOG_LAYOUT = r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:[,.](\d{3}))? +([A-Z]+) +(.+?) - (.*)$"
LAYOUT_REASON = "log line layout is not 'yyyy-MM-dd HH:mm:ss[,SSS] LEVEL thread - message'"

MARKERS = {
    "notifyme": "[NOTIFYME]update consumer offset less than store.",
    "reset_success": "[reset-offset] reset offset success.",
    "reset_started": "[reset-offset] reset offset started by ",
    "pull_offset_moved": "PULL_OFFSET_MOVED:correction offset.",
    "offset_too_small": "the request offset too small.",
    "offset_overflow": " over flow badly, ",
}
NUMBER = r"(-?\d+)"
NOTIFYME = (
    r"^\[NOTIFYME\]update consumer offset less than store\. clientHost=(\S*), key=(\S+), "
    rf"queueId={NUMBER}, requestOffset={NUMBER}, storeOffset={NUMBER}$"
)
# reset kind -> (message pattern, {column: group})
RESET_FORMATS: dict[str, tuple[str, dict[str, int]]] = {
    "reset_success": (
        r"^\[reset-offset\] reset offset success\. topic=(\S+), group=(\S+), clientId=(\S+)$",
        {"topic": 1, "consumer_group": 2, "client_id": 3},
    ),
    "reset_started": (
        r"^\[reset-offset\] reset offset started by (\S*)\. topic=(\S+), group=(\S+), "
        rf"timestamp={NUMBER}, isForce=(true|false)$",
        {"topic": 2, "consumer_group": 3, "reset_to_timestamp": 4, "is_force": 5},
    ),
    "pull_offset_moved": (
        r"^PULL_OFFSET_MOVED:correction offset\. topic=(\S+), groupId=(\S+), "
        rf"requestOffset={NUMBER}, newOffset={NUMBER}(?:, suggestBrokerId={NUMBER})?$",
        {"topic": 1, "consumer_group": 2, "requested_offset": 3, "new_offset": 4},
    ),
    "offset_too_small": (
        r"^the request offset too small\. group=(\S+), topic=(\S+), "
        rf"requestOffset={NUMBER}, brokerMinOffset={NUMBER}, clientIp=/?(\S*)$",
        {"consumer_group": 1, "topic": 2, "requested_offset": 3, "client_id": 5},
    ),
    "offset_overflow": (
        rf"^the request offset: {NUMBER} over flow badly, (?:fix to {NUMBER}, )?"
        rf"broker max offset: {NUMBER}, consumer: /?(\S*)$",
        {"requested_offset": 1, "new_offset": 2, "client_id": 4},
    ),
}


@dataclass(frozen=True)
class BrokerLogParsed:
    """NOTIFYME commits (``offset_commits``) and resets/corrections (``offset_resets``)."""

    commits: Parsed
    resets: Parsed


def with_log_layout(lines: DataFrame, clocks_change: bool = False) -> DataFrame:
    """Split each line into ``_logged_at`` (UTC), ``_thread`` and ``_message`` (null when the layout does not match).

    ``_logged_at`` is the local time read in ``source_timezone``; null when the date is impossible.
    ``clocks_change``: some line's zone has daylight saving, so the hour it repeats is told by the
    lines' order, and a time it skips or a repeated one its file cannot place is null, flagged
    in ``_in_skipped_hour`` / ``_in_repeated_hour_unresolved`` (pipelines.ingest.local_times).
    Lines carrying ``_first_line`` (a grown file read whole to place the repeated hour) are
    dropped once their times are placed where the copy it continues landed them.
    """
    line = F.col("line")
    matches = line.rlike(LOG_LAYOUT)
    millis = F.coalesce(F.nullif(F.regexp_extract(line, LOG_LAYOUT, 2), F.lit("")), F.lit("000"))
    local = F.try_to_timestamp(
        F.concat(F.regexp_extract(line, LOG_LAYOUT, 1), F.lit("."), millis), F.lit("yyyy-MM-dd HH:mm:ss.SSS")
    )
    zone = F.coalesce(F.col("source_timezone"), F.lit(DEFAULT_LOG_TIMEZONE))
    if clocks_change:
        timed = with_utc_times(lines, local, zone, ["source_file", "_file_hash"], "line_no")
    else:
        no = F.lit(False)
        timed = lines.withColumns(
            {
                "_utc": F.to_utc_timestamp(local, zone),
                "_in_skipped_hour": no,
                "_in_repeated_hour_unresolved": no,
            }
        )
    if "_landed_before" in timed.columns:
        timed = timed.where(~F.col("_landed_before")).drop("_landed_before")
    return timed.withColumns(
        {
            "_logged_at": F.when(matches, in_calendar(F.col("_utc"))),
            "_thread": F.when(matches, F.regexp_extract(line, LOG_LAYOUT, 4)),
            "_message": F.when(matches, F.regexp_extract(line, LOG_LAYOUT, 5)),
        }
    ).drop("_utc")


def layout_checks() -> list[tuple[Column, str]]:
    """Checks every log record passes first: layout, then a time its zone can hold, then a real date."""
    return [
        (F.col("_message").isNotNull(), LAYOUT_REASON),
        (~F.col("_in_skipped_hour"), SKIPPED_HOUR),
        (~F.col("_in_repeated_hour_unresolved"), REPEATED_HOUR),
        (F.col("_logged_at").isNotNull(), "invalid log timestamp"),
    ]


def _evidence_kind(line: Column) -> Column:
    kind = F.lit(None).cast("string")
    for name, marker in reversed(MARKERS.items()):
        kind = F.when(line.contains(marker), F.lit(name)).otherwise(kind)
    return kind


def _extract(kind: Column, column: str) -> Column:
    """Text of ``column`` from whichever reset format the line's kind selects (null when absent)."""
    value: Column | None = None
    for name, (pattern, groups) in RESET_FORMATS.items():
        if column in groups:
            extracted = F.regexp_extract(F.col("_message"), pattern, groups[column])
            value = F.when(kind == name, extracted) if value is None else value.when(kind == name, extracted)
    return F.nullif(value, F.lit("")) if value is not None else F.lit(None).cast("string")


def _commit_path(thread: Column) -> Column:
    return F.when(thread.startswith("PullMessageThread_"), F.lit("pull_piggyback")).when(
        thread.startswith("ConsumerManageThread_"), F.lit("update_offset")
    )


def _parse_commits(records: DataFrame) -> Parsed:
    message = F.col("_message")
    key = F.regexp_extract(message, NOTIFYME, 2)

    def number(group: int) -> Column:
        return F.regexp_extract(message, NOTIFYME, group).try_cast("decimal(38,0)")

    typed = records.withColumns(
        {
            "committed_at": F.col("_logged_at"),
            "client_host": F.nullif(F.regexp_extract(message, NOTIFYME, 1), F.lit("")),
            "topic": topic_of_key(key),
            "consumer_group": group_of_key(key),
            "queue_id": integer_in_range(number(3), 0, MAX_QUEUE_ID + 1).cast("int"),
            "offset": integer_in_range(number(4), 0, OFFSET_LIMIT),
            "reported_store_offset": integer_in_range(number(5), 0, OFFSET_LIMIT),
            "evidence": F.lit("broker_notifyme"),
            "commit_path": _commit_path(F.col("_thread")),
            "extra_fields": F.lit(None).cast("string"),
        }
    ).withColumn("key_kind", key_kind(F.col("topic"), F.col("consumer_group")))
    checks = [
        *layout_checks(),
        (message.rlike(NOTIFYME), "unparseable NOTIFYME message"),
        (F.col("broker").isNotNull(), "broker unknown: the landing path names no broker"),
        (F.length(F.col("topic")) > 0, "key is not topic@group"),
        (F.length(F.col("consumer_group")) > 0, "key is not topic@group"),
        (F.col("queue_id").isNotNull(), f"queue_id not an integer in [0, {MAX_QUEUE_ID}]"),
        (F.col("offset").isNotNull(), "offset not an integer in [0, 2^53)"),
        (F.col("reported_store_offset").isNotNull(), "storeOffset not an integer in [0, 2^53)"),
    ]
    reason = F.coalesce(F.col("read_error"), first_failure(*checks))
    return split_valid(typed, reason, F.col("line"), COMMIT_COLUMNS)


def _parse_resets(records: DataFrame) -> Parsed:
    kind = F.col("_kind")
    typed = records.withColumns(
        {
            "reset_at": F.col("_logged_at"),
            "topic": _extract(kind, "topic"),
            "consumer_group": _extract(kind, "consumer_group"),
            "queue_id": F.lit(None).cast("int"),
            "client_id": _extract(kind, "client_id"),
            "requested_offset": _extract(kind, "requested_offset").try_cast("long"),
            "new_offset": _extract(kind, "new_offset").try_cast("long"),
            "reset_to_timestamp": _extract(kind, "reset_to_timestamp").try_cast("long"),
            "is_force": _extract(kind, "is_force").try_cast("boolean"),
            "reset_kind": kind,
        }
    )
    format_checks = [
        ((kind != name) | F.col("_message").rlike(pattern), f"unparseable {name} message")
        for name, (pattern, _) in RESET_FORMATS.items()
    ]
    range_checks = [
        (_extract(kind, column).isNull() | F.col(column).isNotNull(), f"{column} out of range of a long")
        for column in ("requested_offset", "new_offset", "reset_to_timestamp")
    ]
    checks = [
        *layout_checks(),
        *format_checks,
        (F.col("broker").isNotNull(), "broker unknown: the landing path names no broker"),
        *range_checks,
    ]
    return split_valid(typed, first_failure(*checks), F.col("line"), RESET_COLUMNS)


def parse_broker_log(lines: DataFrame, clocks_change: bool = False) -> BrokerLogParsed:
    """Parse broker.log lines into NOTIFYME commits and reset/correction rows.

    Needs the reader's lines columns (``broker`` names the broker the log belongs to);
    produces ``commits`` (``COMMIT_COLUMNS``, evidence ``broker_notifyme``, ``offset`` =
    requestOffset, ``reported_store_offset`` = storeOffset, ``commit_path`` from the
    thread) and ``resets`` (``RESET_COLUMNS``; ``client_id`` is the clientId, or the
    client's address for the two pull corrections; ``new_offset`` is null where the line
    does not say where the broker moved the consumer). ``clocks_change``: as ``with_log_layout``
    (every line of a file, evidence or not, tells which pass of a repeated hour it is in).
    """
    tagged = with_log_layout(lines.withColumn("_kind", _evidence_kind(F.col("line"))), clocks_change)
    commits = tagged.where(F.col("read_error").isNotNull() | (F.col("_kind") == "notifyme"))
    resets = tagged.where(
        F.col("read_error").isNull() & F.col("_kind").isNotNull() & (F.col("_kind") != "notifyme")
    )
    return BrokerLogParsed(commits=_parse_commits(commits), resets=_parse_resets(resets))
