"""The benchmark's figures: per case and stage, the ratios judged against the targets, JSON and print-out.

The whole run is ``offsetlake run`` from launch to exit (every stage, start-up and summary);
its ratios are over the oracle's time (the like-for-like DuckDB reference) and over the lean
DuckDB job's (a process, timed the same way).

Rows per second count, per stage (``STAGE_ROWS``): ingest the records it read from the
landed files (landed + quarantined, from ops/ingest_runs); replay the events it replayed
(rows of silver/stored_offset_timeline); marts the rows it read (timeline + bronze/queue_offsets);
audit the check results it recorded (quality/check_results); publish the gold rows it published. Memory is the driver's: the Python process plus its JVM
(resident set, sampled), with the JVM's Python workers reported apart.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable

from jobs.runtime.class_archive import built_archive
from jobs.tools.bench.compare import describe_mismatches
from schemas.config import Settings

STAGE_ROWS = {
    "ingest": "records read from the landed files (landed + quarantined)",
    "replay": "events replayed (rows of silver/stored_offset_timeline)",
    "marts": "rows read (silver/stored_offset_timeline + bronze/queue_offsets)",
    "audit": "check results recorded (quality/check_results)",
    "publish": "gold rows published",
}
TARGETS = {
    "duckdb_ratio_max": 2.0,  # the largest commits case, ingest through marts vs DuckDB
    "lean_ratio_max": 4.0,  # the largest commits-only case, the whole run vs the lean DuckDB job
    "linearity_slack": 1.05,  # large / small time (minus start-up) at most 1.05 x the size ratio
    "memory": "driver peak flat as data grows",
    "incremental": "a run over the last interval, on the history's lake, costs about what the interval costs alone",
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
    case, inputs, timed, lake, reference, comparison, rows_before: dict[str, int] | None = None, lean=None
) -> dict:
    """Every figure of one case, JSON-ready; ``rows_before``: the stages' counted rows the lake held
    before the run; ``lean``: the lean DuckDB job's run (its regressions judged on a commits-only case)."""
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
    lean_figures = lean.to_json() if lean is not None else None
    if lean is not None and case.kind == "commits-only" and not lean.regressions.get("agrees", False):
        r = lean.regressions
        mismatches.append(
            f"lean DuckDB job's regressions: {r.get('only_in_lean')} rows only in the lean job's, "
            f"{r.get('only_in_lake')} only in silver/offset_regressions"
        )
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
        "lean": lean_figures,
        "whole_run_to_oracle": _ratio(run.wall_seconds, reference.total_seconds),
        # no ratio where the lean job had no commit events to read (start-up, snapshots only)
        "whole_run_to_lean": _ratio(
            run.wall_seconds, lean.seconds if lean and lean.counts["commits"] else None
        ),
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


def judged_ratio(run: dict) -> float | None:
    """What a repeated case is ranked by: the whole run over the lean job, else over the oracle."""
    return run.get("whole_run_to_lean") or run.get("whole_run_to_oracle")


def repeated(runs: list[dict]) -> dict:
    """One case's figures from its runs (each a pipeline run, then DuckDB's): the run whose
    whole-run ratio (``judged_ratio``) is the median (of an even count, the higher middle one), with
    every run's times and ratio in ``repeats``; the case agrees only if every run did.

    On a machine whose speed drifts by 10-20% from one hour to the next, one pair of runs can
    land on either side of a target; the median of several alternated pairs is the figure to
    judge.
    """
    if len(runs) == 1:
        return runs[0]
    ratios = [judged_ratio(run) for run in runs]
    if None in ratios:
        raise ValueError("every repeated run needs a DuckDB time to rank it by")
    ranked = sorted(range(len(runs)), key=lambda n: ratios[n])
    median = runs[ranked[len(runs) // 2]]
    mismatches = [
        f"run {n}: {line}" for n, run in enumerate(runs, 1) for line in run["comparison"]["mismatches"]
    ]
    return {
        **median,
        "comparison": {
            **median["comparison"],
            "agrees": all(run["comparison"]["agrees"] for run in runs),
            "mismatches": mismatches,
        },
        "median_of_runs": len(runs),
        "median_run": ranked[len(runs) // 2] + 1,
        "repeats": [
            {
                "run": n,
                "pipeline_seconds": run["pipeline"]["seconds"],
                "wall_seconds": run["pipeline"].get("wall_seconds"),
                "lean_seconds": (run.get("lean") or {}).get("seconds"),
                "whole_run_to_lean": run.get("whole_run_to_lean"),
                "whole_run_to_oracle": run.get("whole_run_to_oracle"),
                "ingest_through_marts_seconds": sum(
                    s["seconds"]
                    for stage, s in run["pipeline"]["stages"].items()
                    if stage in ("ingest", "replay", "marts")
                ),
                "stage_seconds": {stage: s["seconds"] for stage, s in run["pipeline"]["stages"].items()},
                "duckdb_seconds": run["duckdb"]["seconds"],
                "ingest_through_marts_to_duckdb": run["ingest_through_marts_to_duckdb"],
                "agrees": run["comparison"]["agrees"],
                "load_average": run.get("load_average"),
            }
            for n, run in enumerate(runs, 1)
        ],
    }


def _cpu_ratio(run: dict, duckdb_cpu: float) -> float | None:
    """CPU seconds of the pipeline (Python driver, JVM, Python workers) over DuckDB's: a measure a loaded machine blurs less."""
    if run["driver_cpu_seconds"] is None or duckdb_cpu <= 0:
        return None
    return (run["driver_cpu_seconds"] + run["workers_cpu_seconds"]) / duckdb_cpu


def _cpu_seconds(case: dict) -> float | None:
    run = case["pipeline"].get("run") or {}
    if run.get("driver_cpu_seconds") is None:
        return None
    return run["driver_cpu_seconds"] + (run.get("workers_cpu_seconds") or 0.0)


def _stage_seconds(case: dict) -> dict[str, float]:
    return {stage: s["seconds"] for stage, s in case["pipeline"]["stages"].items()}


def linearity(cases: list[dict]) -> dict | None:
    """Largest over smallest commits case, pipeline time minus the start-up run's (None with fewer than two)."""
    commits = sorted((c for c in cases if c["kind"] == "commits"), key=lambda c: c["inputs"]["commit_events"])
    if len(commits) < 2:
        return None
    small, large = commits[0], commits[-1]
    startup = next((c for c in cases if c["kind"] == "startup"), None)
    base = _stage_seconds(startup) if startup else {}
    fixed = sum(base.values())
    size_ratio = large["requested_events"] / small["requested_events"]
    per_stage = {
        stage: (seconds - base.get(stage, 0.0)) / (_stage_seconds(small)[stage] - base.get(stage, 0.0))
        for stage, seconds in _stage_seconds(large).items()
        if _stage_seconds(small).get(stage, 0.0) - base.get(stage, 0.0) > 0
    }
    cpu = {c["case"]: _cpu_seconds(c) for c in (small, large, startup) if c}
    cpu_fixed = cpu.get(startup["case"], 0.0) if startup else 0.0
    cpu_ratio = None
    if None not in (cpu[small["case"]], cpu[large["case"]], cpu_fixed) and cpu[small["case"]] - cpu_fixed > 0:
        cpu_ratio = (cpu[large["case"]] - cpu_fixed) / (cpu[small["case"]] - cpu_fixed)
    return {
        "small_case": small["case"], "large_case": large["case"], "startup_seconds": fixed,
        "cpu_ratio_minus_startup": cpu_ratio,
        "size_ratio": size_ratio, "events_ratio": large["inputs"]["commit_events"] / small["inputs"]["commit_events"],
        "time_ratio": large["pipeline"]["seconds"] / small["pipeline"]["seconds"],
        "time_ratio_minus_startup": (large["pipeline"]["seconds"] - fixed) / (small["pipeline"]["seconds"] - fixed),
        "per_stage_minus_startup": per_stage, "target_max": TARGETS["linearity_slack"] * size_ratio,
    }  # fmt: skip


def summarize(cases: list[dict], settings: Settings, isolated: bool) -> dict:
    """The whole report: machine, settings, cases, and the figures the targets judge."""
    commits = [c for c in cases if c["kind"] == "commits"]
    largest = max(commits, key=lambda c: c["inputs"]["commit_events"]) if commits else None
    archive = built_archive()  # the class archive the pipeline's JVMs mapped (jobs.runtime.class_archive)
    return {
        "created_at": datetime.now(UTC).isoformat(),
        "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg(), "memory_mib": _memory_mib()},
        "settings": {
            "spark": json.loads(settings.spark.model_dump_json()),
            "isolated_processes": isolated,
            "jvm_class_archive": str(archive) if archive else None,
        },
        "stages_timed": list(STAGE_ROWS),
        "audit_timed": True,
        "targets": TARGETS,
        "cases": cases,
        "duckdb_ratio_largest": largest["ingest_through_marts_to_duckdb"] if largest else None,
        # every run's ratio when the case was repeated (its figures are the median run's)
        "duckdb_ratios_largest": [
            r["ingest_through_marts_to_duckdb"] for r in largest.get("repeats", [largest])
        ]
        if largest
        else [],
        "whole_run_to_lean_largest": _largest_lean(cases),
        "linearity": linearity(cases),
        "driver_peak_mib": {c["case"]: c["pipeline"]["run"]["driver_peak_mib"] for c in cases},
        "incremental": {c["case"]: c["incremental"] for c in cases if c["kind"] == "incremental"},
        "agrees": all(c["comparison"]["agrees"] for c in cases),
    }


def _largest_lean(cases: list[dict]) -> dict | None:
    """The largest commits-only case's whole run over the lean job, with every run's seconds."""
    only = [c for c in cases if c["kind"] == "commits-only"]
    if not only:
        return None
    largest = max(only, key=lambda c: c["inputs"]["commit_events"])
    runs = largest.get("repeats") or [{
        "wall_seconds": largest["pipeline"]["wall_seconds"], "lean_seconds": (largest["lean"] or {}).get("seconds"),
        "whole_run_to_lean": largest["whole_run_to_lean"], "load_average": largest.get("load_average"),
    }]  # fmt: skip
    keys = ("wall_seconds", "lean_seconds", "whole_run_to_lean", "load_average")
    return {
        "case": largest["case"],
        "ratio": largest["whole_run_to_lean"],
        "runs": [{k: r.get(k) for k in keys} for r in runs],
    }


def _memory_mib() -> float | None:
    try:
        with open("/proc/meminfo") as handle:
            return int(handle.readline().split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        return None


def write_report(report: dict, path: Path) -> None:
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
