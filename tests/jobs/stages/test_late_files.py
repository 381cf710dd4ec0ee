"""Which ingested files a replay counts as new (jobs.stages.replay._ingest_bounds), on a real lake."""

from __future__ import annotations

from datetime import UTC, datetime

from pyspark.sql.types import StructType

from jobs.io.lake import Lake
from jobs.stages.replay import _ingest_bounds
from schemas.tables import INGEST_RUNS, PUBLISH_RUNS, REPLAY_RUNS, TableSpec


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


def _row(spec: TableSpec, **values) -> tuple:
    """A row of ``spec`` from its values by column name (the rest null)."""
    return tuple(values.get(c) for c in spec.columns)


def ingested(run_id: str, kind: str, events: tuple[datetime, datetime], when: datetime) -> tuple:
    name = f"{run_id}-{kind}-{when:%H%M}"
    return _row(
        INGEST_RUNS, run_id=run_id, batch_id=f"b-{name}", source_file=f"/l/{name}", source_kind=kind, identity=name,
        _file_hash="h", file_size=1, file_mtime_ns=1, status="ingested", records_read=1, records_landed=1,
        records_quarantined=0, event_min_at=events[0], event_max_at=events[1], ingested_at=when,
    )  # fmt: skip


def replayed(run_id: str, planned: datetime, finished: datetime | None = None) -> tuple:
    return _row(REPLAY_RUNS, run_id=run_id, replayed_from=at(0), replayed_to=at(1), commits_replayed=0,
                regressions_found=0, finished_at=finished or planned, planned_at=planned)  # fmt: skip


def published(run_id: str, when: datetime) -> tuple:
    return _row(
        PUBLISH_RUNS, run_id=run_id, interval_start=at(0), interval_end=at(1), gold_rows=0, published_at=when
    )


def test_a_replay_counts_the_files_that_no_published_replay_saw_whichever_run_ingested_them(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(INGEST_RUNS, spark.createDataFrame([
        # run "10h" ingested, replayed and published
        ingested("10h", "commits", (at(10), at(11)), at(11, 5)),
        # a hand run ingested a late file and stopped before its replay
        ingested("hand", "commits", (at(9, 30), at(9, 45)), at(11, 30)),
        # run "11h" ingested its hour
        ingested("11h", "commits", (at(11), at(12)), at(12, 5)),
    ], INGEST_RUNS.schema))  # fmt: skip
    lake.append(REPLAY_RUNS, spark.createDataFrame([replayed("10h", at(11, 6))], REPLAY_RUNS.schema))
    lake.append(PUBLISH_RUNS, spark.createDataFrame([published("10h", at(11, 7))], PUBLISH_RUNS.schema))

    # the hand run's file is counted by the next replay, whichever run it is
    assert _ingest_bounds(lake) == (at(9, 30), at(12))

    # "11h" replays; until its publish follows, every replay counts those files again
    lake.merge_rows(REPLAY_RUNS, [replayed("11h", at(12, 6))])
    assert _ingest_bounds(lake) == (at(9, 30), at(12))
    lake.merge_rows(PUBLISH_RUNS, [published("11h", at(12, 7))])
    assert _ingest_bounds(lake) == (None, at(12))

    # "11h" cleared and run again lands one more file: counted; it replays again (widened by that
    # file) and its publish fails: the publish on record is of the replay before, so the file is
    # counted until a publish follows a replay after it
    lake.append(INGEST_RUNS, spark.createDataFrame([ingested("11h", "progress", (at(8), at(8)), at(13))],
                                                   INGEST_RUNS.schema))  # fmt: skip
    assert _ingest_bounds(lake) == (at(8), at(12))
    lake.merge_rows(REPLAY_RUNS, [replayed("11h", at(13, 10))])
    assert _ingest_bounds(lake) == (at(8), at(12))
    lake.merge_rows(PUBLISH_RUNS, [published("11h", at(13, 12))])
    assert _ingest_bounds(lake) == (None, at(12))


def test_a_file_ingested_after_a_replay_planned_is_counted_though_that_replay_was_published(spark, tmp_path):
    """Run "b" lands a file while run "a" replays (a lake no lock keeps to one run at a time), and
    another between "a"'s replay and its publish: "a" planned before either, so neither is seen."""
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(INGEST_RUNS, spark.createDataFrame([
        ingested("a", "commits", (at(10), at(11)), at(11, 5)),
        ingested("b", "commits", (at(9), at(9, 30)), at(11, 7)),
    ], INGEST_RUNS.schema))  # fmt: skip
    lake.append(REPLAY_RUNS, spark.createDataFrame([replayed("a", at(11, 6), at(11, 8))], REPLAY_RUNS.schema))
    lake.append(INGEST_RUNS, spark.createDataFrame([ingested("b", "progress", (at(8), at(8)), at(11, 9))],
                                                   INGEST_RUNS.schema))  # fmt: skip
    lake.append(PUBLISH_RUNS, spark.createDataFrame([published("a", at(11, 10))], PUBLISH_RUNS.schema))

    assert _ingest_bounds(lake) == (at(8), at(11))
    lake.merge_rows(REPLAY_RUNS, [replayed("c", at(11, 20), at(11, 21))])
    lake.merge_rows(PUBLISH_RUNS, [published("c", at(11, 22))])
    assert _ingest_bounds(lake) == (None, at(11))


def test_a_replay_recorded_before_its_planning_time_was_counts_from_its_finish(spark, tmp_path):
    """ops/replay_runs as an earlier version wrote it, without ``planned_at``: read, and merged into."""
    earlier = TableSpec(
        layer=REPLAY_RUNS.layer, name=REPLAY_RUNS.name, grain=REPLAY_RUNS.grain, keys=REPLAY_RUNS.keys,
        schema=StructType([f for f in REPLAY_RUNS.schema.fields if f.name != "planned_at"]),
    )  # fmt: skip
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(INGEST_RUNS, spark.createDataFrame([ingested("a", "commits", (at(10), at(11)), at(11, 5))],
                                                   INGEST_RUNS.schema))  # fmt: skip
    lake.append(earlier, spark.createDataFrame([replayed("a", at(11, 6))[:-1]], earlier.schema))
    lake.append(PUBLISH_RUNS, spark.createDataFrame([published("a", at(11, 7))], PUBLISH_RUNS.schema))
    assert "planned_at" not in lake.stored_columns(REPLAY_RUNS)
    assert _ingest_bounds(lake) == (None, at(11))

    # a replay of this version adds the column: the earlier row keeps counting from its finish
    lake.append(INGEST_RUNS, spark.createDataFrame([ingested("b", "commits", (at(9), at(9)), at(11, 10))],
                                                   INGEST_RUNS.schema))  # fmt: skip
    lake.merge_rows(REPLAY_RUNS, [replayed("b", at(11, 9), at(11, 12))])
    lake.merge_rows(PUBLISH_RUNS, [published("b", at(11, 13))])
    assert _ingest_bounds(lake) == (at(9), at(11))
