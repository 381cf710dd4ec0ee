"""Which ingested files a replay counts as new (jobs.stages.replay._ingest_bounds), on a real lake."""

from __future__ import annotations

from datetime import UTC, datetime

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


def replayed(run_id: str, finished: datetime) -> tuple:
    return _row(REPLAY_RUNS, run_id=run_id, replayed_from=at(0), replayed_to=finished, commits_replayed=0,
                regressions_found=0, finished_at=finished)  # fmt: skip


def published(run_id: str, when: datetime) -> tuple:
    return _row(
        PUBLISH_RUNS, run_id=run_id, interval_start=at(0), interval_end=at(1), gold_rows=0, published_at=when
    )


def test_a_replay_counts_the_files_of_its_run_that_no_published_replay_of_it_saw(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(INGEST_RUNS, spark.createDataFrame([
        # run "10h" ingested, replayed and published; cleared and run again, it lands one more file
        ingested("10h", "commits", (at(10), at(11)), at(11, 5)),
        # run "11h" ingested and replayed, then crashed before its publish
        ingested("11h", "commits", (at(9, 30), at(12)), at(12, 5)),
        # an admin tool's output of run "12h", before its interval: late too
        ingested("12h", "progress", (at(8), at(8)), at(12, 20)),
    ], INGEST_RUNS.schema))  # fmt: skip
    replays = [replayed("10h", at(11, 6)), replayed("11h", at(12, 6))]
    lake.append(REPLAY_RUNS, spark.createDataFrame(replays, REPLAY_RUNS.schema))
    lake.append(PUBLISH_RUNS, spark.createDataFrame([published("10h", at(11, 7))], PUBLISH_RUNS.schema))

    # "10h" run again: its published replay saw its file
    assert _ingest_bounds(lake, "10h") == (None, at(12))
    # a retry of "11h": its replay was not published, so its file counts again
    assert _ingest_bounds(lake, "11h") == (at(9, 30), at(12))
    assert _ingest_bounds(lake, "12h") == (at(8), at(12))
    # another run counts none of theirs
    assert _ingest_bounds(lake, "13h") == (None, at(12))
    # "10h" lands a file it had not seen: counted
    lake.append(INGEST_RUNS, spark.createDataFrame([ingested("10h", "commits", (at(10, 45), at(11)), at(13))],
                                                   INGEST_RUNS.schema))  # fmt: skip
    assert _ingest_bounds(lake, "10h") == (at(10, 45), at(12))

    # "10h" replays again (widened by that file), and its publish fails: the publish on record is of
    # the replay before, so a retry counts every file of the run again
    lake.merge_rows(REPLAY_RUNS, [replayed("10h", at(13, 10))])
    assert _ingest_bounds(lake, "10h") == (at(10), at(12))
    lake.merge_rows(PUBLISH_RUNS, [published("10h", at(13, 12))])
    assert _ingest_bounds(lake, "10h") == (None, at(12))
