"""Parse a consumer's ``rocketmq_client.log`` persist lines into offset commits.

``RemoteBrokerOffsetStore.persistAll`` (every 5 s) and ``persist`` log one INFO line
per queue after sending ``UPDATE_CONSUMER_OFFSET`` (source: github.com/apache/rocketmq,
``client/src/main/java/org/apache/rocketmq/client/consumer/store/RemoteBrokerOffsetStore.java``,
same text at 4.9.x and 5.3.x, ``MessageQueue.toString`` in ``common``):
``[persistAll] Group: {} ClientId: {} updateConsumeOffsetToBroker {} {}`` and
``[persist] Group: {} ClientId: {} updateConsumeOffsetToBroker {} {}``, the third
argument being ``MessageQueue [topic=<t>, brokerName=<b>, queueId=<n>]``. Real lines
also appear without the comma after the topic; both are accepted.

Layouts: 4.x ``yyyy-MM-dd HH:mm:ss,SSS LEVEL LoggerName - message`` (CRLF endings, the
reader strips the ``\\r``), 5.x ``yyyy-MM-dd HH:mm:ss.SSS ...``; local time read in the
line's ``source_timezone``.

What a record is: a line carrying ``[persistAll] Group: `` or ``[persist] Group: ``,
plus every line the reader could not decode. Other lines (rebalance, start/shutdown
messages) are not records: neither landed nor rejected. A persist line that does not
parse in full is rejected with the reason.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pipelines.ingest.broker_log import layout_checks, with_log_layout
from pipelines.ingest.commit_events import COMMIT_COLUMNS, integer_in_range
from pipelines.ingest.quarantine import Parsed, first_failure, split_valid
from pipelines.keys import key_kind
from schemas.records import MAX_QUEUE_ID, OFFSET_LIMIT

MARKERS = ("[persistAll] Group: ", "[persist] Group: ")
PERSIST = (
    r"^\[(persistAll|persist)\] Group: (\S+) ClientId: (\S+) updateConsumeOffsetToBroker "
    r"MessageQueue \[topic=([^\s,\]]+),? brokerName=([^,\]]+), queueId=(-?\d+)\] (-?\d+)$"
)


def _group(index: int) -> Column:
    return F.regexp_extract(F.col("_message"), PERSIST, index)


def _is_persist_line(line: Column) -> Column:
    condition = F.lit(False)
    for marker in MARKERS:
        condition = condition | line.contains(marker)
    return condition


def parse_client_log(lines: DataFrame, clocks_change: bool = False) -> Parsed:
    """Parse rocketmq_client.log lines into ``offset_commits`` rows and rejections.

    Needs the reader's lines columns; produces ``COMMIT_COLUMNS`` with evidence
    ``client_persist``, ``broker`` from brokerName, ``client_host`` the ClientId as
    logged (``ip@instance``), ``commit_path='update_offset'`` (persist sends
    UPDATE_CONSUMER_OFFSET) and ``committed_at`` the time the line was logged.
    ``clocks_change``: as ``with_log_layout`` (a client logs its persist lines every 5 s:
    they tell which pass of a repeated hour a line is in).
    """
    records = lines.where(F.col("read_error").isNotNull() | _is_persist_line(F.col("line")))
    parsed = with_log_layout(records, clocks_change)
    typed = parsed.withColumns(
        {
            "committed_at": F.col("_logged_at"),
            "broker": _group(5),
            "client_host": _group(3),
            "topic": _group(4),
            "consumer_group": _group(2),
            "queue_id": integer_in_range(_group(6).try_cast("decimal(38,0)"), 0, MAX_QUEUE_ID + 1).cast(
                "int"
            ),
            "offset": integer_in_range(_group(7).try_cast("decimal(38,0)"), 0, OFFSET_LIMIT),
            "evidence": F.lit("client_persist"),
            "commit_path": F.lit("update_offset"),
            "reported_store_offset": F.lit(None).cast("long"),
            "extra_fields": F.lit(None).cast("string"),
        }
    ).withColumn("key_kind", key_kind(F.col("topic"), F.col("consumer_group")))
    checks = [
        *layout_checks(),
        (F.col("_message").rlike(PERSIST), "unparseable persist message"),
        (F.col("queue_id").isNotNull(), f"queue_id not an integer in [0, {MAX_QUEUE_ID}]"),
        (F.col("offset").isNotNull(), "offset not an integer in [0, 2^53)"),
    ]
    reason = F.coalesce(F.col("read_error"), first_failure(*checks))
    return split_valid(typed, reason, F.col("line"), COMMIT_COLUMNS)
