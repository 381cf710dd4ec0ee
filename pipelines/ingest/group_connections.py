"""Saved ``mqadmin consumerConnection`` outputs into bronze/group_connections rows.

Each file is one document: the clients of one group at one instant and how the group
consumes (pipelines.ingest.consumer_connection parses it). It becomes one row per client,
each carrying the group's consume type, message model, consume-from-where and subscribed
topics; a group the tool found not online is one row without a client, so the membership
timeline knows the group was empty then. Example, ``consumerConnection-billing.txt`` landed
at 10:00 with two clients (push, clustering):

    observed_at  consumer_group  client_id       client_host        consume_type       is_online
    10:00        billing         10.0.0.5@4711   10.0.0.5:53524     CONSUME_PASSIVELY  true
    10:00        billing         10.0.0.6@4712   10.0.0.6:53530     CONSUME_PASSIVELY  true

A line that looks like a client row but cannot be read is quarantined with its line number;
a file that holds no consumerConnection output at all, or names no group, is one rejected row.
"""

from __future__ import annotations

import json

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BooleanType, LongType, StringType, StructField, StructType

from pipelines.ingest.consumer_connection import (
    ConsumerConnectionFormatError,
    group_from_file_name,
    parse_consumer_connection,
)
from pipelines.ingest.quarantine import REJECTED_COLUMNS, Parsed, derived, split_valid
from pipelines.ingest.snapshots import EMPTY_FILE, MISSING_FILE, RAW_TEXT_LIMIT
from schemas.tables import GROUP_CONNECTIONS

GROUP_UNKNOWN = (
    "consumer group unknown: name the file consumerConnection-<group>.txt "
    "or keep the 'mqadmin consumerConnection -g <group>' line"
)
NOT_UTF8 = "not UTF-8 text"
_STRING = StringType()
_CLIENT = StructType(
    [StructField("line_no", LongType())]
    + [StructField(n, _STRING) for n in ("client_id", "client_host", "language", "client_version")]
)
_REJECTED = StructType(
    [StructField("line_no", LongType()), StructField("reason", _STRING), StructField("raw", _STRING)]
)
_DOCUMENT = StructType(
    [
        StructField("failure", _STRING),
        *[
            StructField(n, _STRING)
            for n in ("consumer_group", "consume_type", "message_model", "consume_from_where", "topics")
        ],
        StructField("is_online", BooleanType()),
        StructField("not_online_line_no", LongType()),
        StructField("clients", ArrayType(_CLIENT)),
        StructField("rejected", ArrayType(_REJECTED)),
    ]
)
_COLUMNS = [c for c in GROUP_CONNECTIONS.columns if c not in ("_ingest_run_id", "observed_date")]


def _failed(reason: str) -> dict:
    return {"failure": reason, "is_online": False, "clients": [], "rejected": []}


def _document(content: bytes | None, source_file: str) -> dict:
    try:
        text = content.decode("utf-8") if content is not None else ""
        document = parse_consumer_connection(text, group_from_file_name(source_file.rsplit("/", 1)[-1]))
    except UnicodeDecodeError:
        return _failed(NOT_UTF8)
    except ConsumerConnectionFormatError as error:
        return _failed(str(error))
    if document.consumer_group is None:
        return _failed(GROUP_UNKNOWN)
    return {
        "failure": None,
        "consumer_group": document.consumer_group,
        "consume_type": document.consume_type,
        "message_model": document.message_model,
        "consume_from_where": document.consume_from_where,
        "topics": ",".join(document.topics) or None,
        "is_online": document.is_online,
        "not_online_line_no": document.not_online_line_no,
        "clients": [
            {
                "line_no": c.line_no,
                "client_id": c.client_id,
                "client_host": c.client_addr,
                "language": c.language,
                "client_version": c.version,
            }
            for c in document.clients
        ],
        "rejected": [{"line_no": n, "reason": reason, "raw": raw} for n, reason, raw in document.rejected],
    }


@F.pandas_udf(_STRING)  # type: ignore[call-overload]
def _parse_documents(contents: pd.Series, source_files: pd.Series) -> pd.Series:
    # A vectorised UDF because the output is a few sections of free text (a client table, a
    # subscription table, key: value lines) whose layout changed between versions: one
    # document per file, read by one parser, in Arrow batches, handed back as JSON (_DOCUMENT).
    return pd.Series(
        [
            json.dumps(_document(None if c is None else bytes(c), f))
            for c, f in zip(contents, source_files, strict=True)
        ]
    )


def parse_group_connections(files: DataFrame) -> Parsed:
    """bronze/group_connections rows from ``jobs.io.snapshot_files.read_whole_files``
    rows of consumerConnection files (``snapshot_at``: the file's time), and the rejections."""
    documents = files.withColumns(
        {
            "observed_at": F.col("snapshot_at"),
            "_document": F.from_json(_parse_documents("content", "source_file"), _DOCUMENT),
        }
    ).withColumn(
        "_failure",
        F.when(F.col("file_size").isNull(), F.lit(MISSING_FILE))
        .when(F.col("file_size") == 0, F.lit(EMPTY_FILE))
        .otherwise(F.col("_document.failure")),
    )
    raw_text = F.substring(F.make_valid_utf8(F.col("content").cast("string")), 1, RAW_TEXT_LIMIT)
    # the documents are parsed once for both outputs: a cache keeps them, with the text of
    # rejected files only
    documents = documents.withColumn("_raw_text", F.when(F.col("_failure").isNotNull(), raw_text))
    return derived(documents.drop("content"), _rows_of_documents)


def _rows_of_documents(documents: DataFrame) -> Parsed:
    by_file = split_valid(
        documents.withColumn("line_no", F.lit(None).cast("long")),
        F.col("_failure"),
        F.col("_raw_text"),
        ["cluster", "observed_at", "source_file", "_file_hash", "_document"],
    )
    document = by_file.landed.select("cluster", "observed_at", "source_file", "_file_hash", "_document.*")
    group = ["cluster", "observed_at", "consumer_group", "consume_type", "message_model",
             "consume_from_where", "topics", "is_online", "not_online_line_no", "source_file", "_file_hash"]  # fmt: skip
    # a group not online is one row without a client, on the line that says so (an output
    # whose client rows were all unreadable lands none: its lines are quarantined)
    clients = document.select(*group, F.explode_outer("clients").alias("client")).select(*group, "client.*")
    landed = (
        clients.where(F.col("client_id").isNotNull() | ~F.col("is_online"))
        .withColumn("line_no", F.coalesce(F.col("line_no"), F.col("not_online_line_no")))
        .select(*_COLUMNS)
    )
    unreadable_lines = document.select(
        "cluster", "source_file", "_file_hash", F.explode("rejected").alias("r")
    ).select(*[F.col(f"r.{c}") if c in ("line_no", "reason", "raw") else F.col(c) for c in REJECTED_COLUMNS])
    return Parsed(landed=landed, rejected=by_file.rejected.unionByName(unreadable_lines))
