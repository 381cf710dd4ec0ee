"""Parse saved ``mqadmin consumerProgress`` / ``topicStatus`` outputs into ``bronze/queue_offsets``.

Layouts (printf formats in github.com/apache/rocketmq ``tools/src/main/java/org/apache/
rocketmq/tools/command/consumer/ConsumerProgressSubCommand.java`` and ``.../topic/
TopicStatusSubCommand.java``):
- consumerProgress 3.x-4.2: ``%-32s  %-32s  %-4s  %-20s  %-20s  %-20s  %s`` =
  ``#Topic #Broker Name #QID #Broker Offset #Consumer Offset #Diff #LastTime``;
  4.3-4.9.2 always print ``#Client IP`` before ``#Diff``; 4.9.3-5.0 widen the topic to 64
  (``#Client IP`` only with ``-s true``); 5.1+ add ``#Inflight`` before ``#LastTime``.
  Footers ``Consume TPS:``, ``Diff Total:`` (5.1+ ``Consume Diff Total:``,
  ``Consume Inflight Total:``). Without ``-g`` it prints a per-group summary
  (``#Group #Count #Version ...``): recognised and skipped, see ``SUMMARY_REASON``.
- topicStatus: ``%-32s  %-4s  %-20s  %-20s    %s`` = ``#Broker Name #QID #Min Offset
  #Max Offset #Last Updated`` (empty when unknown); 5.x adds ``Topic Put TPS:``.
Names are cut to their column width (``frontStringAtLeast``): a name that fills its
column is marked ``is_name_truncated``. ``N/A``/``NA`` cells are null.

Each file's header row decides how the rows below it are read: its ``#`` column
names give the order of the cells (cells never hold spaces, except the trailing time).
The consumer group (topicStatus: the topic) is not in the table; it comes from a line
echoing the command (``mqadmin consumerProgress -g <group>``, nearest above the table),
else from the file name (``consumerProgress-<group>.txt``, ``topicStatus-<topic>.txt``).
A ``#Group`` column (the ``brokerConsumeStats`` layout) names it on every row.

What a record is: a row of a table (the lines after a header row up to the first blank
line, shell prompt or command echo; footers excluded), a summary header (rejected
with ``SUMMARY_REASON``), every line the reader could not decode, and, for a file
holding no table header at all, its first non-blank line (rejected with
``NO_HEADER_REASON``). Command echoes, prompts, footers and blank lines are not records.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from pipelines.ingest.commit_events import WHITESPACE, integer_in_range, is_blank
from pipelines.ingest.quarantine import Parsed, first_failure, split_valid
from schemas.records import MAX_QUEUE_ID, OFFSET_LIMIT
from schemas.tables import QUEUE_OFFSETS

QUEUE_OFFSET_COLUMNS = [c for c in QUEUE_OFFSETS.columns if c not in ("_ingest_run_id", "observed_date")]
SUMMARY_REASON = "consumerProgress summary of all groups (run without -g): no per-queue rows, skipped"
NO_HEADER_REASON = "no mqadmin consumerProgress or topicStatus table header found"
GROUP_UNKNOWN_REASON = (
    "consumer group unknown: name the file consumerProgress-<group>.txt "
    "or keep the 'mqadmin consumerProgress -g <group>' line"
)
TOPIC_UNKNOWN_REASON = (
    "topic unknown: name the file topicStatus-<topic>.txt or keep the 'mqadmin topicStatus -t <topic>' line"
)
PROGRESS_HEADER = r"^#Topic\s.*#Broker Offset\s.*#Consumer Offset"
STATUS_HEADER = r"^#Broker Name\s.*#Min Offset\s.*#Max Offset"
SUMMARY_HEADER = r"^#Group\s.*#Count"
FOOTER = r"^(Consume TPS|Diff Total|Consume Diff Total|Consume Inflight Total|Topic Put TPS):"
COMMAND = r"mqadmin\s+(consumerProgress|topicStatus)\b"
# A shell prompt ("$ exit", "user@host:~/bin$ ls", "[root@host bin]# ls") ends a table.
PROMPT = r"^(\S*[$#>]|\[[^\]]+\][$#])\s"
GROUP_OPTION = r"mqadmin\s+consumerProgress\b.*?\s(?:-g|--groupName)(?:\s+|=)['\"]?([^\s'\"]+)"
TOPIC_OPTION = r"mqadmin\s+topicStatus\b.*?\s(?:-t|--topic)(?:\s+|=)['\"]?([^\s'\"]+)"
GROUP_FILE = r"(?:^|/)consumerProgress-([^/]+?)\.txt(?:\.gz)?$"
TOPIC_FILE = r"(?:^|/)topicStatus-([^/]+?)\.txt(?:\.gz)?$"
LAST_TIME = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"
LAST_UPDATED = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}$"
# (?<!\s): a match starts only where a run of spaces starts; without it, every space of
# the wide padding between cells starts a match that fails, a cost quadratic in the run
TIME_TAIL = r"(?<!\s)\s+(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:,\d{3})?)$"
NULL_CELLS = ("N/A", "NA", "")
# Versions before N/A existed print lastTimestamp 0 as the epoch in the admin host's zone.
EPOCH_ZERO = r"^(1970-01-01|1969-12-31) "


def _classify(lines: DataFrame) -> DataFrame:
    text = F.btrim(F.col("line"), F.lit(WHITESPACE))
    return lines.withColumns(
        {
            "_text": text,
            "_is_blank": F.coalesce(is_blank(F.col("line")), F.lit(False)),
            "_header_kind": F.when(text.rlike(PROGRESS_HEADER), F.lit("progress"))
            .when(text.rlike(STATUS_HEADER), F.lit("status"))
            .when(text.rlike(SUMMARY_HEADER), F.lit("summary")),
            "_is_command": F.coalesce(F.col("line").rlike(COMMAND), F.lit(False)),
            "_is_prompt": F.coalesce(text.rlike(PROMPT), F.lit(False)),
            "_is_footer": F.coalesce(text.rlike(FOOTER), F.lit(False)),
        }
    )


def _with_table_context(df: DataFrame) -> DataFrame:
    """Give every line the header, command echo and table break (blank, prompt, command) above it.

    Window per file (``line_no`` is unique within a file), frame from the file's first line
    to the current one; ``_file_has_header`` and ``_first_content_no`` span the whole file::

        line_no  line                         _header_no  _last_break_no  _is_row
        1        $ mqadmin consumerProgress   null        1               false
        2        #Topic  #Broker Name ...     2           1               false
        3        TopicA  broker-a  0 ...      2           1               true
        4        (blank)                      2           4               false
        5        Consume TPS: 0.13            2           4               false
    """
    in_file = Window.partitionBy("source_file", "_file_hash").orderBy("line_no")
    running = in_file.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    whole = in_file.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    is_header = F.col("_header_kind").isNotNull()
    is_break = F.col("_is_blank") | F.col("_is_prompt") | F.col("_is_command")
    out = df.withColumns(
        {
            "_header": F.last(F.when(is_header, F.col("_text")), ignorenulls=True).over(running),
            "_header_kind_above": F.last(F.col("_header_kind"), ignorenulls=True).over(running),
            "_header_no": F.last(F.when(is_header, F.col("line_no")), ignorenulls=True).over(running),
            "_last_break_no": F.last(F.when(is_break, F.col("line_no")), ignorenulls=True).over(running),
            "_command_line": F.last(F.when(F.col("_is_command"), F.col("line")), ignorenulls=True).over(
                running
            ),
            "_file_has_header": F.max(is_header).over(whole),
            "_first_content_no": F.min(F.when(F.col("_text") != "", F.col("line_no"))).over(whole),
        }
    )
    is_row = (
        (F.col("line_no") > F.col("_header_no"))
        & (F.col("_last_break_no").isNull() | (F.col("_last_break_no") < F.col("_header_no")))
        & ~is_break
        & ~F.col("_is_footer")
        & F.col("_header_kind").isNull()
    )
    return out.withColumn("_is_row", F.coalesce(is_row, F.lit(False)))


def _cell(name: str) -> Column:
    """Text of the row's cell under header column ``name`` (null when the header has no such column)."""
    position = F.array_position(F.col("_columns"), F.lit(name)).cast("int")
    return F.when(position > 0, F.try_element_at(F.col("_cells"), F.greatest(position, F.lit(1))))


def _nullable_cell(name: str) -> Column:
    value = _cell(name)
    return F.when(~value.isin(*NULL_CELLS), value)


def _offset(name: str) -> Column:
    return integer_in_range(_cell(name).try_cast("decimal(38,0)"), 0, OFFSET_LIMIT)


def _column_width(name: str) -> Column:
    """Printed width of a name column: start of the next column minus start of this one minus the 2-space gap."""
    start = F.instr(F.col("_header"), name)
    to_next = F.instr(F.substring(F.col("_header"), start + 1, 1 << 20), "#")
    return F.when((start > 0) & (to_next > 0), to_next - 2)


def _typed_rows(rows: DataFrame) -> DataFrame:
    header = F.col("_header")
    # The trailing time cell is the only one holding a space: take it off before splitting.
    # One regex per row: the match (spaces + time) gives both the time and what precedes it.
    text = F.col("_text")
    match = F.regexp_extract(text, TIME_TAIL, 0)
    tail = F.btrim(match, F.lit(WHITESPACE))
    head_cells = F.split(F.left(text, F.length(text) - F.length(match)), r"\s+")
    cells = F.when(tail != "", F.concat(head_cells, F.array(tail))).otherwise(
        head_cells
    )  # no time: the whole text
    is_progress = F.col("_header_kind_above") == "progress"
    command = F.coalesce(F.col("_command_line"), F.lit(""))
    group = F.coalesce(
        _cell("#Group"),
        F.nullif(F.regexp_extract(command, GROUP_OPTION, 1), F.lit("")),
        F.nullif(F.regexp_extract(F.col("source_file"), GROUP_FILE, 1), F.lit("")),
    )
    topic_named = F.coalesce(
        F.nullif(F.regexp_extract(command, TOPIC_OPTION, 1), F.lit("")),
        F.nullif(F.regexp_extract(F.col("source_file"), TOPIC_FILE, 1), F.lit("")),
    )
    last_time = _nullable_cell("#LastTime")
    truncated = (F.length(_cell("#Broker Name")) >= _column_width("#Broker Name")) | (
        is_progress & (F.length(_cell("#Topic")) >= _column_width("#Topic"))
    )
    return rows.withColumns(
        {"_columns": F.split(header, r"\s+(?=#)"), "_cells": cells, "_has_time": tail != ""}
    ).withColumns(
        {
            "observed_at": F.col("event_at"),
            "broker": _cell("#Broker Name"),
            "topic": F.when(is_progress, _cell("#Topic")).otherwise(topic_named),
            "queue_id": integer_in_range(_cell("#QID").try_cast("decimal(38,0)"), 0, MAX_QUEUE_ID + 1).cast(
                "int"
            ),
            "max_offset": F.when(is_progress, _offset("#Broker Offset")).otherwise(_offset("#Max Offset")),
            "min_offset": F.when(~is_progress, _offset("#Min Offset")),
            "consumer_group": F.when(is_progress, group),
            "consumer_offset": F.when(is_progress, _offset("#Consumer Offset")),
            "inflight": _cell("#Inflight").try_cast("long"),
            "client_ip": _nullable_cell("#Client IP"),
            "last_consumed_at": F.when(~last_time.rlike(EPOCH_ZERO), last_time),
            "evidence": F.when(is_progress, F.lit("consumer_progress")).otherwise(F.lit("topic_status")),
            "is_name_truncated": F.coalesce(truncated, F.lit(False)),
        }
    )


def _row_checks() -> list[tuple[Column, str]]:
    is_progress = F.col("_header_kind_above") == "progress"
    cells, columns = F.size(F.col("_cells")), F.size(F.col("_columns"))
    time_last = F.try_element_at(F.col("_columns"), F.lit(-1)).isin("#LastTime", "#Last Updated")
    diff = _cell("#Diff")
    last_updated = F.coalesce(_cell("#Last Updated"), F.lit(""))
    last_time = _nullable_cell("#LastTime")
    return [
        # one cell short only when the trailing time cell is empty
        (
            (cells == columns) | (time_last & ~F.col("_has_time") & (cells == columns - 1)),
            "row does not have the header's columns",
        ),
        (F.col("queue_id").isNotNull(), f"#QID not an integer in [0, {MAX_QUEUE_ID}]"),
        (~is_progress | F.col("max_offset").isNotNull(), "#Broker Offset not an integer in [0, 2^53)"),
        (~is_progress | F.col("consumer_offset").isNotNull(), "#Consumer Offset not an integer in [0, 2^53)"),
        (
            ~is_progress
            | diff.isNull()
            | (diff.try_cast("long") == F.col("max_offset") - F.col("consumer_offset")),
            "#Diff is not #Broker Offset - #Consumer Offset",
        ),
        (_cell("#Inflight").isNull() | F.col("inflight").isNotNull(), "#Inflight not an integer"),
        (
            last_time.isNull() | (last_time.rlike(LAST_TIME) & F.try_to_timestamp(last_time).isNotNull()),
            "unparseable #LastTime",
        ),
        (is_progress | F.col("min_offset").isNotNull(), "#Min Offset not an integer in [0, 2^53)"),
        (is_progress | F.col("max_offset").isNotNull(), "#Max Offset not an integer in [0, 2^53)"),
        (
            (last_updated == "")
            | (
                last_updated.rlike(LAST_UPDATED)
                & F.try_to_timestamp(last_updated, F.lit("yyyy-MM-dd HH:mm:ss,SSS")).isNotNull()
            ),
            "unparseable #Last Updated",
        ),
        (~is_progress | F.col("consumer_group").isNotNull(), GROUP_UNKNOWN_REASON),
        (is_progress | F.col("topic").isNotNull(), TOPIC_UNKNOWN_REASON),
        (F.col("observed_at").isNotNull(), "observation time unknown: the landing path carries no time"),
    ]


def parse_admin_progress(lines: DataFrame) -> Parsed:
    """Parse mqadmin consumerProgress / topicStatus outputs into ``queue_offsets`` rows and rejections.

    Needs the reader's lines columns (``event_at`` is the observation time); produces
    ``QUEUE_OFFSET_COLUMNS`` with evidence ``consumer_progress`` (``max_offset`` = Broker
    Offset) or ``topic_status``, and the records described in the module docstring.
    """
    context = _with_table_context(_classify(lines))
    decoded = F.col("read_error").isNull()
    in_table = decoded & F.col("_is_row") & F.col("_header_kind_above").isin("progress", "status")
    # records outside a table; never a table's row (a row is decoded, below a table's header, and
    # no header itself)
    file_level = (
        ~decoded
        | (F.col("_header_kind") == "summary")
        | (~F.col("_file_has_header") & (F.col("line_no") == F.col("_first_content_no")))
    )
    file_level_reason = F.coalesce(
        F.col("read_error"),
        F.when(F.col("_header_kind") == "summary", F.lit(SUMMARY_REASON)).otherwise(F.lit(NO_HEADER_REASON)),
    )
    # one split of both kinds of record, so that a cache of it computes the files' windows once
    reason = F.when(in_table, first_failure(*_row_checks())).otherwise(file_level_reason)
    records = _typed_rows(context.where(in_table | file_level))
    return split_valid(records, reason, F.col("line"), QUEUE_OFFSET_COLUMNS)
