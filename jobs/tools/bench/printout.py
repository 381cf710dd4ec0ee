"""What ``offsetlake bench`` prints: one block per case, then the ratios judged against the targets."""

from __future__ import annotations

from pathlib import Path

from jobs.tools.bench.compare import CHECKS_COMPARED


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
        f"   machine load (1-min average) {_number(load.get('before'), 1)} before, "
        f"{_number(load.get('after_pipeline'), 1)} after the run"
    )
    print(
        f"   {'offsetlake run':<16} {'wall s':>8} {'rows':>12} {'rows/s':>10} {'driver peak MiB':>16} {'(python + JVM)':>16} {'CPU s':>7}  rows counted"
    )
    print(f"   {'start-up':<16} {pipeline['session_start_seconds']:>8.1f}  (launch to the first stage)")
    for stage, s in pipeline["stages"].items():
        parts = f"{_number(s['python_peak_mib'])} + {_number(s['jvm_peak_mib'])}"
        print(
            f"   {stage:<16} {s['seconds']:>8.1f} {s['rows']:>12,} {_number(s['rows_per_second']):>10} "
            f"{_number(s['driver_peak_mib']):>16} {parts:>16} {_number(s['driver_cpu_seconds'], 1):>7}  {s['rows_counted']}"
        )
    run = pipeline["run"]
    print(
        f"   {'summary, exit':<16} {pipeline['summary_seconds']:>8.1f}  (the run summary, then the process ends)"
    )
    print(f"   {'whole run':<16} {_number(pipeline.get('wall_seconds'), 1):>8} {'':>12} {'':>10} {_number(run['driver_peak_mib']):>16} "
          f"{'':>16} {_number(run['driver_cpu_seconds'], 1):>7}  (Python workers: peak {_number(run['workers_peak_mib'])} MiB "
          f"in up to {_number(run.get('workers_max'))} processes, {_number(run['workers_cpu_seconds'], 1)} CPU s)")  # fmt: skip
    steps = ", ".join(f"{k} {v:.1f}s" for k, v in duckdb["steps"].items())
    if "incremental" in case:
        _print_incremental(case["incremental"])
        print(
            f"   DuckDB over every file (history and interval, a cross-check of the lake): {steps} = {duckdb['seconds']:.1f}s"
        )
    else:
        print(
            f"   {'oracle DuckDB':<16} {duckdb['seconds']:>8.1f}  ({steps}; {duckdb['cpu_seconds']:.1f} CPU s): whole run / oracle = "
            f"{_number(case.get('whole_run_to_oracle'), 2)}x, ingest through marts / oracle = "
            f"{_number(case['ingest_through_marts_to_duckdb'], 2)}x, CPU {_number(case['offsetlake_to_duckdb_cpu'], 1)}x"
        )
        print_lean(case)
    for stage, profile in pipeline["where_time_goes"].items():
        top = "; ".join(f"{t['call_site']} {t['seconds']:.1f}s" for t in profile["top_call_sites"][:3])
        print(
            f"   {stage}: Spark {profile['spark_seconds']:.1f}s, outside Spark {profile['outside_spark_seconds']:.1f}s; top: {top}"
        )
    comparison = case["comparison"]
    if comparison["agrees"]:
        tables = [r for r in comparison["results"] if r["table"] != CHECKS_COMPARED]
        checks = sum(r["lake_rows"] for r in comparison["results"] if r["table"] == CHECKS_COMPARED)
        rows = sum(r["lake_rows"] for r in tables)
        print(f"   Agreement: {len(tables)} tables equal row for row ({rows:,} rows); the audit's "
              f"{checks} expectation figures (rows checked, failing rows) equal DuckDB's")  # fmt: skip
    else:
        print("\n".join("   " + line for line in comparison["mismatches"]))


def _steps(lean: dict) -> str:
    """A lean job's steps as it timed them (none in a report written before they were)."""
    steps = lean.get("steps") or {}
    return "; " + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in steps.items()) if steps else ""


def print_lean(case: dict) -> None:
    lean = case.get("lean")
    if not lean:
        return
    r = lean.get("regressions") or {}
    agreement = (
        f"regressions {r['lean_rows']:,} lean / {r['lake_rows']:,} OffsetLake, "
        + (
            "equal"
            if r["agrees"]
            else f"{r['only_in_lean']:,} only lean, {r['only_in_lake']:,} only OffsetLake"
        )
        if r
        else "no commit events"
    )
    judged = "" if case["kind"] == "commits-only" else " (commits only: its regressions are not judged here)"
    print(
        f"   {'lean DuckDB job':<16} {lean['seconds']:>8.1f}  (a process{_steps(lean)}): whole run / lean = "
        f"{_number(case.get('whole_run_to_lean'), 2)}x; {agreement}{judged}"
    )
    spark = case.get("lean_spark")
    if spark:
        r = spark.get("regressions") or {}
        agreement = (
            ("regressions equal" if r["agrees"] else f"{r['only_in_lean']:,} regressions only lean, {r['only_in_lake']:,} only OffsetLake")
            if r
            else "no commit events"
        )  # fmt: skip
        print(
            f"   {'lean Spark job':<16} {spark['seconds']:>8.1f}  (the same job on Spark, a process{_steps(spark)}): whole run / lean Spark = "
            f"{_number(case.get('whole_run_to_lean_spark'), 2)}x, lean Spark / lean DuckDB = "
            f"{_number(case.get('lean_spark_to_lean'), 2)}x; {agreement}"
        )  # fmt: skip


def print_repeats(case: dict) -> None:
    """The runs of a repeated case, and which one its figures are."""
    runs = "; ".join(
        f"run {r['run']}: {_number(r.get('wall_seconds'), 1)}s / lean {_number(r.get('lean_seconds'), 1)}s "
        f"= {_number(r.get('whole_run_to_lean'), 2)}x"
        + (
            f" (lean Spark {_number(r['lean_spark_seconds'], 1)}s = {_number(r.get('lean_spark_to_lean'), 2)}x lean)"
            if r.get("lean_spark_seconds")
            else ""
        )
        + f", / oracle {r['duckdb_seconds']:.1f}s = {_number(r.get('whole_run_to_oracle'), 2)}x"
        for r in case["repeats"]
    )
    print(f"-- {case['case']}, {case['median_of_runs']} runs (whole run vs DuckDB): {runs}")
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
        f"({stages['interval_alone']}) [ingest/replay/marts/audit/publish]"
    )
    print(
        f"   increment / interval alone = {_number(figures['increment_to_interval_alone'], 2)}x, "
        f"increment / history = {_number(figures['increment_to_history'], 2)}x"
    )


def print_summary(report: dict, path: Path) -> None:
    print("\n== Figures against the targets")
    lean = report.get("whole_run_to_lean_largest")
    if lean:
        runs = ", ".join(_number(r["whole_run_to_lean"], 2) for r in lean["runs"])
        print(
            f"   largest commits-only case ({lean['case']}), the whole run vs the lean DuckDB job: "
            f"{_number(lean['ratio'], 2)}x (runs: {runs}; target <= {report['targets']['lean_ratio_max']}x)"
        )
        if lean.get("lean_spark_to_lean") is not None:
            spark = ", ".join(_number(r.get("lean_spark_to_lean"), 2) for r in lean["runs"])
            print(
                f"   the same lean job on Spark vs on DuckDB, in the run judged (the factor of its ratio that is Spark's own): "
                f"{_number(lean['lean_spark_to_lean'], 2)}x (runs: {spark})"
            )
    ratio = report["duckdb_ratio_largest"]
    if ratio is not None:
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
