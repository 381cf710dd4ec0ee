"""What the stages of one run share: where they read and write, and what each has found so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from jobs.io.lake import Lake
from jobs.quality.audit import AuditOutcome
from schemas.config import Settings
from schemas.instants import EPOCH


class StageOrderError(RuntimeError):
    """A stage ran before the one it depends on (the message names it)."""


@dataclass(frozen=True)
class IngestResult:
    batches: tuple[str, ...]
    files_ingested: int
    files_already_ingested: int


@dataclass(frozen=True)
class ReplayInterval:
    """The interval a run asked for (``--from``/``--to``, None when not given) and the one it replayed."""

    requested_from: datetime | None
    requested_to: datetime | None
    replayed_from: datetime  # EPOCH: from the beginning, with no checkpoint
    replayed_to: datetime
    # the earliest event the run read (None: not known, as when the replay ran in another process)
    first_event_at: datetime | None = None
    # when that replay finished (ops/replay_runs): which of a run's replays it is (None: not read
    # from the lake, as when the replay has just run in this process)
    replayed_at: datetime | None = None

    @property
    def span(self) -> tuple[datetime, datetime]:
        """The interval as a person reads it: a replay from the beginning (EPOCH) starts at the
        first event read, not in 1970; the end is exclusive."""
        start = self.replayed_from
        if start == EPOCH and self.first_event_at is not None:
            start = self.first_event_at
        return start, self.replayed_to


@dataclass
class RunContext:
    """One run of some stages: its inputs, then each stage's result as it finishes.

    ``start``/``end`` are the requested interval (``--from``/``--to``, None when not given);
    ``interval`` is what the replay actually covered, which the later stages follow.
    """

    run_id: str
    lake: Lake
    settings: Settings
    landing: Path | None
    start: datetime | None
    end: datetime | None
    ingest: IngestResult | None = None
    interval: ReplayInterval | None = None
    audit: AuditOutcome | None = None
    published: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def quality_failed(self) -> bool:
        """True when the audit found a failed check of severity ``error`` (publish then does not run)."""
        return self.audit is not None and self.audit.has_errors
