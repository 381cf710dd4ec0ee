"""Publish stage: the audited gold rows of the replayed interval, from staging into the lake."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.context import RunContext, StageOrderError
from jobs.stages.intervals import gold_ranges, replayed_interval
from schemas.config import Settings
from schemas.tables import PUBLISH_RUNS


def run(context: RunContext) -> None:
    """The stage's entry (see jobs.stages.runner)."""
    context.published = publish(context.lake, context.settings, context.run_id)


def publish(lake: Lake, settings: Settings, run_id: str) -> dict[str, int]:
    """Replace each gold table's range with its staged rows; rows published per table."""
    interval = replayed_interval(lake, run_id)
    staging = lake.staging()
    published = {}
    for spec, (start, end) in gold_ranges(interval, settings).items():
        if not staging.exists(spec):
            raise StageOrderError(
                f"nothing staged for {spec.path}: run the marts stage first (same --run-id)"
            )
        staged = staging.read(spec)
        lake.replace_range(spec, staged, start, end)
        published[spec.path] = staged.count()
    # recorded last: a run stopped before this line is published again by the next run
    row = (run_id, interval.replayed_from, interval.replayed_to, sum(published.values()), datetime.now(UTC))
    lake.merge(PUBLISH_RUNS, lake.spark.createDataFrame([row], PUBLISH_RUNS.schema))
    return published
