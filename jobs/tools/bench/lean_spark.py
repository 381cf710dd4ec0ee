"""The lean job written plainly in PySpark: what the lean DuckDB job's work costs on Spark itself.

The lean DuckDB job (:mod:`jobs.tools.bench.lean`) is the yardstick a user holds up. This job does
its three steps, over the same files, the way a user would write them for Spark: the JSON lines
read with a declared schema and written to Parquet, both semantics by window functions per queue,
the regressions and the hourly throughput to Parquet. It has none of what OffsetLake adds (Delta
tables, the checks that quarantine bad lines, checkpoints, the audit, the marts), and none of its
tuning: Spark's defaults but the session's time zone (UTC, for the hours), Parquet timestamps as
Delta writes them, no UI or progress bar, and the master and driver memory OffsetLake's run gets
(:func:`jobs.tools.bench.runner.lean_spark_options`). Its time against the lean DuckDB job's is the
part of OffsetLake's distance to that job that is Spark's own.

It reads what the DuckDB job reads as that job reads it: a line that does not fit the declared
schema fails the job (Spark's JSON reader would otherwise make its fields null), and nulls sort last
in a queue's order. A file's name is Spark's URI of it (``input_file_name``), as a user would take
it: it orders the files as their paths do, and gives the cluster their directory's name, while no
path holds a character a URI escapes (a space, ``%``, ``#``; none of the bench's does), and the bench
holds the job's regressions to the lake's. Decoding every row's URI back to its path would cost the
job some seconds at 10M events (docs/experiments.md, "The lean job on Spark").

Run as ``python -m jobs.tools.bench.lean_spark <landing> <out> [--master M] [--driver-memory G]``,
timed as the bench times ``offsetlake run`` (a process, start-up included). It writes ``commits/``,
``replayed/``, ``regressions/`` and ``throughput/`` under ``out`` and prints one JSON line of counts,
with the seconds of its steps: the session's start (``session``), then the DuckDB job's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.tools.bench.lean import COLUMNS, Steps, commit_files
from jobs.tools.bench.lean import QUEUE as QUEUE_COLUMNS

QUEUE = tuple(QUEUE_COLUMNS.split(", "))  # the lean DuckDB job's queue key
# the lean DuckDB job's declared types, in Spark's names
_SPARK_TYPES = {"TIMESTAMPTZ": "TIMESTAMP", "VARCHAR": "STRING", "INTEGER": "INT", "BIGINT": "BIGINT"}
SCHEMA = ", ".join(f"`{name}` {_SPARK_TYPES[kind]}" for name, kind in COLUMNS.items())


def replayed(commits: DataFrame) -> DataFrame:
    """Each commit with the broker's stored offset before it (the queue's previous commit) and the
    client's offset after it (the highest committed so far), in the lean DuckDB job's order."""
    order = Window.partitionBy(*QUEUE).orderBy(
        *[F.col(c).asc_nulls_last() for c in ("committed_at", "source_file", "offset")]
    )
    return commits.withColumns(
        {
            "stored_offset_before": F.lag("offset").over(order),
            "client_offset_after": F.max("offset").over(order.rowsBetween(Window.unboundedPreceding, 0)),
        }
    )


def run(spark: SparkSession, landing: Path, out: Path, steps: Steps | None = None) -> dict:
    """The lean DuckDB job's three steps on Spark, into ``out``, timed into ``steps`` as that job's;
    returns the rows of each output."""
    steps = steps or Steps()
    files = [str(f) for f in commit_files(landing)]
    if not files:
        return {"commits": 0, "regressions": 0, "throughput_rows": 0}
    (
        spark.read.schema(SCHEMA)
        .option("mode", "FAILFAST")
        .json(files)
        .withColumn("source_file", F.input_file_name())
        .withColumn("cluster", F.regexp_extract("source_file", "/commits/([^/]+)/", 1))
        .write.mode("overwrite")
        .parquet(str(out / "commits"))
    )
    steps.done("read_write")
    replayed(spark.read.parquet(str(out / "commits"))).write.mode("overwrite").parquet(str(out / "replayed"))
    steps.done("replay")
    state = spark.read.parquet(str(out / "replayed"))
    before = F.col("stored_offset_before")
    (
        state.where(F.col("offset") < before)
        .select(
            *QUEUE,
            F.col("committed_at").alias("detected_at"),
            "offset",
            before.alias("stored_offset"),
            (before - F.col("offset")).alias("regression_size"),
            "client_host",
            "path",
        )
        .write.mode("overwrite")
        .parquet(str(out / "regressions"))
    )
    (
        state.groupBy(
            "cluster", "topic", "consumer_group", F.date_trunc("hour", "committed_at").alias("hour_start")
        )
        .agg(
            F.sum(F.greatest(F.col("offset") - before, F.lit(0))).alias("consumed_messages"),
            F.count(F.lit(1)).alias("commits"),
        )
        .write.mode("overwrite")
        .parquet(str(out / "throughput"))
    )
    steps.done("outputs")
    return {
        name: spark.read.parquet(str(out / directory)).count()
        for name, directory in (
            ("commits", "commits"),
            ("regressions", "regressions"),
            ("throughput_rows", "throughput"),
        )
    }


def session(master: str, driver_memory: str | None) -> SparkSession:
    """A plain session: Spark's defaults, but the few settings the module docstring names (``driver_memory``
    None: Spark's own)."""
    builder = SparkSession.builder.appName("lean-spark").master(master)
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    return (
        builder.config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("landing", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--driver-memory", help="the driver's heap (Spark's default when not given)")
    args = parser.parse_args(argv)
    timed = Steps()
    spark = session(args.master, args.driver_memory)
    spark.sparkContext.setLogLevel("ERROR")
    timed.done("session")
    try:
        print(json.dumps({**run(spark, args.landing, args.out, timed), "steps": timed.seconds}))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
