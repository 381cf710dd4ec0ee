"""One bench case's figures: rows per table and per stage, the run's times and memory, its
ratios over the oracle and the lean DuckDB job, and its comparison with the oracle's tables.

The whole run is ``offsetlake run`` from launch to exit (every stage, start-up and summary);
its ratios are over the oracle's time (the like-for-like DuckDB reference) and over the lean
DuckDB job's (a process, timed the same way).

Rows per second count, per stage (``STAGE_ROWS``): ingest the records it read from the
landed files (landed + quarantined, from ops/ingest_runs); replay the events it replayed
(rows of silver/stored_offset_timeline); marts the rows it read (timeline + bronze/queue_offsets);
audit the check results it recorded (quality/check_results); publish the gold rows it
published. Memory is the driver's: the Python process plus its JVM (resident set, sampled),
with the JVM's Python workers reported apart.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable

from jobs.tools.bench.compare import describe_mismatches

STAGE_ROWS = {
    "ingest": "records read from the landed files (landed + quarantined)",
    "replay": "events replayed (rows of silver/stored_offset_timeline)",
    "marts": "rows read (silver/stored_offset_timeline + bronze/queue_offsets)",
    "audit": "check results recorded (quality/check_results)",
    "publish": "gold rows published",
}


def table_rows(lake: Path) -> dict[str, int]:
    """Rows per Delta table of the lake, from the Delta log's statistics (no data read)."""
    rows = {}
    for layer in ("bronze", "silver", "gold", "ops", "quarantine", "quality"):
        for path in sorted((lake / layer).glob("*")) if (lake / layer).is_dir() else []:
            if DeltaTable.is_deltatable(str(path)):
                actions = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True))
                rows[f"{layer}/{path.name}"] = int(sum(v or 0 for v in actions["num_records"].to_pylist()))
    return rows


def _records_read(lake: Path) -> int:
    path = lake / "ops" / "ingest_runs"
    if not DeltaTable.is_deltatable(str(path)):
        return 0
    return int(
        sum(
            v or 0
            for v in DeltaTable(str(path))
            .to_pyarrow_table(columns=["records_read"])["records_read"]
            .to_pylist()
        )
    )


def stage_rows(lake: Path, published: dict[str, int], rows: dict[str, int] | None = None) -> dict[str, int]:
    """Each stage's counted rows (``STAGE_ROWS``) as the lake holds them now; ``rows``: its table_rows."""
    rows = table_rows(lake) if rows is None else rows
    timeline = rows.get("silver/stored_offset_timeline", 0)
    return {
        "ingest": _records_read(lake),
        "replay": timeline,
        "marts": timeline + rows.get("bronze/queue_offsets", 0),
        "audit": rows.get("quality/check_results", 0),
        "publish": sum(published.values()),
    }


def _ratio(seconds: float, other: float | None) -> float | None:
    return seconds / other if other else None


def case_figures(
    case,
    inputs,
    timed,
    lake,
    reference,
    comparison,
    rows_before: dict[str, int] | None = None,
    lean=None,
    lean_spark=None,
) -> dict:
    """Every figure of one case, JSON-ready; ``rows_before``: the stages' counted rows the lake held
    before the run; ``lean``, ``lean_spark``: the lean DuckDB job's run and the lean Spark job's (their
    regressions judged on a commits-only case)."""
    run, sampler = timed.run, timed.sampler
    rows = table_rows(lake)
    counted = stage_rows(lake, run.published, rows)
    counted = {stage: n - (rows_before or {}).get(stage, 0) for stage, n in counted.items()}
    spans = run.stage_spans()
    stages = {}
    for stage, seconds in run.stage_seconds.items():
        n = counted.get(stage, 0)
        stages[stage] = {
            "seconds": seconds, "rows": n, "rows_counted": STAGE_ROWS.get(stage, ""),
            "rows_per_second": n / seconds if seconds > 0 else None, **sampler.peak(*spans[stage]),
        }  # fmt: skip
    pipeline_seconds = sum(run.stage_seconds.values())
    run_peak = sampler.peak(run.started_at, run.started_at + pipeline_seconds)
    through_marts = sum(
        seconds for stage, seconds in run.stage_seconds.items() if stage in ("ingest", "replay", "marts")
    )
    mismatches = describe_mismatches(comparison)
    for job, name in ((lean, "DuckDB"), (lean_spark, "Spark")):
        if job is not None and case.kind == "commits-only" and not job.regressions.get("agrees", False):
            r = job.regressions
            mismatches.append(
                f"lean {name} job's regressions: {r.get('only_in_lean')} rows only in the lean job's, "
                f"{r.get('only_in_lake')} only in silver/offset_regressions"
            )
    if lean is not None and lean_spark is not None and lean_spark.counts != lean.counts:
        mismatches.append(
            f"lean Spark job's rows {lean_spark.counts} against the lean DuckDB job's {lean.counts}"
        )
    commits = lean is not None and lean.counts["commits"]
    return {
        "case": case.name,
        "kind": case.kind,
        "requested_events": case.requested_events,
        "inputs": inputs,
        "pipeline": {
            "session_start_seconds": run.session_seconds,
            "wall_seconds": run.wall_seconds,
            "stages": stages,
            "seconds": pipeline_seconds,
            "summary_seconds": run.summary_seconds,
            "run": run_peak,
            "high_water_mib": {k: v / (1 << 20) for k, v in run.high_water_bytes.items()},
            "where_time_goes": timed.profile,
        },
        "duckdb": {
            "steps": reference.timings,
            "seconds": reference.total_seconds,
            "cpu_seconds": reference.cpu_seconds,
        },
        "lean": lean.to_json() if lean is not None else None,
        "lean_spark": lean_spark.to_json() if lean_spark is not None else None,
        "whole_run_to_oracle": _ratio(run.wall_seconds, reference.total_seconds),
        # no ratio where the lean job had no commit events to read (start-up, snapshots only)
        "whole_run_to_lean": _ratio(run.wall_seconds, lean.seconds if commits else None),
        # the whole run over the same lean job on Spark, and that job over the DuckDB one: Spark's own share
        "whole_run_to_lean_spark": _ratio(
            run.wall_seconds, lean_spark.seconds if commits and lean_spark else None
        ),
        "lean_spark_to_lean": _ratio(lean_spark.seconds, lean.seconds) if commits and lean_spark else None,
        "offsetlake_to_duckdb": pipeline_seconds / reference.total_seconds
        if reference.total_seconds > 0
        else None,
        # the target's measure: ingest, replay and marts (publish only moves staged rows)
        "ingest_through_marts_to_duckdb": through_marts / reference.total_seconds
        if reference.total_seconds > 0
        else None,
        "offsetlake_to_duckdb_cpu": _cpu_ratio(run_peak, reference.cpu_seconds),
        "table_rows": rows,
        "comparison": {
            "agrees": not mismatches,
            "results": [asdict(c) for c in comparison],
            "mismatches": mismatches,
        },
    }


def _cpu_ratio(run: dict, duckdb_cpu: float) -> float | None:
    """CPU seconds of the pipeline (Python driver, JVM, Python workers) over DuckDB's: a measure a loaded machine blurs less."""
    if run["driver_cpu_seconds"] is None or duckdb_cpu <= 0:
        return None
    return (run["driver_cpu_seconds"] + run["workers_cpu_seconds"]) / duckdb_cpu
