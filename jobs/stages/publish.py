"""Publish stage: the audited gold rows of the replayed interval, from staging into the lake."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from jobs.io.lake import Lake
from jobs.runtime.concurrent import side_by_side
from jobs.stages.context import RunContext, StageOrderError
from jobs.stages.intervals import gold_ranges, replayed_interval
from jobs.stages.shuffles import size_shuffles
from jobs.stages.staged import require_staged_by
from schemas.config import Settings
from schemas.tables import PUBLISH_RUNS, TableSpec


def run(context: RunContext) -> None:
    """The stage's entry (see jobs.stages.runner)."""
    context.published = publish(context.lake, context.settings, context.run_id)


def publish(lake: Lake, settings: Settings, run_id: str) -> dict[str, int]:
    """Replace each gold table's range with its staged rows; rows published per table."""
    interval = replayed_interval(lake, run_id)
    staging = lake.staging()
    require_staged_by(staging, run_id, interval)
    size_shuffles(lake, settings.spark, interval.replayed_from, interval.replayed_to)
    ranges = gold_ranges(interval, settings)
    for spec in ranges:
        if not staging.exists(spec):
            raise StageOrderError(
                f"nothing staged for {spec.path}: run the marts stage first (same --run-id)"
            )
    # each table is its own commit, so they go side by side; the staged table is the marts'
    # whole output, so its Delta log counts its rows
    side_by_side(*[partial(_publish_table, lake, staging, spec, *span) for spec, span in ranges.items()])
    published = {spec.path: staging.row_count(spec) for spec in ranges}
    # recorded last: a run stopped before this line is published again by the next run
    row = (
        run_id,
        interval.replayed_from,
        interval.replayed_to,
        sum(published.values()),
        datetime.now(UTC),
        interval.replayed_at,
    )
    lake.merge_rows(PUBLISH_RUNS, [row])
    return published


def _publish_table(lake: Lake, staging: Lake, spec: TableSpec, start: datetime, end: datetime) -> None:
    lake.replace_range(spec, staging.read(spec), start, end)
