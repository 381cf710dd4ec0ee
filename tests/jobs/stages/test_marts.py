"""The marts stage's reads of the lake, on real Delta tables."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.io.lake import Lake
from jobs.stages.marts import _known_queues, _lag
from schemas.config import Settings
from schemas.tables import (
    CONSUMER_LAG,
    QUEUE_KEY,
    QUEUE_OFFSETS,
    REPLAY_CHECKPOINTS,
    STORED_OFFSET_TIMELINE,
    TableSpec,
)

END = datetime(2026, 11, 21, 12, tzinfo=UTC)
LATER = datetime(2026, 11, 21, 13, tzinfo=UTC)


def checkpoint(as_of: datetime, queue: int):
    return (
        as_of,
        "c1",
        "broker-a",
        "t",
        "g",
        queue,
        "normal",
        None,
        None,
        None,
        None,
        None,
        None,
        0,
        None,
        None,
    )


def timeline_row(queue: int):
    return ("c1", "broker-a", "t", "g", queue, END, "1|f|1", "commit", 5, None, 5, END.date())


def queues(df) -> list[int]:
    return sorted(r.queue_id for r in df.select(*QUEUE_KEY).collect())


def test_known_queues_come_from_the_checkpoint_at_the_end_or_else_from_the_timeline_and_seed(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(
        REPLAY_CHECKPOINTS,
        spark.createDataFrame(
            [checkpoint(END, 0), checkpoint(END, 1), checkpoint(LATER, 2)], REPLAY_CHECKPOINTS.schema
        ),
    )
    timeline = spark.createDataFrame([timeline_row(3)], STORED_OFFSET_TIMELINE.schema)
    seed = spark.createDataFrame([checkpoint(END, 4)], REPLAY_CHECKPOINTS.schema).drop("as_of")
    # the replay's checkpoint at the end names every queue it knows: no scan of the timeline
    assert queues(_known_queues(lake, timeline, seed, END)) == [0, 1]
    # no checkpoint at that instant (a later replay replaced it): the timeline's and the seed's queues
    no_checkpoint = datetime(2026, 11, 21, 14, tzinfo=UTC)
    assert queues(_known_queues(lake, timeline, seed, no_checkpoint)) == [3, 4]


def _row(spec: TableSpec, **values) -> tuple:
    """A row of ``spec`` from its values by column name (the rest null)."""
    return tuple(values.get(c) for c in spec.columns)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


QUEUE = {"cluster": "c1", "broker": "broker-a", "topic": "t", "consumer_group": "g", "queue_id": 0}


def stored(as_of: datetime, offset: int, when: datetime) -> tuple:
    return _row(REPLAY_CHECKPOINTS, as_of=as_of, **QUEUE, key_kind="normal", commit_regressions_since_snapshot=0,
                last_stored_at=when, last_stored_offset=offset)  # fmt: skip


@pytest.mark.parametrize("replaced", [False, True], ids=["its checkpoint", "an earlier checkpoint"])
def test_the_lag_of_an_interval_starts_from_the_state_at_its_start_whichever_checkpoint_holds_it(
    spark, tmp_path, replaced
):
    """The replay before [11:00, 12:00) stored its state at 11:00; a wider replay since (late files)
    replaced that checkpoint by its own at its end. The interval's lag then starts from the
    checkpoint before it and the timeline since: the same lag."""
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    checkpoints = [stored(at(10), 50, at(9, 59)), stored(at(12), 80, at(10, 30))]
    if not replaced:
        checkpoints.append(stored(at(11), 80, at(10, 30)))
    lake.append(REPLAY_CHECKPOINTS, spark.createDataFrame(checkpoints, REPLAY_CHECKPOINTS.schema))
    # the queue's stored offset moved at 10:30, before the interval, and not inside it
    moved = _row(STORED_OFFSET_TIMELINE, **QUEUE, observed_at=at(10, 30), observation_seq="1", observation="commit",
                 stored_offset=80, previous_stored_offset=50, consumed_increment=30, observed_date=at(10).date())  # fmt: skip
    lake.append(STORED_OFFSET_TIMELINE, spark.createDataFrame([moved], STORED_OFFSET_TIMELINE.schema))
    progress = _row(QUEUE_OFFSETS, **QUEUE, observed_at=at(11, 10), max_offset=100, min_offset=0,
                    consumer_offset=80, evidence="consumer_progress", is_name_truncated=False,
                    source_file="/l/progress", line_no=1, _file_hash="h", _ingest_run_id="r",
                    observed_date=at(11).date())  # fmt: skip
    lake.append(QUEUE_OFFSETS, spark.createDataFrame([progress], QUEUE_OFFSETS.schema))

    _lag(lake, lake.staging(), Settings(), at(11), at(12))
    lag = lake.staging().read(CONSUMER_LAG).collect()
    assert [(r.observed_at, r.consumer_offset, r.consumer_offset_at, r.lag_messages) for r in lag] == [
        (at(11, 10).replace(tzinfo=None), 80, at(10, 30).replace(tzinfo=None), 20)
    ]
