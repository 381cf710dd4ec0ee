"""What ``offsetlake bench`` prints: one block per case, then the ratios judged against the targets."""

from __future__ import annotations

from pathlib import Path


def _number(value, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_case(case: dict) -> None:
    inputs, pipeline, duckdb = case["inputs"], case["pipeline"], case["duckdb"]
    described = (
        f"{inputs.get('commit_events', 0):,} commit events, {inputs.get('snapshot_files', 0):,} snapshot files, "
        f"{inputs.get('progress_files', 0):,} admin outputs, {inputs['landing_bytes'] / (1 << 20):,.0f} MiB"
    )
    print(f"-- {case['case']}: {described} ({'inputs reused' if inputs['reused'] else 'inputs generated'})")
    load = case.get("load_average", {})
    print(
        f"   Spark session start-up {pipeline['session_start_seconds']:.1f}s (not in the stage times); machine load "
        f"(1-min average) {_number(load.get('before'), 1)} before, {_number(load.get('after_pipeline'), 1)} after the run"
    )
    print(
        f"   {'stage':<8} {'wall s':>8} {'rows':>12} {'rows/s':>10} {'driver peak MiB':>16} {'(python + JVM)':>16} {'CPU s':>7}  rows counted"
    )
    for stage, s in pipeline["stages"].items():
        parts = f"{_number(s['python_peak_mib'])} + {_number(s['jvm_peak_mib'])}"
        print(
            f"   {stage:<8} {s['seconds']:>8.1f} {s['rows']:>12,} {_number(s['rows_per_second']):>10} "
            f"{_number(s['driver_peak_mib']):>16} {parts:>16} {_number(s['driver_cpu_seconds'], 1):>7}  {s['rows_counted']}"
        )
    run = pipeline["run"]
    print(f"   {'total':<8} {pipeline['seconds']:>8.1f} {'':>12} {'':>10} {_number(run['driver_peak_mib']):>16} "
          f"{'':>16} {_number(run['driver_cpu_seconds'], 1):>7}  (+ {pipeline['summary_seconds']:.1f}s run summary, "
          f"Python workers: peak {_number(run['workers_peak_mib'])} MiB in up to {_number(run.get('workers_max'))} processes, "
          f"{_number(run['workers_cpu_seconds'], 1)} CPU s)")  # fmt: skip
    steps = ", ".join(f"{k} {v:.1f}s" for k, v in duckdb["steps"].items())
    if "incremental" in case:
        _print_incremental(case["incremental"])
        print(
            f"   DuckDB over every file (history and interval, a cross-check of the lake): {steps} = {duckdb['seconds']:.1f}s"
        )
    else:
        print(
            f"   DuckDB: {steps} = {duckdb['seconds']:.1f}s ({duckdb['cpu_seconds']:.1f} CPU s);  OffsetLake / DuckDB = "
            f"{_number(case['offsetlake_to_duckdb'], 1)}x wall ({_number(case['ingest_through_marts_to_duckdb'], 1)}x ingest through marts), "
            f"{_number(case['offsetlake_to_duckdb_cpu'], 1)}x CPU"
        )
    for stage, profile in pipeline["where_time_goes"].items():
        top = "; ".join(f"{t['call_site']} {t['seconds']:.1f}s" for t in profile["top_call_sites"][:3])
        print(
            f"   {stage}: Spark {profile['spark_seconds']:.1f}s, outside Spark {profile['outside_spark_seconds']:.1f}s; top: {top}"
        )
    comparison = case["comparison"]
    if comparison["agrees"]:
        rows = sum(r["lake_rows"] for r in comparison["results"])
        print(f"   Agreement: {len(comparison['results'])} tables equal row for row ({rows:,} rows)")
    else:
        print("\n".join("   " + line for line in comparison["mismatches"]))


def print_repeats(case: dict) -> None:
    """The runs of a repeated case, and which one its figures are."""
    runs = "; ".join(
        f"run {r['run']}: {r['ingest_through_marts_seconds']:.1f}s / DuckDB {r['duckdb_seconds']:.1f}s "
        f"= {_number(r['ingest_through_marts_to_duckdb'], 2)}x"
        for r in case["repeats"]
    )
    print(f"-- {case['case']}, {case['median_of_runs']} runs (ingest through marts vs DuckDB): {runs}")
    even = " (of an even count, the higher middle one)" if case["median_of_runs"] % 2 == 0 else ""
    print(f"   the case is judged by run {case['median_run']}'s figures: the median ratio{even}")


def _print_incremental(figures: dict) -> None:
    runs = {name: figures[name] for name in ("history", "increment", "interval_alone")}
    stages = {name: "/".join(f"{s:.1f}" for s in run["stages"].values()) for name, run in runs.items()}
    print(
        f"   The stages above are the increment: a run from {figures['split_at']} to {figures['end']} "
        f"({figures['interval_files']:,} new files) on the lake of a run up to {figures['split_at']} ({figures['history_files']:,} files)"
    )
    print(
        f"   history {runs['history']['seconds']:.1f}s ({stages['history']}), increment {runs['increment']['seconds']:.1f}s "
        f"({stages['increment']}), the interval alone on a fresh lake {runs['interval_alone']['seconds']:.1f}s "
        f"({stages['interval_alone']}) [ingest/replay/marts/publish]"
    )
    print(
        f"   increment / interval alone = {_number(figures['increment_to_interval_alone'], 2)}x, "
        f"increment / history = {_number(figures['increment_to_history'], 2)}x"
    )


def print_summary(report: dict, path: Path) -> None:
    print("\n== Figures against the targets (audit stage not timed)")
    ratio = report["duckdb_ratio_largest"]
    ratios = report.get("duckdb_ratios_largest") or []
    runs = (
        f" (median of {len(ratios)} runs: {', '.join(_number(r, 2) for r in ratios)})"
        if len(ratios) > 1
        else ""
    )
    print(
        f"   largest commits case, ingest through marts vs DuckDB: {_number(ratio, 2)}x{runs} "
        f"(target <= {report['targets']['duckdb_ratio_max']}x)"
    )
    lin = report["linearity"]
    if lin:
        print(
            f"   linearity {lin['large_case']} / {lin['small_case']}: {lin['time_ratio_minus_startup']:.2f}x minus start-up "
            f"({lin['startup_seconds']:.1f}s), {lin['time_ratio']:.2f}x raw, {_number(lin['cpu_ratio_minus_startup'], 2)}x in CPU "
            f"seconds minus start-up, for {lin['events_ratio']:.2f}x the events "
            f"(target <= {lin['target_max']:.1f}x)"
        )
    peaks = ", ".join(f"{case} {_number(mib)} MiB" for case, mib in report["driver_peak_mib"].items())
    print(f"   driver peak memory (Python + JVM): {peaks} (target: flat as data grows)")
    for case, figures in report["incremental"].items():
        print(
            f"   {case}: the last interval's run on the history's lake {figures['increment']['seconds']:.1f}s = "
            f"{_number(figures['increment_to_interval_alone'], 2)}x the interval alone, "
            f"{_number(figures['increment_to_history'], 2)}x the history's run (target: about 1x the interval alone)"
        )
    print(f"   row-for-row agreement with DuckDB: {'yes' if report['agrees'] else 'NO'}")
    print(f"   figures: {path}")
