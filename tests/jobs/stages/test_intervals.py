"""Which interval a run replays: pure planning, no Spark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jobs.stages.context import ReplayInterval
from jobs.stages.intervals import TICK, plan_interval
from schemas.instants import EPOCH


def at(hour: int) -> datetime:
    return datetime(2026, 11, 21, hour, tzinfo=UTC)


def test_a_run_without_from_starts_where_the_last_published_run_ended():
    # a crashed run replayed to 12:00 and checkpointed there, but published nothing after 10:00
    planned = plan_interval(None, None, [at(10), at(12)], at(10), None, at(13))
    assert planned == ReplayInterval(None, None, at(10), at(13) + TICK)


def test_with_nothing_published_a_run_replays_from_the_beginning_whatever_was_replayed():
    planned = plan_interval(None, None, [at(12)], None, None, at(13))
    assert planned == ReplayInterval(None, None, EPOCH, at(13) + TICK)


def test_an_asked_interval_starts_at_the_checkpoint_at_or_before_it():
    planned = plan_interval(at(11), at(12), [at(10), at(12)], at(12), None, at(13))
    assert planned == ReplayInterval(at(11), at(12), at(10), at(12))


def test_late_data_widens_the_replay_back_to_a_checkpoint_before_it_and_through_later_ones():
    planned = plan_interval(
        at(12), at(13), [at(9), at(10), at(12)], at(12), at(9) + timedelta(minutes=30), at(13)
    )
    assert planned == ReplayInterval(at(12), at(13), at(9), at(13))


def test_an_earlier_interval_asked_for_replays_through_the_checkpoints_its_new_events_precede():
    """Runs went through 13:00; a run asked for 10:00-11:00 lands a commit stream whose events go
    from 10:45 to 15:00. The checkpoints at 11:00, 12:00 and 13:00 no longer hold: it replays
    through the last of them (the rows of the stream until 13:00 land in it, the rest next run)."""
    planned = plan_interval(
        at(10), at(11), [at(10), at(11), at(12), at(13)], at(13), at(10) + timedelta(minutes=45), at(15)
    )
    assert planned == ReplayInterval(at(10), at(11), at(10), at(13))
    # a retry of that run after its replay: late, but no checkpoint after the interval to replay through
    planned = plan_interval(at(10), at(11), [at(10), at(11)], at(11), at(10) + timedelta(minutes=45), at(11))
    assert planned == ReplayInterval(at(10), at(11), at(10), at(11))
