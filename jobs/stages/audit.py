"""Audit stage: the data-quality checks of the replayed interval (jobs.quality.audit), before publish."""

from __future__ import annotations

from jobs.quality.audit import run_audit
from jobs.stages.context import RunContext
from jobs.stages.intervals import replayed_interval
from jobs.stages.shuffles import size_shuffles
from jobs.stages.staged import require_staged_by


def run(context: RunContext) -> None:
    """The stage's entry (see jobs.stages.runner): a failed check of severity ``error`` stops the run."""
    interval = context.interval or replayed_interval(context.lake, context.run_id)
    require_staged_by(context.lake.staging(), context.run_id, interval)
    size_shuffles(context.lake, context.settings.spark, interval.replayed_from, interval.replayed_to)
    context.audit = run_audit(
        context.lake, context.settings, interval.replayed_from, interval.replayed_to, context.run_id
    )
