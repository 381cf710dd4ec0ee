"""Whose gold rows wait in staging (jobs.stages.staged), on a real lake."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, StageOrderError
from jobs.stages.staged import require_staged_by, staged_by, staging_begins


def interval(hour: int, replayed_minute: int = 5) -> ReplayInterval:
    start = datetime(2026, 11, 21, hour, tzinfo=UTC)
    end = start + timedelta(hours=1)
    return ReplayInterval(start, end, start, end, replayed_at=end + timedelta(minutes=replayed_minute))


def test_only_the_latest_replay_of_the_run_whose_marts_finished_last_may_take_the_staged_rows(
    spark, tmp_path
):
    staging = Lake(spark, tmp_path / "lake", engine="delta-rs").staging()
    with pytest.raises(
        StageOrderError, match="staging holds no gold rows a marts stage finished staging, not those"
    ):
        require_staged_by(staging, "a", interval(10))  # nothing staged yet
    staging_begins(staging)
    staged_by(staging, "a", interval(10))
    require_staged_by(staging, "a", interval(10))
    # run "b"'s marts comes between: while it writes, the rows are no run's; then they are "b"'s
    staging_begins(staging)
    with pytest.raises(StageOrderError, match="no gold rows a marts stage finished staging"):
        require_staged_by(staging, "b", interval(11))
    staged_by(staging, "b", interval(11))
    with pytest.raises(
        StageOrderError, match="staging holds the gold rows of run b, not those of run a's latest"
    ):
        require_staged_by(staging, "a", interval(10))
    require_staged_by(staging, "b", interval(11))
    # "b" replays again (the same interval), and its marts have not followed
    with pytest.raises(StageOrderError, match="the gold rows of an earlier replay of run b"):
        require_staged_by(staging, "b", interval(11, replayed_minute=20))
    # an interval the replay stage has just returned, not read from the lake, names no replay
    just_replayed = ReplayInterval(None, None, interval(11).replayed_from, interval(11).replayed_to)
    with pytest.raises(StageOrderError, match="an earlier replay of run b"):
        require_staged_by(staging, "b", just_replayed)
