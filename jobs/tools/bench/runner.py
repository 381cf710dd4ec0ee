"""``offsetlake bench``: each case's inputs, a timed pipeline run, the DuckDB reference, the comparison.

Cases, each in ``<workdir>/<case>/``:

- ``startup``: an empty landing directory; its stage times are the fixed cost of a run;
- ``commits-<n>``: ``SimulationSpec.for_commit_events(n)`` (a day or so of one cluster);
- ``commits-only-<n>``: ``n`` plain JSON-lines commit events and nothing else
  (:mod:`jobs.tools.bench.commits_only`), for ``--case commits-only``;
- ``busy-broker-day``: ``SimulationSpec.busy_broker_day`` (288 snapshots of 2,000 keys x 8 queues);
- ``incremental-<n>``: the ``commits-<n>`` inputs split into history and a last interval, and
  the scheduled run over that interval timed on the history's lake (:mod:`jobs.tools.bench.incremental`).

Inputs are generated into ``landing/`` once and reused while the spec is unchanged. Each run
writes a fresh ``lake/`` with ``offsetlake run`` (every stage); DuckDB computes the same tables
into ``reference.duckdb`` (the oracle) and the lean DuckDB job writes its Parquet files into
``lean/`` (:mod:`jobs.tools.bench.lean`); in the commits-only case the same lean job written for
Spark writes ``lean-spark/`` (:mod:`jobs.tools.bench.lean_spark`). They are deleted after a case that
agrees row for row, kept for inspection after one that does not.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from jobs.cli.main import EXIT_FAILED, EXIT_OK
from jobs.runtime.session import launched_conf
from jobs.sources import patterns
from jobs.tools.bench import commits_only
from jobs.tools.bench.compare import compare_lake
from jobs.tools.bench.figures import case_figures, stage_rows
from jobs.tools.bench.incremental import can_split, incremental_figures, link_files, split_landing
from jobs.tools.bench.lean_run import run_lean
from jobs.tools.bench.memory import TreeSampler
from jobs.tools.bench.oracle.quality import compare_checks
from jobs.tools.bench.oracle.reference import compute_reference
from jobs.tools.bench.pipeline_run import Interval, PipelineRun, run_measured, run_whole
from jobs.tools.bench.printout import print_case, print_repeats, print_summary
from jobs.tools.bench.report import repeated, summarize, write_report
from jobs.tools.bench.spark_profile import event_log_conf, profile_stages
from jobs.tools.simulator import MANIFEST_NAME, SimulationManifest, SimulationSpec, simulate
from schemas.config import ConfigError, Settings

START = datetime(2026, 11, 21, tzinfo=UTC)
# the kinds ``repeat`` runs several times (start-up and incremental runs measure fixed costs and growth)
REPEATED_KINDS = ("commits", "commits-only", "snapshots")


@dataclass(frozen=True)
class BenchCase:
    name: str
    kind: str  # startup | commits | commits-only | snapshots | incremental
    spec: SimulationSpec | None  # None: an empty landing directory
    requested_events: int | None = None
    inputs_of: str | None = None  # the case whose generated inputs this one reuses (None: its own)


def default_cases(sizes: list[int], skip_snapshots: bool, skip_incremental: bool = False) -> list[BenchCase]:
    """The start-up run, one case per commit-event count (ascending), the incremental case on the
    inputs of the smallest count that spans two hours or more, then the busy broker's day."""
    cases = [BenchCase("startup", "startup", None)]
    cases += [
        BenchCase(f"commits-{n}", "commits", SimulationSpec.for_commit_events(n, START), n)
        for n in sorted(sizes)
    ]
    splittable = [c for c in cases if c.kind == "commits" and can_split(c.spec.start, c.spec.end)]
    if splittable and not skip_incremental:
        source = splittable[0]
        cases.append(
            BenchCase(
                f"incremental-{source.requested_events}",
                "incremental",
                source.spec,
                source.requested_events,
                source.name,
            )
        )
    if not skip_snapshots:
        cases.append(BenchCase("busy-broker-day", "snapshots", SimulationSpec.busy_broker_day(START)))
    return cases


def commits_only_cases(sizes: list[int]) -> list[BenchCase]:
    """One commits-only case per commit-event count, ascending (``--case commits-only``)."""
    return [BenchCase(f"commits-only-{n}", "commits-only", None, n) for n in sorted(sizes)]


def _directory_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def prepare_landing(case: BenchCase, landing: Path) -> dict:
    """Generate the case's inputs unless ``landing`` already holds them for the same spec."""
    manifest_path = landing / MANIFEST_NAME
    if case.kind == "commits-only":
        return commits_only.generate(case.requested_events, START, landing)
    if case.spec is None:
        shutil.rmtree(landing, ignore_errors=True)
        landing.mkdir(parents=True)
        return {"reused": False, "generate_seconds": 0.0, "landing_bytes": 0}
    reused = (
        manifest_path.is_file()
        and SimulationManifest.model_validate_json(manifest_path.read_bytes()).spec == case.spec
    )
    began = time.perf_counter()
    if not reused:
        shutil.rmtree(landing, ignore_errors=True)
        simulate(case.spec, landing)
    manifest = SimulationManifest.model_validate_json(manifest_path.read_bytes())
    return {
        "reused": reused,
        "generate_seconds": 0.0 if reused else time.perf_counter() - began,
        "landing_bytes": _directory_bytes(landing),
        "commit_events": manifest.commit_events,
        "commit_files": manifest.commit_files,
        "snapshot_files": manifest.snapshot_files + manifest.snapshot_bak_files,
        "progress_files": manifest.progress_files,
        "log_files": manifest.broker_log_files + manifest.client_log_files,
        "incidents": len(manifest.incidents),
    }


@dataclass(frozen=True)
class TimedRun:
    """One timed pipeline run: its timings, its memory samples, Spark's time per call site, the machine's load.

    ``run.wall_seconds`` is the whole run's; ``run.stage_seconds`` has every stage of it."""

    run: PipelineRun
    sampler: TreeSampler
    profile: dict
    load_before: float  # 1-minute load average before and after the run: other work slows every figure
    load_after: float


def _run_pipeline(
    settings: Settings,
    landing: Path,
    lake: Path,
    run_dir: Path,
    isolate: bool,
    interval: Interval | None = None,
) -> TimedRun:
    """One run over ``interval``: ``offsetlake run`` in a child process when isolated (its log, settings
    and Spark event log in ``run_dir``), else the same stages in this process."""
    interval = interval or Interval()
    load_before = os.getloadavg()[0]
    if isolate:
        events = run_dir / "spark-events"
        shutil.rmtree(events, ignore_errors=True)
        run_dir.mkdir(parents=True, exist_ok=True)
        spark = settings.spark.model_copy(update={"conf": {**settings.spark.conf, **event_log_conf(events)}})
        run, sampler = run_whole(
            settings.model_copy(update={"spark": spark}), landing, lake, run_dir, interval
        )
        profile = profile_stages(events, run.stage_spans())
    else:
        with TreeSampler(os.getpid()) as sampler:
            run = run_measured(settings, landing, lake, interval)
        profile = {}
    return TimedRun(run, sampler, profile, load_before, os.getloadavg()[0])


def run_case(
    case: BenchCase, settings: Settings, workdir: Path, *, isolate: bool, keep_outputs: bool
) -> dict:
    """Every measurement of one case (see the module docstring); returns its figures."""
    if case.kind == "incremental":
        return run_incremental_case(case, settings, workdir, isolate=isolate, keep_outputs=keep_outputs)
    case_dir = (workdir / case.name).resolve()
    landing, lake = case_dir / "landing", case_dir / "lake"
    inputs = prepare_landing(case, landing)
    shutil.rmtree(lake, ignore_errors=True)
    timed = _run_pipeline(settings, landing, lake, case_dir, isolate)
    lean = run_lean(landing, case_dir / "lean", lake)
    # the case the whole run's ratio to the lean job is judged on: how much of that ratio is Spark's own
    lean_spark = (
        run_lean(landing, case_dir / "lean-spark", lake, "spark", lean_spark_options(settings))
        if case.kind == "commits-only"
        else None
    )
    return _judged(
        case,
        settings,
        inputs,
        landing,
        lake,
        timed,
        keep_outputs=keep_outputs,
        lean=lean,
        lean_spark=lean_spark,
    )


def lean_spark_options(settings: Settings) -> tuple[str, ...]:
    """The lean Spark job's master and driver memory: those OffsetLake's run gets from ``settings``
    (jobs.runtime.session.launched_conf)."""
    launched = launched_conf(settings.spark)
    memory = launched.get("spark.driver.memory")
    return ("--master", launched["spark.master"]) + (("--driver-memory", memory) if memory else ())


def run_incremental_case(
    case: BenchCase, settings: Settings, workdir: Path, *, isolate: bool, keep_outputs: bool
) -> dict:
    """History, then the increment on its lake, then the interval alone (see :mod:`jobs.tools.bench.incremental`)."""
    case_dir = (workdir / case.name).resolve()
    source = (workdir / case.inputs_of / "landing").resolve() if case.inputs_of else case_dir / "inputs"
    inputs = prepare_landing(case, source)
    split = split_landing(source, patterns(settings), case.spec.start, case.spec.end)
    landing, lake = case_dir / "landing", case_dir / "lake"
    alone_landing, alone_lake = case_dir / "interval-landing", case_dir / "interval-lake"
    for path in (landing, lake, alone_landing, alone_lake):
        shutil.rmtree(path, ignore_errors=True)
    link_files(split.history, landing)
    history = _run_pipeline(
        settings, landing, lake, case_dir / "history", isolate, Interval(None, split.split, "bench-history")
    )
    history_rows = stage_rows(lake, published={})  # what the lake holds (publish counts a run's own rows)
    link_files(split.interval, landing)
    link_files(split.interval, alone_landing)
    interval = Interval(split.split, split.end, "bench-increment")
    increment = _run_pipeline(settings, landing, lake, case_dir / "increment", isolate, interval)
    alone = _run_pipeline(settings, alone_landing, alone_lake, case_dir / "interval-alone", isolate, interval)
    figures = _judged(
        case, settings, inputs, landing, lake, increment, keep_outputs=keep_outputs, rows_before=history_rows
    )
    # DuckDB computed every file, the increment only its interval: no speed ratio between them
    figures.update(
        offsetlake_to_duckdb=None, ingest_through_marts_to_duckdb=None, offsetlake_to_duckdb_cpu=None
    )
    figures["incremental"] = incremental_figures(
        split, history.run, increment.run, alone.run, stage_rows(alone_lake, alone.run.published)
    )
    if not keep_outputs:
        shutil.rmtree(alone_lake, ignore_errors=True)
    return figures


def _judged(
    case,
    settings,
    inputs,
    landing,
    lake,
    timed: TimedRun,
    *,
    keep_outputs: bool,
    rows_before=None,
    lean=None,
    lean_spark=None,
) -> dict:
    """The DuckDB reference over ``landing``, compared row for row with ``lake``, and the case's figures.

    ``rows_before``: each stage's counted rows in ``lake`` before the timed run (it added the rest);
    ``lean``, ``lean_spark``: the lean jobs' runs (:func:`jobs.tools.bench.lean_run.run_lean`), None when not run.
    """
    case_dir = lake.parent
    database = case_dir / "reference.duckdb"
    reference = compute_reference(landing, settings, database)
    comparison = compare_lake(reference.con, lake)
    began = time.perf_counter()
    comparison.append(compare_checks(reference.con, lake, settings))  # the audit's figures, computed again
    reference.timings["quality"] = time.perf_counter() - began
    figures = case_figures(case, inputs, timed, lake, reference, comparison, rows_before, lean, lean_spark)
    figures["load_average"] = {
        "before": timed.load_before,
        "after_pipeline": timed.load_after,
        "after_duckdb": os.getloadavg()[0],
    }
    reference.con.close()
    if figures["comparison"]["agrees"] and not keep_outputs:
        shutil.rmtree(lake, ignore_errors=True)
        shutil.rmtree(case_dir / "duckdb-spill", ignore_errors=True)
        database.unlink(missing_ok=True)
        shutil.rmtree(case_dir / "lean", ignore_errors=True)
        shutil.rmtree(case_dir / "lean-spark", ignore_errors=True)
    return figures


def bench(
    cases: list[BenchCase],
    settings: Settings,
    workdir: Path,
    *,
    isolate: bool = True,
    keep_outputs: bool = False,
    repeat: int = 1,
):
    """Run ``cases`` in order, printing each; returns (report, path of its JSON, exit code).

    With ``repeat`` above 1, each commits and snapshots case runs that many times, the pipeline
    then DuckDB each time, on the same inputs and a fresh lake; the case's figures are its
    median run's (:func:`jobs.tools.bench.report.repeated`).

    The JSON (``<workdir>/bench-<timestamp>.json``) is rewritten after every run, so a long
    bench that is interrupted keeps the figures measured so far.
    """
    if repeat < 1:
        raise ConfigError(f"--repeat takes a number of runs of at least 1; got {repeat}")
    workdir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = workdir / f"bench-{stamp}.json"
    figures: list[dict] = []
    for case in cases:
        runs: list[dict] = []
        count = repeat if case.kind in REPEATED_KINDS else 1
        for n in range(1, count + 1):
            which = f" (run {n} of {count})" if count > 1 else ""
            print(
                f"\n== {case.name}{which}: generating inputs, running the pipeline, then DuckDB ...",
                flush=True,
            )
            runs.append(run_case(case, settings, workdir, isolate=isolate, keep_outputs=keep_outputs))
            print_case(runs[-1])
            write_report(
                summarize([*figures, repeated(runs)], settings, isolate), path
            )  # an interrupted case keeps its runs
        figures.append(repeated(runs))
        if count > 1:
            print_repeats(figures[-1])
    report = summarize(figures, settings, isolate)
    print_summary(report, path)
    mismatches = [line for f in figures for line in f["comparison"]["mismatches"]]
    if mismatches:
        print("\nFAILED: OffsetLake and DuckDB disagree:\n" + "\n".join(mismatches))
        return report, path, EXIT_FAILED
    return report, path, EXIT_OK
