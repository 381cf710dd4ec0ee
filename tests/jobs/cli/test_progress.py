"""A run's progress: a plain log line per step start and end off a terminal (Airflow), a live
line per step on one; and what each step's line says it did."""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime

from rich.console import Console

from jobs.cli.progress import LogProgress, TerminalProgress
from jobs.stages.context import IngestResult, ReplayInterval
from jobs.stages.runner import SESSION_STEP, outcome
from schemas.instants import EPOCH


def test_off_a_terminal_each_step_is_a_log_line_as_it_starts_and_ends(caplog):
    caplog.set_level(logging.INFO, logger="offsetlake.progress")
    display = LogProgress()
    display.started(SESSION_STEP, None)
    display.finished(SESSION_STEP, 5.94, "master local[*]")
    display.started("ingest", None)
    display.finished("ingest", 33.5, "239 new files")
    assert caplog.messages == [
        "start Spark ...",
        "start Spark done in 5.9s: master local[*]",
        "ingest ...",
        "ingest done in 33.5s: 239 new files",
    ]


def test_on_a_terminal_a_finished_step_keeps_its_line_with_duration_and_outcome():
    screen = io.StringIO()
    with TerminalProgress(Console(file=screen, width=120, force_terminal=False)) as display:
        display.started("replay", None)
        display.finished("replay", 9.4, "2026-11-21 00:00:00 to 2026-11-21 01:59:59 UTC")
    last = [line for line in screen.getvalue().splitlines() if line.strip()][-1]
    assert last.startswith("✓ replay") and last.endswith(
        "9.4s  2026-11-21 00:00:00 to 2026-11-21 01:59:59 UTC"
    )


class _Context:
    def __init__(self, **found):
        self.ingest, self.interval, self.audit, self.published = None, None, None, {}
        self.__dict__.update(found)


def test_each_steps_outcome_says_what_it_did_and_a_first_replay_starts_at_its_first_event():
    first = datetime(2026, 11, 21, 0, 0, 0, 350000, tzinfo=UTC)
    interval = ReplayInterval(None, None, EPOCH, datetime(2026, 11, 22, tzinfo=UTC), first_event_at=first)
    context = _Context(ingest=IngestResult(("b1",), 239, 2), interval=interval, published={"a": 5, "b": 7})
    assert [outcome(step, context) for step in ("ingest", "replay", "marts", "publish")] == [
        "239 new files (2 already in the lake)",
        "2026-11-21 00:00:00 to 2026-11-22 00:00:00 UTC",
        "gold rows staged for the audit",
        "12 gold rows",
    ]
    assert interval.span == (first, datetime(2026, 11, 22, tzinfo=UTC))
