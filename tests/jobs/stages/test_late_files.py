"""Which ingested files a replay counts as not yet seen (jobs.stages.replay._ingest_bounds), on a real lake."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.replay import _ingest_bounds
from schemas.tables import INGEST_RUNS, REPLAY_RUNS


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


def ingested(run_id: str, kind: str, events: tuple[datetime, datetime], when: datetime) -> tuple:
    row = {
        "run_id": run_id, "batch_id": f"b-{run_id}", "source_file": f"/l/{run_id}-{kind}", "source_kind": kind,
        "identity": f"{run_id}-{kind}", "_file_hash": "h", "file_size": 1, "file_mtime_ns": 1, "status": "ingested",
        "records_read": 1, "records_landed": 1, "records_quarantined": 0, "event_min_at": events[0],
        "event_max_at": events[1], "ingested_at": when,
    }  # fmt: skip
    return tuple(row.get(c) for c in INGEST_RUNS.columns)


def replayed(run_id: str, finished: datetime) -> tuple:
    return (run_id, None, None, at(0), finished, 0, 0, finished)


def test_a_replay_counts_the_evidence_no_replay_of_another_run_has_seen(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(INGEST_RUNS, spark.createDataFrame([
        # the first attempt of run "10h", a week ago: every replay since has seen it
        ingested("10h", "commits", (at(10), at(11)), at(11, 5)),
        # run "11h" ingested, then crashed before its replay: no replay has seen its file
        ingested("11h", "commits", (at(9, 30), at(12)), at(12, 5)),
        # an admin tool's output replays nothing, whatever its time
        ingested("12h", "progress", (at(8), at(8)), at(12, 6)),
    ], INGEST_RUNS.schema))  # fmt: skip
    lake.append(
        REPLAY_RUNS,
        spark.createDataFrame([replayed("10h", at(11, 6)), replayed("later", at(12))], REPLAY_RUNS.schema),
    )
    # run "12h": the crashed run's file is unseen
    assert _ingest_bounds(lake, "12h") == (at(9, 30), at(12))
    # run "10h" cleared and run again: its own file was seen by the replay of "later"
    lake.append(REPLAY_RUNS, spark.createDataFrame([replayed("12h", at(12, 10))], REPLAY_RUNS.schema))
    assert _ingest_bounds(lake, "10h") == (None, at(12))
    # a retry of "12h" after its replay counts what that replay saw: no other run's replay came since
    assert _ingest_bounds(lake, "12h") == (at(9, 30), at(12))
    assert _ingest_bounds(lake, "13h")[0] is None
