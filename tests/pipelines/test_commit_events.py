"""Canonical commit events: typed rows, kept extra fields, precise rejections."""

from __future__ import annotations

import json
from datetime import datetime

from pipelines.commit_events import COMMIT_COLUMNS, parse_commit_events
from schemas.tables import OFFSET_COMMITS
from tests.pipelines.lines_helper import (
    BROKEN_LINES,
    broken_files_on_disk,
    broken_lines,
    broken_reasons,
    lines_frame,
    rows_of,
    sorted_rows,
)

BASE = {"broker": "broker-a", "topic": "orders", "consumer_group": "billing", "queue_id": 5, "offset": 2611518}


def event(**fields) -> str:
    return json.dumps({**BASE, **fields})


def test_landed_columns_are_the_bronze_table_without_run_id_and_partition():
    assert COMMIT_COLUMNS == [c for c in OFFSET_COMMITS.columns if c not in ("_ingest_run_id", "commit_date")]


def test_valid_events_land_as_whole_rows(spark):
    lines = [
        "\ufeff" + event(committed_at="2021-06-04T00:00:00+08:00", client_host="10.0.0.7:35394", path="pull_piggyback"),
        event(committed_at=1622736000123, topic="%RETRY%billing", path="update_offset"),
        event(committed_at="1622736000000", queue_id=0, offset=0),
        event(committed_at="2021-06-03T16:00:00.123456789Z", offset=2**53 - 1, queue_id=65535),
        event(committed_at="2021-06-03T16:00:00Z", agent="hook-1.2", tags={"zone": ["a", 1]}, weight=1.5, on=True),
    ]
    parsed = parse_commit_events(lines_frame(spark, lines, broker=None, source_file="commits/c1/a.jsonl"))

    columns = ("line_no", "committed_at", "broker", "client_host", "topic", "consumer_group", "key_kind", "queue_id")
    columns += ("offset", "evidence", "commit_path", "reported_store_offset", "extra_fields", "cluster", "source_file")
    common = ("commit_log",)
    assert rows_of(parsed.landed, *columns) == sorted_rows(
        [
            (1, datetime(2021, 6, 3, 16, 0), "broker-a", "10.0.0.7:35394", "orders", "billing", "normal", 5, 2611518,
             *common, "pull_piggyback", None, None, "c1", "commits/c1/a.jsonl"),
            (2, datetime(2021, 6, 3, 16, 0, 0, 123000), "broker-a", None, "%RETRY%billing", "billing", "retry", 5,
             2611518, *common, "update_offset", None, None, "c1", "commits/c1/a.jsonl"),
            (3, datetime(2021, 6, 3, 16, 0), "broker-a", None, "orders", "billing", "normal", 0, 0,
             *common, None, None, None, "c1", "commits/c1/a.jsonl"),
            (4, datetime(2021, 6, 3, 16, 0, 0, 123456), "broker-a", None, "orders", "billing", "normal", 65535,
             2**53 - 1, *common, None, None, None, "c1", "commits/c1/a.jsonl"),
            (5, datetime(2021, 6, 3, 16, 0), "broker-a", None, "orders", "billing", "normal", 5, 2611518,
             *common, None, None, '{"agent":"hook-1.2","tags":{"zone":["a",1]},"weight":1.5,"on":true}', "c1",
             "commits/c1/a.jsonl"),
        ]
    )
    assert rows_of(parsed.rejected, "line_no") == []


def test_landed_schema_types(spark):
    parsed = parse_commit_events(lines_frame(spark, [event(committed_at=0)]))
    types = {f.name: f.dataType.simpleString() for f in parsed.landed.schema.fields}
    expected = {f.name: f.dataType.simpleString() for f in OFFSET_COMMITS.schema.fields if f.name in COMMIT_COLUMNS}
    assert types == expected


def test_blank_lines_are_not_records_and_read_errors_are(spark):
    lines = ["", "   ", "\t", event(committed_at=0), (None, "invalid UTF-8"), "oops"]
    parsed = parse_commit_events(lines_frame(spark, lines, source_file="x.jsonl"))

    assert rows_of(parsed.landed, "line_no", "committed_at") == [(4, datetime(1970, 1, 1))]
    assert rows_of(parsed.rejected, "source_file", "line_no", "reason", "raw", "cluster", "_file_hash") == sorted_rows(
        [
            ("x.jsonl", 5, "invalid UTF-8", None, "c1", "h-x.jsonl"),
            ("x.jsonl", 6, "not valid JSON", "oops", "c1", "h-x.jsonl"),
        ]
    )


def test_first_failing_check_gives_the_reason(spark):
    lines = [
        json.dumps({"queue_id": "x"}),  # several problems: the first required field missing wins
        event(committed_at="2021-06-03T16:00:00Z", queue_id=-1, offset=-1),
        event(committed_at="yesterday", path="rebalance"),
    ]
    parsed = parse_commit_events(lines_frame(spark, lines))

    assert rows_of(parsed.rejected, "line_no", "reason") == [
        (1, "missing field committed_at"),
        (2, "queue_id not an integer in [0, 65535]"),
        (3, "unparseable committed_at"),
    ]


def test_broken_corpus_is_listed_completely():
    assert broken_files_on_disk("commit_events") == set(broken_reasons("commit_events"))


def test_each_broken_file_is_rejected_with_its_reason(spark):
    parsed = parse_commit_events(broken_lines(spark, "commit_events"))

    assert rows_of(parsed.landed, "source_file") == []
    expected = []
    for name, reason in broken_reasons("commit_events").items():
        data = (BROKEN_LINES / name).read_bytes()
        raw = None if reason.startswith("invalid UTF-8") else data.decode("utf-8").strip()
        expected.append((name, reason, raw))
    assert rows_of(parsed.rejected, "source_file", "reason", "raw") == sorted_rows(expected)


def test_cached_parse_is_kept_once_and_gives_the_same_rows(spark):
    lines = [event(committed_at="2021-06-03T16:00:00Z"), '{"broker": "broker-a"', event(committed_at="2021-06-03T16:00:01Z", offset=-1)]
    parsed = parse_commit_events(lines_frame(spark, lines, broker=None, source_file="commits/c1/a.jsonl"))
    kept = []
    cached = parsed.cached(lambda df: kept.append(df) or df.persist())
    try:
        assert len(kept) == 1  # one frame both outputs filter: each line is parsed once
        assert rows_of(cached.landed, *COMMIT_COLUMNS) == rows_of(parsed.landed, *COMMIT_COLUMNS)
        assert rows_of(cached.rejected, "line_no", "reason", "raw") == rows_of(parsed.rejected, "line_no", "reason", "raw")
        assert cached.landed.count() == 1
        assert sorted((r.line_no, r.raw) for r in cached.rejected.collect()) == [(2, lines[1]), (3, lines[2])]
    finally:
        kept[0].unpersist()
