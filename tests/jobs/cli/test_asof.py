"""``offsetlake asof``: each queue's stored offset at an instant, from the timeline, also as the lake was."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa

from jobs.cli.main import EXIT_USAGE, main
from pipelines.replay import expressions
from pipelines.replay.projections import OBSERVATION_SEQ
from schemas.tables import STORED_OFFSET_TIMELINE
from tests.lakes import write_rows

T10 = datetime(2026, 11, 21, 10, tzinfo=UTC)


def observation(group: str, queue_id: int, at: datetime, kind: str, offset: int, seq: str) -> dict:
    return {"cluster": "prod-1", "broker": "broker-a", "topic": "orders", "consumer_group": group,
            "queue_id": queue_id, "observed_at": at, "observation_seq": seq, "observation": kind,
            "stored_offset": offset, "observed_date": at.date()}  # fmt: skip


FIRST = [
    observation("billing", 1, T10, "commit", 100, "1|/l/c.jsonl|000000000007|c1"),
    observation("billing", 1, T10 + timedelta(minutes=5), "snapshot", 90, "0|/l/snap.json|000000000000"),
    observation("billing", 1, T10 + timedelta(minutes=10), "commit", 120, "1|/l/c.jsonl|000000000009|c2"),
    observation(
        "shipping", 2, T10 - timedelta(hours=1), "commit", 5, "1|/l/c.jsonl|000000000001"
    ),  # an older lake's: no hash
]
# a late file's commit, appended as the timeline's version 1
LATE = observation("billing", 1, T10 + timedelta(minutes=6), "commit", 95, "1|/l/late.jsonl|000000000003")


def asof(capsys, lake, *options: str) -> list[dict]:
    assert main(["asof", "--lake", str(lake), "--format", "json", *options]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_each_queue_shows_its_last_observation_at_the_instant_and_what_set_it(tmp_path, capsys):
    write_rows(tmp_path, STORED_OFFSET_TIMELINE, FIRST)
    at = "2026-11-21T10:07:00Z"
    answer = asof(capsys, tmp_path, "--at", at)
    assert [(r["consumer_group"], r["stored_offset"], r["set_by"], r["source_file"], r["file_hash"], r["line_no"])
            for r in answer] == [
        ("billing", 90, "snapshot", "/l/snap.json", None, 0),
        ("shipping", 5, "commit", "/l/c.jsonl", None, 1),
    ]  # fmt: skip
    assert [r["stored_offset"] for r in asof(capsys, tmp_path, "--at", at, "--group", "billing")] == [90]
    assert asof(capsys, tmp_path, "--at", at, "--topic", "payments") == []
    # at the very instant of an observation, that observation counts
    later = asof(capsys, tmp_path, "--at", "2026-11-21T10:10:00Z")
    assert [(r["stored_offset"], r["file_hash"], r["line_no"]) for r in later] == [
        (120, "c2", 9),
        (5, None, 1),
    ]


def test_time_travel_reads_the_timeline_before_a_late_file_changed_it(tmp_path, capsys):
    write_rows(tmp_path, STORED_OFFSET_TIMELINE, FIRST)
    write_rows(tmp_path, STORED_OFFSET_TIMELINE, [LATE], mode="append")
    at = ["--at", "2026-11-21T10:07:00Z", "--group", "billing"]
    assert [(r["stored_offset"], r["source_file"]) for r in asof(capsys, tmp_path, *at)] == [
        (95, "/l/late.jsonl")
    ]
    assert [r["stored_offset"] for r in asof(capsys, tmp_path, *at, "--version", "0")] == [90]
    assert [
        r["stored_offset"] for r in asof(capsys, tmp_path, *at, "--as-of-lake", "2100-01-01T00:00:00Z")
    ] == [95]


def test_a_lake_before_the_timeline_existed_or_a_missing_version_is_a_usage_error(tmp_path, capsys):
    write_rows(tmp_path, STORED_OFFSET_TIMELINE, FIRST)
    at = ["asof", "--lake", str(tmp_path), "--at", "2026-11-21T10:07:00Z"]
    assert main([*at, "--as-of-lake", "2000-01-01T00:00:00Z"]) == EXIT_USAGE
    assert "silver_stored_offset_timeline" in capsys.readouterr().err
    assert main([*at, "--version", "7"]) == EXIT_USAGE
    assert "has no version 7" in capsys.readouterr().err


def test_a_path_holding_the_separator_or_its_escape_is_answered_as_it_landed(tmp_path, capsys):
    path = "/l/50%7C|x|.jsonl"  # the separator, and the text of its escape, in one name
    state = pa.table({"event_rank": pa.array([1], pa.int32()), "source_file": [path], "_file_hash": ["c3"],
                      "line_rank": pa.array([4], pa.int64())})  # fmt: skip
    seq = expressions.arrow(OBSERVATION_SEQ, state)[0].as_py()
    write_rows(tmp_path, STORED_OFFSET_TIMELINE, [observation("billing", 1, T10, "commit", 100, seq)])
    answer = asof(capsys, tmp_path, "--at", "2026-11-21T10:07:00Z")
    assert [(r["source_file"], r["file_hash"], r["line_no"]) for r in answer] == [(path, "c3", 4)]
