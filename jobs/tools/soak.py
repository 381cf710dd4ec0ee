"""A soak: consecutive hourly runs on one lake, with and without maintenance, and what each costs.

    python -m jobs.tools.soak --workdir soak --runs 200 --maintain-every 24

1. Simulates ``--runs`` hours of a small cluster (2 topics, 6 queues, 2 groups, a commit every
   30 s, a snapshot every 10 min) into ``<workdir>/source``, once (kept for the next soak).
2. For each hour, in order: the files whose content begins before the hour's end land in
   ``<workdir>/landing`` (as the collectors would bring them; the simulator's broker and client
   logs span every hour and land before the first run), then ``run`` (every stage:
   :func:`jobs.stages.runner.run_stages`) over exactly that hour, first on ``<workdir>/plain``,
   never maintained, then on ``<workdir>/maintained``, which ``offsetlake maintain``'s work
   (:func:`jobs.stages.maintenance.maintain_tables`) follows every ``--maintain-every`` runs.
   The two lakes take turns, so whatever else the machine does falls on both alike.
3. Prints per run and lake the wall time of the run, the machine's one-minute load average at
   its end, the active files of a few main tables and the Delta log's size over all tables;
   appends the same to ``<workdir>/soak.jsonl``; ends with the median wall time (and load) of
   the first and the last ten runs of each lake.
4. The probe (``--probe N``): runs taken hours apart, on a machine whose speed drifts and in a
   session that ages, are not a fair comparison of a young lake with an old one. So each lake as
   it ends and a young lake (the first ten runs, never maintained, in ``<workdir>/probe/early``,
   made once) re-run their last interval on a fresh copy, N times each, taking turns in this
   session. Every stage of a re-run does its whole work but the ingest, which lists the landing
   and reads its own records and finds nothing new (the per-run lines show whether the ingest
   grows). Prints each re-run and the medians per lake and stage; appends them to
   ``<workdir>/probe.jsonl``.

A soak stopped part-way (``--workdir`` kept) resumes where it stopped, up to the ``--runs`` its
hours were simulated for (more need a new ``--workdir``). All runs share one Spark
session in this process, with a driver of 2 GiB (where ``offsetlake run`` starts one per run, each
run's wall time here leaves out the JVM's start, about the same for every run): that is what makes
hundreds of runs feasible; the figures are the growth from run to run. Sessions of the soak before
execution memory came in small pages (jobs.runtime.session.PAGE_SIZE) filled the driver's heap
after 50 to 100 runs with broadcasts' pages (docs/performance.md, "Soak"); run again, the soak
resumes in a new process.
The maintenance's vacuum keeps files removed less than a week ago (wall time, not simulated
time), so within a soak it removes nothing: the compaction and the log's checkpoints are what
the maintained lake gains.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from deltalake import DeltaTable

from jobs.io.lake import Lake
from jobs.io.lake_lock import LakeLock
from jobs.io.landing import discover
from jobs.runtime.logs import attach_log_file
from jobs.runtime.session import build_session
from jobs.sources import patterns
from jobs.stages.maintenance import DEFAULT_RETENTION, maintain_tables
from jobs.stages.runner import STAGE_NAMES, run_stages
from jobs.tools.bench.incremental import content_begins
from jobs.tools.simulator import MANIFEST_NAME, SimulationManifest, SimulationSpec, simulate
from schemas.config import Settings

START = datetime(2026, 11, 21, tzinfo=UTC)
HOUR = timedelta(hours=1)
# the tables whose files are shown per run: one of each layer a run appends to every hour
SHOWN_TABLES = {
    "commits": "bronze/offset_commits",
    "replayed": "silver/offset_commits_replayed",
    "timeline": "silver/stored_offset_timeline",
    "lag": "gold/consumer_lag",
}
EDGE_RUNS = 10  # the runs the summary compares, at each end


def soak_spec(hours: int) -> SimulationSpec:
    return SimulationSpec.small_cluster(
        START, timedelta(hours=hours), progress_interval=timedelta(minutes=30)
    )


class SoakError(RuntimeError):
    """The soak cannot go on in this working directory (the message says why)."""


def source_landing(workdir: Path, hours: int) -> Path:
    """The simulated hours (made once; a source of the same cluster and at least ``hours`` hours is
    reused). A longer simulation is another cluster's history, not this one's continued, and the
    landing's files are links to the source's: a soak whose hours have landed cannot grow."""
    source = workdir / "source"
    manifest = source / MANIFEST_NAME
    if manifest.is_file():
        made = SimulationManifest.model_validate_json(manifest.read_text()).spec
        if made.duration >= timedelta(hours=hours) and made == soak_spec(1).model_copy(
            update={"duration": made.duration}
        ):
            return source
        landing = workdir / "landing"
        if landing.is_dir() and any(p.is_file() for p in landing.rglob("*")):
            raise SoakError(
                f"{workdir} holds a soak of {made.duration.total_seconds() / 3600:.0f} simulated hours that has "
                f"landed; --runs {hours} needs a new --workdir (simulating more hours would rewrite the landed ones)"
            )
        shutil.rmtree(source)  # written afresh, not over files a landing might link to
    simulate(soak_spec(hours), source)
    return source


def land_until(source: Path, landing: Path, end: datetime, settings: Settings) -> int:
    """Link the files of ``source`` whose content begins before ``end`` into ``landing``; how many were new."""
    new = 0
    for file in discover(source, patterns(settings)):
        begins = content_begins(file)
        target = landing / file.relative
        if (begins is None or begins < end) and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(source / file.relative, target)
            new += 1
    return new


def lake_figures(lake: Path) -> dict:
    """Active files of the shown tables, and the Delta logs' bytes and files over every table."""
    files = {}
    for name, path in SHOWN_TABLES.items():
        table = lake / path
        files[name] = len(DeltaTable(str(table)).file_uris()) if DeltaTable.is_deltatable(str(table)) else 0
    logs = [f for f in lake.glob("**/_delta_log/*") if f.is_file()]
    return {
        "files": files,
        "log_bytes": sum(f.stat().st_size for f in logs),
        "log_files": len(logs),
        "data_files": sum(1 for _ in lake.glob("**/*.parquet")),
    }


def run_line(record: dict) -> str:
    files = " ".join(f"{name} {count:>4}" for name, count in record["files"].items())
    maintained = f"  maintain {record['maintain_seconds']:.1f}s" if record.get("maintain_seconds") else ""
    load = f"  load {record['load']:.1f}" if "load" in record else ""
    return (
        f"run {record['run']:>4} {record['hour'][:13]} {record['lake']:<10} wall {record['seconds']:6.1f}s{load}  "
        f"files {files}  log {record['log_bytes'] / 1e6:6.2f} MB ({record['log_files']:>5} files){maintained}"
    )


def soak(
    workdir: Path, runs: int, maintain_every: int, lakes: tuple[str, ...], probes: int = 0
) -> tuple[list[dict], list[dict]]:
    """The soak in ``workdir`` and then ``probes`` re-runs of each lake's last interval (see
    :func:`probe`): the runs' records and the probe's. A soak stopped part-way resumes after the
    last run it recorded (a run it was in the middle of is redone whole, as ``offsetlake run``
    redoes an interval)."""
    settings = soak_settings()
    workdir.mkdir(parents=True, exist_ok=True)
    source = source_landing(workdir, runs)
    landing = workdir / "landing"
    attach_log_file(workdir / "soak.log")
    spark = build_session(settings.spark, workdir / "spark.log")
    log = workdir / "soak.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []
    done = {(r["run"], r["lake"]) for r in records}
    with log.open("a") as out:
        for n in range(runs):
            start = START + n * HOUR
            land_until(source, landing, start + HOUR, settings)
            for name in lakes:
                if (n, name) in done:
                    continue
                record = one_run(spark, settings, workdir / name, landing, n, maintain_every)
                records.append(record)
                _keep(out, record, run_line(record))
    if not probes:
        return records, []
    last = {r["lake"]: r["run"] for r in records if r["lake"] in lakes}
    return records, probe(settings, workdir, last, probes)


def early_lake(settings: Settings, workdir: Path, runs: int) -> tuple[Path, Path]:
    """A lake after the soak's first ``runs`` hourly runs, never maintained, and its landing,
    in ``<workdir>/probe/early`` (made once: a ``done`` file marks it complete)."""
    home = workdir / "probe" / "early"
    lake, landing = home / "lake", home / "landing"
    if not (home / "done").is_file():
        shutil.rmtree(home, ignore_errors=True)
        for n in range(runs):
            start = START + n * HOUR
            land_until(workdir / "source", landing, start + HOUR, settings)
            run_stages(settings, lake, landing, start, start + HOUR, f"soak-early-{n:04d}")
        (home / "done").write_text(f"{runs}\n")
    return lake, landing


def probe(settings: Settings, workdir: Path, last: dict[str, int], repeats: int,
          early_runs: int = EDGE_RUNS) -> list[dict]:  # fmt: skip
    """Each lake of ``last`` (its name: the last run it recorded) and a young lake re-run their
    last interval ``repeats`` times on a fresh copy, taking turns; a record per re-run."""
    arms = {"early": (*early_lake(settings, workdir, early_runs), early_runs - 1)}
    for name, n in last.items():
        # the hours landed when the lake's last run ran (the soak's landing may be an hour ahead)
        landing = workdir / "probe" / f"landing-{name}"
        land_until(workdir / "source", landing, START + (n + 1) * HOUR, settings)
        arms[name] = (workdir / name, landing, n)
    scratch = workdir / "probe" / "scratch"
    records = []
    with (workdir / "probe.jsonl").open("a") as out:
        for k in range(repeats):
            # the order reverses every other round, so neither end of a round favours one lake
            for name in list(arms) if k % 2 == 0 else list(arms)[::-1]:
                lake, landing, n = arms[name]
                shutil.rmtree(scratch, ignore_errors=True)
                shutil.copytree(lake, scratch)
                start = START + n * HOUR
                began = time.perf_counter()
                context = run_stages(settings, scratch, landing, start, start + HOUR, f"probe-{name}-{k}")
                record = {"lake": name, "runs": n + 1, "repeat": k, "seconds": time.perf_counter() - began,
                          "load": os.getloadavg()[0], "stages": dict(context.timings)}  # fmt: skip
                shutil.rmtree(scratch)
                records.append(record)
                _keep(out, record, probe_line(record))
    return records


def _keep(out: TextIO, record: dict, line: str) -> None:
    """Show ``record``'s line and append it to the soak's JSON lines, as it is made."""
    print(line, flush=True)
    out.write(json.dumps(record) + "\n")
    out.flush()


def probe_line(record: dict) -> str:
    stages = " ".join(f"{s} {record['stages'].get(s, 0.0):4.1f}s" for s in STAGE_NAMES)
    return (
        f"probe {record['lake']:<10} after {record['runs']:>4} runs  repeat {record['repeat']}  "
        f"wall {record['seconds']:6.1f}s  load {record['load']:.1f}  {stages}"
    )


def probe_summary(records: list[dict]) -> list[str]:
    """Per lake, the median wall time and stage times of its re-runs, against the young lake's."""
    lines = []
    medians = {}
    for name in dict.fromkeys(r["lake"] for r in records):
        mine = [r for r in records if r["lake"] == name]
        medians[name] = statistics.median(r["seconds"] for r in mine)
        stages = " ".join(
            f"{s} {statistics.median(r['stages'].get(s, 0.0) for r in mine):.1f}s" for s in STAGE_NAMES
        )
        versus = (
            f" ({medians[name] / medians['early'] - 1:+.0%} on the young lake)" if name != "early" else ""
        )
        lines.append(
            f"probe {name:<10} after {mine[0]['runs']:>4} runs: median wall of {len(mine)} re-runs "
            f"{medians[name]:.1f}s{versus}; {stages}"
        )
    return lines


def soak_settings() -> Settings:
    """The defaults, but a driver of 2 GiB: an hour of the small cluster needs no more, and the
    soak shares its machine."""
    settings = Settings()
    return settings.model_copy(update={"spark": settings.spark.model_copy(update={"driver_memory": "2g"})})


def one_run(spark, settings: Settings, lake: Path, landing: Path, n: int, maintain_every: int) -> dict:
    """Run ``n`` (its hour) on ``lake``, then a maintenance when the maintained lake is due one."""
    start = START + n * HOUR
    began = time.perf_counter()
    context = run_stages(settings, lake, landing, start, start + HOUR, f"soak-{lake.name}-{n:04d}")
    record = {"run": n, "hour": start.isoformat(), "lake": lake.name,
              "seconds": time.perf_counter() - began, "quality_failed": context.quality_failed,
              "load": os.getloadavg()[0]}  # fmt: skip
    if lake.name == "maintained" and maintain_every and (n + 1) % maintain_every == 0:
        began = time.perf_counter()
        target = Lake(spark, lake, settings.spark.delta_engine)
        with LakeLock(target.root, f"soak-maintain-{n:04d}"):
            maintain_tables(target, DEFAULT_RETENTION)
        record["maintain_seconds"] = time.perf_counter() - began
    return {**record, **lake_figures(lake)}


def summary(records: list[dict]) -> list[str]:
    """Per lake: the median wall time and load of its first and last ``EDGE_RUNS`` runs (the first
    run, which lands the whole-run logs, left out) and its last figures."""
    lines = []
    for name in dict.fromkeys(r["lake"] for r in records):
        runs = [r for r in records if r["lake"] == name][1:]
        if not runs:
            continue
        first = statistics.median(r["seconds"] for r in runs[:EDGE_RUNS])
        last = statistics.median(r["seconds"] for r in runs[-EDGE_RUNS:])
        end = runs[-1]
        loads = [
            statistics.median(r.get("load", 0.0) for r in edge)
            for edge in (runs[:EDGE_RUNS], runs[-EDGE_RUNS:])
        ]
        lines.append(
            f"{name:<10} runs {runs[0]['run']}-{end['run']}: median wall first {len(runs[:EDGE_RUNS])} "
            f"{first:.1f}s, last {len(runs[-EDGE_RUNS:])} {last:.1f}s ({last / first - 1:+.0%}; median load "
            f"{loads[0]:.1f}, then {loads[1]:.1f}); at the end "
            f"files {end['files']}, {end['data_files']} Parquet files on disk, "
            f"log {end['log_bytes'] / 1e6:.2f} MB in {end['log_files']} files"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.tools.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("soak"))
    parser.add_argument(
        "--runs", type=int, default=200, help="consecutive hourly runs per lake (default 200)"
    )
    parser.add_argument("--maintain-every", type=int, default=24,
                        help="runs between two maintenances of the maintained lake (default 24: daily)")  # fmt: skip
    parser.add_argument("--lakes", choices=("both", "plain", "maintained"), default="both")
    parser.add_argument("--probe", type=int, default=5, metavar="N",
                        help="after the runs, re-run each lake's last interval and a young lake's N times, "
                             "taking turns (default 5; 0: no probe)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.runs < 1 or args.maintain_every < 0 or args.probe < 0:
        parser.error("--runs must be at least 1, --maintain-every and --probe at least 0")
    if args.probe and args.runs <= EDGE_RUNS:
        parser.error(
            f"the probe's young lake is the first {EDGE_RUNS} runs: give --runs over {EDGE_RUNS}, or --probe 0"
        )
    lakes = ("plain", "maintained") if args.lakes == "both" else (args.lakes,)
    print("one Spark session for every run (each run's time leaves out a JVM start)", flush=True)
    try:
        records, probed = soak(args.workdir.resolve(), args.runs, args.maintain_every, lakes, args.probe)
    except SoakError as error:
        print(f"soak: {error}", file=sys.stderr)
        return 2
    for line in summary(records) + probe_summary(probed):
        print(line)
    return 0 if not any(r["quality_failed"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
