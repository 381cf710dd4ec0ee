"""The marts stage's reads of the lake, on real Delta tables."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.marts import _known_queues
from schemas.tables import QUEUE_KEY, REPLAY_CHECKPOINTS, STORED_OFFSET_TIMELINE

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
