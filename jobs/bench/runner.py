"""``offsetlake bench``: each case's inputs, a timed pipeline run, the DuckDB reference, the comparison.

Cases, each in ``<workdir>/<case>/``:

- ``startup``: an empty landing directory; its stage times are the fixed cost of a run;
- ``commits-<n>``: ``SimulationSpec.for_commit_events(n)`` (a day or so of one cluster);
- ``busy-broker-day``: ``SimulationSpec.busy_broker_day`` (288 snapshots of 2,000 keys x 8 queues).

Inputs are generated into ``landing/`` once and reused while the spec is unchanged. Each run
writes a fresh ``lake/``; DuckDB computes the same tables into ``reference.duckdb``; both
are deleted after a case that agrees row for row, kept for inspection after one that does not.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from jobs.bench.compare import compare_lake
from jobs.bench.duckdb_reference import compute_reference
from jobs.bench.memory import TreeSampler
from jobs.bench.pipeline_run import run_isolated, run_measured
from jobs.bench.printout import print_case, print_summary
from jobs.bench.report import case_figures, summarize, write_report
from jobs.bench.spark_profile import event_log_conf, profile_stages
from jobs.cli import EXIT_FAILED, EXIT_OK
from jobs.simulator import MANIFEST_NAME, SimulationManifest, SimulationSpec, simulate
from schemas.config import Settings

START = datetime(2026, 11, 21, tzinfo=timezone.utc)


@dataclass(frozen=True)
class BenchCase:
    name: str
    kind: str  # startup | commits | snapshots
    spec: SimulationSpec | None  # None: an empty landing directory
    requested_events: int | None = None


def default_cases(sizes: list[int], skip_snapshots: bool) -> list[BenchCase]:
    """The start-up run, one case per commit-event count (ascending), then the busy broker's day."""
    cases = [BenchCase("startup", "startup", None)]
    cases += [BenchCase(f"commits-{n}", "commits", SimulationSpec.for_commit_events(n, START), n) for n in sorted(sizes)]
    if not skip_snapshots:
        cases.append(BenchCase("busy-broker-day", "snapshots", SimulationSpec.busy_broker_day(START)))
    return cases


def _directory_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def prepare_landing(case: BenchCase, landing: Path) -> dict:
    """Generate the case's inputs unless ``landing`` already holds them for the same spec."""
    manifest_path = landing / MANIFEST_NAME
    if case.spec is None:
        shutil.rmtree(landing, ignore_errors=True)
        landing.mkdir(parents=True)
        return {"reused": False, "generate_seconds": 0.0, "landing_bytes": 0}
    reused = manifest_path.is_file() and SimulationManifest.model_validate_json(manifest_path.read_bytes()).spec == case.spec
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


def _run_pipeline(settings: Settings, landing: Path, lake: Path, case_dir: Path, isolate: bool):
    if isolate:
        events = case_dir / "spark-events"
        shutil.rmtree(events, ignore_errors=True)
        spark = settings.spark.model_copy(update={"conf": {**settings.spark.conf, **event_log_conf(events)}})
        run, sampler = run_isolated(settings.model_copy(update={"spark": spark}), landing, lake, case_dir / "pipeline.log")
        return run, sampler, profile_stages(events, run.stage_spans())
    with TreeSampler(os.getpid()) as sampler:
        run = run_measured(settings, landing, lake)
    return run, sampler, {}


def run_case(case: BenchCase, settings: Settings, workdir: Path, *, isolate: bool, keep_outputs: bool) -> dict:
    """Every measurement of one case (see the module docstring); returns its figures."""
    case_dir = (workdir / case.name).resolve()
    landing, lake, database = case_dir / "landing", case_dir / "lake", case_dir / "reference.duckdb"
    inputs = prepare_landing(case, landing)
    shutil.rmtree(lake, ignore_errors=True)
    load_before = os.getloadavg()
    run, sampler, profile = _run_pipeline(settings, landing, lake, case_dir, isolate)
    load_after = os.getloadavg()
    reference = compute_reference(landing, settings, database)
    comparison = compare_lake(reference.con, lake)
    figures = case_figures(case, inputs, run, sampler, lake, reference, comparison, profile)
    # other work on the machine slows every figure: the 1-minute load average before and after the pipeline run
    figures["load_average"] = {"before": load_before[0], "after_pipeline": load_after[0], "after_duckdb": os.getloadavg()[0]}
    reference.con.close()
    if figures["comparison"]["agrees"] and not keep_outputs:
        shutil.rmtree(lake, ignore_errors=True)
        shutil.rmtree(case_dir / "duckdb-spill", ignore_errors=True)
        database.unlink(missing_ok=True)
    return figures


def bench(cases: list[BenchCase], settings: Settings, workdir: Path, *, isolate: bool = True, keep_outputs: bool = False):
    """Run ``cases`` in order, printing each; returns (report, path of its JSON, exit code).

    The JSON (``<workdir>/bench-<timestamp>.json``) is rewritten after every case, so a long
    run that is interrupted keeps the figures measured so far.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = workdir / f"bench-{stamp}.json"
    figures: list[dict] = []
    report = summarize(figures, settings, isolate)
    for case in cases:
        print(f"\n== {case.name}: generating inputs, running the pipeline, then DuckDB ...", flush=True)
        figures.append(run_case(case, settings, workdir, isolate=isolate, keep_outputs=keep_outputs))
        print_case(figures[-1])
        report = summarize(figures, settings, isolate)
        write_report(report, path)
    print_summary(report, path)
    mismatches = [line for f in figures for line in f["comparison"]["mismatches"]]
    if mismatches:
        print("\nFAILED: OffsetLake and DuckDB disagree:\n" + "\n".join(mismatches))
        return report, path, EXIT_FAILED
    return report, path, EXIT_OK
