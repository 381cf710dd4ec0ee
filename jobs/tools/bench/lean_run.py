"""A lean job timed as a child process, and its regressions held against the lake's: the lean DuckDB
job (:mod:`jobs.tools.bench.lean`), or the same job written for Spark (:mod:`jobs.tools.bench.lean_spark`).

The job is timed from launch to exit, as ``offsetlake run`` is (:mod:`jobs.tools.bench.pipeline_run`).
Its regressions are compared with ``silver/offset_regressions`` as multisets of
``lean.REGRESSION_COLUMNS``; they must agree on a landing of commit events only (the commits-only
case), where both read the same evidence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb
from deltalake import DeltaTable

from jobs.tools.bench.lean import REGRESSION_COLUMNS
from jobs.tools.bench.pipeline_run import REPO_ROOT, PipelineRunError

# each lean job's name, its module, and where under its output directory it writes its regressions
LEAN_JOBS = {
    "duckdb": ("the lean DuckDB job", "jobs.tools.bench.lean", "regressions.parquet"),
    "spark": ("the lean Spark job", "jobs.tools.bench.lean_spark", "regressions/*.parquet"),
}


@dataclass
class LeanRun:
    seconds: float  # wall, launch to exit
    counts: dict[str, int]
    regressions: dict = field(default_factory=dict)  # compare_regressions' figures
    steps: dict[str, float] = field(default_factory=dict)  # the seconds of the job's steps, as it timed them

    def to_json(self) -> dict:
        return asdict(self)


def compare_regressions(lake: Path, lean_regressions: Path) -> dict:
    """Rows only in the lake's regressions and only in the lean job's, as multisets of REGRESSION_COLUMNS."""
    path = lake / "silver" / "offset_regressions"
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        lake_rows = (
            DeltaTable(str(path)).to_pyarrow_table(columns=list(REGRESSION_COLUMNS))
            if DeltaTable.is_deltatable(str(path))
            else None
        )
        columns = ", ".join(
            f'CAST("{c}" AS TIMESTAMP) AS "{c}"' if c == "detected_at" else f'"{c}"'
            for c in REGRESSION_COLUMNS
        )
        con.execute(f"CREATE TABLE lean AS SELECT {columns} FROM read_parquet('{lean_regressions}')")
        if lake_rows is None:
            con.execute("CREATE TABLE lake AS SELECT * FROM lean LIMIT 0")
        else:
            con.execute(f"CREATE TABLE lake AS SELECT {columns} FROM lake_rows")
        count = lambda sql: con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0]  # noqa: E731
        figures = {
            "lake_rows": count("SELECT * FROM lake"),
            "lean_rows": count("SELECT * FROM lean"),
            "only_in_lake": count("SELECT * FROM lake EXCEPT ALL SELECT * FROM lean"),
            "only_in_lean": count("SELECT * FROM lean EXCEPT ALL SELECT * FROM lake"),
        }
    finally:
        con.close()
    return {**figures, "agrees": figures["only_in_lake"] == figures["only_in_lean"] == 0}


def run_lean(
    landing: Path, out: Path, lake: Path | None = None, engine: str = "duckdb", options: tuple[str, ...] = ()
) -> LeanRun:
    """The lean job of ``engine`` (LEAN_JOBS: ``python -m <module> <landing> <out> <options>``), timed;
    its regressions compared with ``lake``'s."""
    name, module, regressions = LEAN_JOBS[engine]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", module, str(landing), str(out), *options],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT,
    )  # fmt: skip
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise PipelineRunError(f"{name} failed (exit code {done.returncode}):\n{done.stderr}")
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    run = LeanRun(seconds, counts, steps=counts.pop("steps", {}))
    if lake is not None and counts["commits"] > 0:
        run.regressions = compare_regressions(lake, out / regressions)
    return run
