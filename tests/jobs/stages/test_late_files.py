"""Which ingested files a replay counts as new (jobs.stages.replay._ingest_bounds), on a real lake."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyspark.sql.types import StructType

from jobs.io.engines import MIN_RETENTION
from jobs.io.lake import Lake
from jobs.stages.replay import COMMITTED_WITHIN, NO_VERSION, _ingest_bounds
from schemas.tables import INGEST_RUNS, PUBLISH_RUNS, REPLAY_RUNS, TableSpec
from tests.lakes import vacuum_version


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


def replayed(
    run_id: str, planned: datetime, finished: datetime | None = None, version: int | None = None
) -> tuple:
    return _row(REPLAY_RUNS, run_id=run_id, replayed_from=at(0), replayed_to=at(1), commits_replayed=0,
                regressions_found=0, finished_at=finished or planned, planned_at=planned,
                planned_version=version)  # fmt: skip


def published(run_id: str, when: datetime, replay: datetime | None = None) -> tuple:
    """A publish of ``run_id``'s replay that finished at ``replay`` (None: a row recorded before
    publishes named their replay)."""
    return _row(
        PUBLISH_RUNS, run_id=run_id, interval_start=at(0), interval_end=at(1), gold_rows=0, published_at=when,
        replayed_at=replay,
    )  # fmt: skip


def ingest(lake: Lake, *rows: tuple) -> int:
    """Commit ``rows`` to ops/ingest_runs; the table's version after it."""
    lake.append(INGEST_RUNS, lake.spark.createDataFrame(list(rows), INGEST_RUNS.schema))
    return lake.version(INGEST_RUNS)


def test_a_replay_counts_the_files_that_no_published_replay_saw_whichever_run_ingested_them(engine_lake):
    lake = engine_lake
    # run "10h" ingested, replayed and published
    seen = ingest(lake, ingested("10h", "commits", (at(10), at(11)), at(11, 5)))
    lake.merge_rows(REPLAY_RUNS, [replayed("10h", at(11, 6), version=seen)])
    lake.merge_rows(PUBLISH_RUNS, [published("10h", at(11, 7), replay=at(11, 6))])
    # a hand run ingested a late file and stopped before its replay; run "11h" ingested its hour
    seen = ingest(
        lake,
        ingested("hand", "commits", (at(9, 30), at(9, 45)), at(11, 30)),
        ingested("11h", "commits", (at(11), at(12)), at(12, 5)),
    )

    # the hand run's file is counted by the next replay, whichever run it is
    assert _ingest_bounds(lake) == (at(9, 30), at(12))

    # "11h" replays; until its publish follows, every replay counts those files again
    lake.merge_rows(REPLAY_RUNS, [replayed("11h", at(12, 6), version=seen)])
    assert _ingest_bounds(lake) == (at(9, 30), at(12))
    lake.merge_rows(PUBLISH_RUNS, [published("11h", at(12, 7), replay=at(12, 6))])
    assert _ingest_bounds(lake) == (None, at(12))

    # "11h" cleared and run again lands one more file: counted; it replays again (widened by that
    # file) and its publish fails: the publish on record is of the replay before, so the file is
    # counted until a publish of a replay after it
    seen = ingest(lake, ingested("11h", "progress", (at(8), at(8)), at(13)))
    assert _ingest_bounds(lake) == (at(8), at(12))
    lake.merge_rows(REPLAY_RUNS, [replayed("11h", at(13, 10), version=seen)])
    assert _ingest_bounds(lake) == (at(8), at(12))
    lake.merge_rows(PUBLISH_RUNS, [published("11h", at(13, 12), replay=at(13, 10))])
    assert _ingest_bounds(lake) == (None, at(12))


def test_a_file_committed_after_a_replay_began_planning_is_counted_whatever_its_ingest_time(engine_lake):
    """Run "b" stamps its file's row before run "a"'s replay begins planning, and commits it after "a"
    read the version (a lake given as a URI, which no lock keeps to one run at a time; or a host
    whose clock is ahead): the times say "a" saw it, the version says it did not."""
    lake = engine_lake
    seen = ingest(lake, ingested("a", "commits", (at(10), at(11)), at(11, 4)))
    ingest(lake, ingested("b", "commits", (at(9), at(9, 30)), at(11, 5)))
    lake.merge_rows(REPLAY_RUNS, [replayed("a", at(11, 6), at(11, 8), version=seen)])
    lake.merge_rows(PUBLISH_RUNS, [published("a", at(11, 9), replay=at(11, 8))])
    assert _ingest_bounds(lake) == (at(9), at(11))


def test_a_publish_names_its_replay_whatever_its_host_clock_says(engine_lake):
    """Run "c"'s publish ran on a host whose clock is behind its replay's: it still follows it."""
    lake = engine_lake
    seen = ingest(lake, ingested("c", "commits", (at(10), at(11)), at(11, 4)))
    lake.merge_rows(REPLAY_RUNS, [replayed("c", at(11, 20), at(11, 21), version=seen)])
    lake.merge_rows(PUBLISH_RUNS, [published("c", at(11, 19), replay=at(11, 21))])
    assert _ingest_bounds(lake) == (None, at(11))


def test_a_version_maintenance_cleaned_up_counts_every_file_of_the_day_before_it(engine_lake, caplog):
    """The last published replay planned from a version whose files a vacuum has since removed:
    every file stamped from a day before that replay on counts again (one wider replay), none is
    taken for seen."""
    lake = engine_lake
    seen = ingest(lake, ingested("a", "commits", (at(7), at(11)), at(11, 4)))
    lake.merge_rows(REPLAY_RUNS, [replayed("a", at(11, 6), version=seen)])
    lake.merge_rows(PUBLISH_RUNS, [published("a", at(11, 8), replay=at(11, 6))])
    ingest(lake, ingested("b", "commits", (at(9), at(9)), at(11, 7)))
    assert _ingest_bounds(lake) == (at(9), at(11))

    lake.maintain(INGEST_RUNS, retention=MIN_RETENTION)  # compacts: the version's file is removed
    vacuum_version(lake.path(INGEST_RUNS), seen)
    assert _ingest_bounds(lake) == (at(7), at(11))
    assert "every file ingested since a day before the last published replay counts" in caplog.text


def test_a_replay_that_planned_before_any_ingest_saw_no_file(engine_lake):
    lake = engine_lake
    lake.merge_rows(REPLAY_RUNS, [replayed("a", at(11, 6), version=NO_VERSION)])
    lake.merge_rows(PUBLISH_RUNS, [published("a", at(11, 8), replay=at(11, 6))])
    # committed after "a" planned, though stamped two days before (a host whose clock is behind)
    ingest(lake, ingested("b", "commits", (at(9), at(9)), at(11, 5) - timedelta(days=2)))
    assert _ingest_bounds(lake) == (at(9), at(9))


def test_a_row_stamped_a_day_before_the_replay_began_counts_as_seen_without_a_lookup(engine_lake):
    """The one clock the rule still trusts: a row commits moments after its ingest stamps it, so a
    row stamped more than COMMITTED_WITHIN before a replay began planning was in the version it read.
    Only later rows are looked up: "x" is taken for seen though missing from the version (what a
    host a day behind would give), "y" is found missing."""
    lake = engine_lake
    seen = ingest(lake, ingested("a", "commits", (at(10), at(11)), at(11, 4)))
    lake.merge_rows(REPLAY_RUNS, [replayed("a", at(11, 6), version=seen)])
    lake.merge_rows(PUBLISH_RUNS, [published("a", at(11, 8), replay=at(11, 6))])
    cutoff = at(11, 6) - COMMITTED_WITHIN
    ingest(
        lake,
        ingested("x", "commits", (at(8), at(8)), cutoff - timedelta(minutes=1)),
        ingested("y", "commits", (at(9), at(9)), cutoff + timedelta(minutes=1)),
    )
    assert _ingest_bounds(lake) == (at(9), at(11))


def test_of_replays_planned_from_one_version_the_last_to_begin_sets_the_cut_off(engine_lake):
    """Replays "a" and, a day later, "b" planned from the same version (nothing was ingested between):
    the version was still the latest when "b" began, so rows stamped a day before "b" are seen."""
    lake = engine_lake
    seen = ingest(lake, ingested("a", "commits", (at(10), at(11)), at(11, 4)))
    day = timedelta(days=1)
    lake.merge_rows(
        REPLAY_RUNS, [replayed("a", at(11, 6), version=seen), replayed("b", at(11, 6) + day, version=seen)]
    )
    lake.merge_rows(PUBLISH_RUNS, [published("a", at(11, 8), replay=at(11, 6)),
                                   published("b", at(11, 8) + day, replay=at(11, 6) + day)])  # fmt: skip
    # stamped after "a" began less a day and before "b" did, and missing from the version
    ingest(lake, ingested("x", "commits", (at(9), at(9)), at(10)))
    assert _ingest_bounds(lake) == (None, at(11))


def earlier(spec: TableSpec, *without: str) -> TableSpec:
    """``spec`` as an earlier version declared it, without the columns ``without``."""
    return TableSpec(
        layer=spec.layer, name=spec.name, grain=spec.grain, keys=spec.keys,
        schema=StructType([f for f in spec.schema.fields if f.name not in without]),
    )  # fmt: skip


def test_a_replay_recorded_before_its_planning_time_was_counts_from_its_finish(engine_lake):
    """ops/replay_runs and ops/publish_runs as an earlier version wrote them, without ``planned_at``,
    ``planned_version`` and ``replayed_at``: read, and merged into."""
    replays, publishes = (
        earlier(REPLAY_RUNS, "planned_at", "planned_version"),
        earlier(PUBLISH_RUNS, "replayed_at"),
    )
    lake, spark = engine_lake, engine_lake.spark
    ingest(lake, ingested("a", "commits", (at(10), at(11)), at(11, 5)))
    lake.append(replays, spark.createDataFrame([replayed("a", at(11, 6))[:-2]], replays.schema))
    lake.append(publishes, spark.createDataFrame([published("a", at(11, 7))[:-1]], publishes.schema))
    assert "planned_version" not in lake.stored_columns(REPLAY_RUNS)
    assert "replayed_at" not in lake.stored_columns(PUBLISH_RUNS)
    assert _ingest_bounds(lake) == (None, at(11))

    # a replay of this version adds the columns: the earlier row keeps counting from its finish
    seen = ingest(lake, ingested("b", "commits", (at(9), at(9)), at(11, 10)))
    lake.merge_rows(REPLAY_RUNS, [replayed("b", at(11, 9), at(11, 12))])
    lake.merge_rows(PUBLISH_RUNS, [published("b", at(11, 13))])
    assert _ingest_bounds(lake) == (at(9), at(11))
    # and once a replay that records its version is published, that version tells
    lake.merge_rows(REPLAY_RUNS, [replayed("c", at(11, 20), version=seen)])
    lake.merge_rows(PUBLISH_RUNS, [published("c", at(11, 21), replay=at(11, 20))])
    assert _ingest_bounds(lake) == (None, at(11))
