"""The summary printed at the end of every run: what landed, what was found, where it is."""

from __future__ import annotations

from pyspark.sql import functions as F

from jobs.cli.answers import answer_lines
from jobs.stages.context import RunContext
from schemas.tables import ALL_TABLES, INGEST_RUNS, OFFSET_REGRESSIONS

EXAMPLE_QUERIES = """\
Example queries (any Delta reader works; these use Python):
  from deltalake import DeltaTable
  DeltaTable("{lake}/silver/offset_regressions").to_pandas().sort_values("regression_size", ascending=False).head()
  DeltaTable("{lake}/gold/consumer_lag_by_group").to_pandas().query("total_lag_messages > 1000")

  # DuckDB:  SELECT consumer_group, sum(regression_size) AS messages_exposed_twice
  #          FROM delta_scan('{lake}/silver/offset_regressions') GROUP BY 1 ORDER BY 2 DESC;
  # Spark:   spark.read.format("delta").load("{lake}/gold/consume_throughput")   (with delta-spark)
"""


def _ingest_lines(lake, run_id: str) -> list[str]:
    runs = lake.read(INGEST_RUNS).where(F.col("run_id") == run_id)
    by_status = runs.groupBy("source_kind", "status").agg(
        F.count(F.lit(1)).alias("files"),
        F.sum("records_read").alias("read"),
        F.sum("records_landed").alias("landed"),
        F.sum("records_quarantined").alias("quarantined"),
    )
    lines = []
    for r in sorted(by_status.collect(), key=lambda r: (r.source_kind, r.status)):
        lines.append(
            f"  {r.source_kind:<15} {r.status:<10} {r.files:>6} files  {r.read:>12,} read = {r.landed:>12,} landed + {r.quarantined:>8,} quarantined"
        )
    return lines or ["  no new files"]


def _regression_lines(lake, interval) -> list[str]:
    if interval is None or not lake.exists(OFFSET_REGRESSIONS):
        return []
    found = lake.read(OFFSET_REGRESSIONS, start=interval.replayed_from, end=interval.replayed_to)
    top = found.orderBy(F.col("regression_size").desc(), "detected_at").limit(5).collect()
    lines = [f"Regressions found in the interval: {found.count():,}" + (" (largest first):" if top else "")]
    for r in top:
        who = f" by {r.client_host}" if r.client_host else ""
        why = f": {r.cause_detail}" if r.cause_detail else ""
        lines.append(
            f"  {r.detected_at:%Y-%m-%d %H:%M:%S} {r.cluster}/{r.broker} {r.topic}@{r.consumer_group} q{r.queue_id}: "
            f"{r.stored_offset} -> {r.offset} ({r.regression_size} messages again, {r.evidence}{who}); {r.cause}{why}"
        )
    return lines


def print_summary(outcome: RunContext) -> None:
    lake, interval = outcome.lake, outcome.interval
    print(
        f"\nOffsetLake run {outcome.run_id}  (Delta engine: {lake.engine_name}, Spark master: {lake.spark.sparkContext.master})"
    )
    if interval is not None:
        print(
            f"Replayed interval: [{interval.replayed_from:%Y-%m-%dT%H:%M:%S.%fZ}, {interval.replayed_to:%Y-%m-%dT%H:%M:%S.%fZ})"
        )
    if outcome.ingest is not None:
        print("Files ingested this run (records read = landed + quarantined):")
        print("\n".join(_ingest_lines(lake, outcome.run_id)))
    print("Tables (rows):")
    for spec in ALL_TABLES:
        print(f"  {spec.path:<34} {lake.row_count(spec):>12,}")
    for line in (*_regression_lines(lake, interval), *answer_lines(lake, interval)):
        print(line)
    if outcome.audit is not None:
        status = "FAILED (error-severity checks)" if outcome.audit.has_errors else "passed"
        print(
            f"Data quality: {status}, {outcome.audit.alerts_total:,} alerts of {outcome.audit.findings_total:,} findings; "
            f"report: {outcome.audit.report_path}"
        )
    if outcome.published:
        print("Published gold rows: " + ", ".join(f"{k} {v:,}" for k, v in outcome.published.items()))
    print("Stage timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in outcome.timings.items()))
    print(f"Lake: {lake.root}")
    print(EXAMPLE_QUERIES.format(lake=lake.root))
