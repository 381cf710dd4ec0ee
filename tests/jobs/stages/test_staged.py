"""Whose gold rows wait in staging (jobs.stages.staged), on a real lake."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, StageOrderError
from jobs.stages.staged import require_staged_by, staged_by, staging_begins


def interval(hour: int) -> ReplayInterval:
    start = datetime(2026, 11, 21, hour, tzinfo=UTC)
    return ReplayInterval(start, start + timedelta(hours=1), start, start + timedelta(hours=1))


def test_only_the_run_whose_marts_finished_last_may_take_the_staged_rows(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    with pytest.raises(
        StageOrderError, match="are no finished marts stage's, not run a's replay as it stands"
    ):
        require_staged_by(lake, "a", interval(10))  # nothing staged yet
    staging_begins(lake)
    staged_by(lake, "a", interval(10))
    require_staged_by(lake, "a", interval(10))
    # run "b"'s marts comes between: while it writes, the rows are no run's; then they are "b"'s
    staging_begins(lake)
    with pytest.raises(StageOrderError, match="no finished marts stage's"):
        require_staged_by(lake, "b", interval(11))
    staged_by(lake, "b", interval(11))
    with pytest.raises(StageOrderError, match="the staged gold rows are run b's, not run a's"):
        require_staged_by(lake, "a", interval(10))
    require_staged_by(lake, "b", interval(11))
    # "b" replays again, wider, and its marts have not followed
    wider = ReplayInterval(interval(11).requested_from, interval(11).requested_to, interval(9).replayed_from,
                           interval(11).replayed_to)  # fmt: skip
    with pytest.raises(
        StageOrderError, match="are of an earlier replay of run b, not run b's replay as it stands"
    ):
        require_staged_by(lake, "b", wider)
