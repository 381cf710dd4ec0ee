"""Where a stage's time goes, from Spark's event log (the Spark UI is off in the embedded default).

Every DataFrame action or write is one SQL execution; PySpark names it after the Python
line that started it (``collect at /.../jobs/replay_stage.py:66``). ``profile_stages``
sums the executions' wall time per call site within each stage's time span; what the
executions do not cover is driver-side work (delta-rs commits and merges, Parquet footers,
Python between actions), reported as ``outside_spark_seconds``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

TOP_CALL_SITES = 8
# A table write (jobs.io.engines.delta_rs: Spark writes Parquet into <table>/_offsetlake_writes/<id>, or merge-<id>)
# is logged without a Python call site; its output path names the table.
_WRITE_PATH = re.compile(r"Arguments: file:(\S*?)/_offsetlake_writes/(merge-)?")


def call_site(event: dict) -> str:
    """What a SQL execution was: its Python call site, or the table a Parquet write was for."""
    description = event.get("description") or "?"
    if description.startswith("parquet at "):
        match = _WRITE_PATH.search(event.get("physicalPlanDescription") or "")
        if match:
            parts = match.group(1).rstrip("/").split("/")
            table = "/".join(parts[-3:] if len(parts) > 2 and parts[-3] == "_staging" else parts[-2:])
            return f"{'merge source' if match.group(2) else 'write'} {table}"
    return description


def event_log_conf(directory: Path) -> dict[str, str]:
    """Spark settings that write the event log into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": directory.resolve().as_uri(),
        "spark.eventLog.compress": "false",
    }


def sql_executions(directory: Path) -> list[tuple[float, float, str]]:
    """(start, end, call site) in epoch seconds of every finished SQL execution logged in ``directory``."""
    starts: dict[int, tuple[float, str]] = {}
    executions = []
    # Spark 4 writes ``eventlog_v2_<app>/events_<n>_<app>`` (rolling), older ones one file per app
    logs = sorted(
        p for p in directory.rglob("*") if p.is_file() and not p.name.startswith((".", "appstatus"))
    )
    for path in logs:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if "SparkListenerSQLExecution" not in line[:120]:
                    continue
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a log cut short by a crash
                kind = event.get("Event", "")
                if kind.endswith("SQLExecutionStart"):
                    starts[event["executionId"]] = (event["time"] / 1000, call_site(event))
                elif kind.endswith("SQLExecutionEnd") and event["executionId"] in starts:
                    began, site = starts.pop(event["executionId"])
                    executions.append((began, event["time"] / 1000, site))
    return executions


def _covered(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of intervals (nested executions count once)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def profile_stages(directory: Path, spans: dict[str, tuple[float, float]]) -> dict[str, dict]:
    """Per stage: Spark executions' time by call site (largest first) and the time outside Spark."""
    executions = sql_executions(directory) if directory.is_dir() else []
    profile = {}
    for stage, (start, end) in spans.items():
        inside = [(max(s, start), min(e, end), site) for s, e, site in executions if s < end and e > start]
        by_site: dict[str, list[float]] = defaultdict(list)
        for s, e, site in inside:
            by_site[site].append(e - s)
        top = sorted(by_site.items(), key=lambda item: -sum(item[1]))[:TOP_CALL_SITES]
        covered = _covered([(s, e) for s, e, _ in inside])
        profile[stage] = {
            "spark_seconds": covered,
            "outside_spark_seconds": max(0.0, (end - start) - covered),
            "sql_executions": len(inside),
            "top_call_sites": [
                {"call_site": site, "executions": len(t), "seconds": sum(t)} for site, t in top
            ],
        }
    return profile
