"""The declaration of a Delta table, and the column types and groups the declarations share."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

# A queue of a consumer group: the key every replayed and lag row carries.
QUEUE_KEY = ("cluster", "broker", "topic", "consumer_group", "queue_id")


@dataclass(frozen=True)
class TableSpec:
    """Declaration of one Delta table."""

    layer: str
    name: str
    grain: str
    keys: tuple[str, ...]
    schema: StructType
    event_time: str | None = None
    partition_by: tuple[str, ...] = ()
    # columns (nearly) every row has its own value of: offsets, instants, line numbers. The
    # embedded writer stores them without a Parquet dictionary, which such a column fills
    # and then abandons (the writer hashes every value first; the files come out larger).
    high_cardinality: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """Location relative to the lake root."""
        return f"{self.layer}/{self.name}"

    @property
    def description(self) -> str:
        """The table's Delta description, for any Delta reader: its name, grain and keys."""
        return f"{self.layer}.{self.name}: {self.grain}; keys: {', '.join(self.keys)}"

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.schema.fields]

    @property
    def arrow_schema(self) -> pa.Schema:
        """The table's Arrow schema (Spark timestamps are UTC instants: ``timestamp[us, UTC]``)."""
        return to_arrow_schema(self.schema, timezone="UTC")


def fields(*specs: tuple[str, object, bool]) -> StructType:
    return StructType([StructField(name, dtype, nullable) for name, dtype, nullable in specs])


STRING, LONG, INT, TIMESTAMP, DATE, BOOLEAN, DOUBLE = (
    StringType(),
    LongType(),
    IntegerType(),
    TimestampType(),
    DateType(),
    BooleanType(),
    DoubleType(),
)

# Columns every bronze row carries to trace it back to the landed file.
LINEAGE = (
    ("source_file", STRING, False),
    ("line_no", LONG, True),
    ("_file_hash", STRING, False),
    ("_ingest_run_id", STRING, False),
)
# A line of a commit stream or log, the key of the rows it gives: such a file is ingested once per
# cluster by its content (jobs.sources.source.Source.identity), so byte-identical files of two
# clusters both land, their lines told apart by the cluster.
LINE_KEY = ("cluster", "_file_hash", "line_no")
# The topic@group key, split and classified (see pipelines.keys).
KEY = (
    ("topic", STRING, False),
    ("consumer_group", STRING, False),
    ("key_kind", STRING, False),
)
