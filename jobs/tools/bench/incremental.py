"""The incremental case: what a scheduled run over one new interval costs once the history is in the lake.

On a commits case's inputs (a day or so of one cluster), the landing is split at ``split``,
the last whole hour that leaves at least an hour before the simulation's end:

1. ``history``: a landing holding every file whose content begins before ``split``, and a run
   ``--to split`` into a fresh lake (the whole history's cost);
2. ``increment``: the interval's files land beside them, and a run ``--from split --to end``
   on that lake: the run a schedule makes, timed;
3. ``interval-alone``: the same run on a fresh lake and a landing holding only the interval's
   files: what the interval costs with no history at all.

The increment should cost about what the interval alone costs, not what the history costs.
Its lake must then agree row for row with DuckDB over every file, as one run's would.

A file's content begins at the time its path gives (snapshots, admin-tool outputs) or, for
the simulator's hourly commit files (``commits/<cluster>/<broker>/<yyyy-mm-dd>/<hh>.jsonl``),
at the hour it names. The simulator writes one log per broker and client for the whole run:
those land with the history (ingested whole when they first appear, replayed by event time).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs.io.landing import LandedFile, discover
from jobs.tools.bench.pipeline_run import PipelineRun

INTERVAL = timedelta(hours=1)


@dataclass(frozen=True)
class Split:
    split: datetime
    end: datetime
    history: list[LandedFile]
    interval: list[LandedFile]


def split_time(start: datetime, end: datetime) -> datetime:
    """The last whole hour at least ``INTERVAL`` before ``end`` (and after ``start``)."""
    latest = end - INTERVAL
    hour = latest.replace(minute=0, second=0, microsecond=0)
    if hour <= start:
        raise ValueError(
            f"a simulation from {start.isoformat()} to {end.isoformat()} is too short to split into history and an interval"
        )
    return hour


def can_split(start: datetime, end: datetime) -> bool:
    try:
        split_time(start, end)
    except ValueError:
        return False
    return True


def content_begins(file: LandedFile) -> datetime | None:
    """When the file's content begins (see the module docstring); None for a log of the whole run."""
    if file.time_source == "path":
        return file.event_at
    if file.source_kind == "commits":
        *_, day, name = Path(file.relative).parts
        return datetime.fromisoformat(day).replace(hour=int(name[:2]), tzinfo=UTC)
    return None


def split_landing(landing: Path, patterns: Mapping[str, str], start: datetime, end: datetime) -> Split:
    """Every landed file, as history (begins before the split, or spans the run) or interval."""
    at = split_time(start, end)
    history, interval = [], []
    for file in discover(landing, patterns):
        begins = content_begins(file)
        (interval if begins is not None and begins >= at else history).append(file)
    return Split(at, end, history, interval)


def link_files(files: list[LandedFile], root: Path) -> None:
    """Hard-link ``files`` under ``root`` at their landing paths (same bytes, size and mtime)."""
    for file in files:
        target = root / file.relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.link(file.path, target)


def _run(run: PipelineRun) -> dict:
    return {
        "seconds": sum(run.stage_seconds.values()),
        "stages": dict(run.stage_seconds),
        "session_start_seconds": run.session_seconds,
    }


def incremental_figures(
    split: Split, history: PipelineRun, increment: PipelineRun, alone: PipelineRun, alone_rows: dict[str, int]
) -> dict:
    """The three runs' times and the ratios the target judges (the increment's own figures are the case's)."""
    runs = {
        "history": _run(history),
        "increment": _run(increment),
        "interval_alone": {**_run(alone), "rows": alone_rows},
    }
    took = runs["increment"]["seconds"]
    return {
        "split_at": split.split.isoformat(), "end": split.end.isoformat(),
        "history_files": len(split.history), "interval_files": len(split.interval),
        **runs,
        "increment_to_interval_alone": took / runs["interval_alone"]["seconds"] if runs["interval_alone"]["seconds"] > 0 else None,
        "increment_to_history": took / runs["history"]["seconds"] if runs["history"]["seconds"] > 0 else None,
    }  # fmt: skip
