"""Canonical commit events: typed rows, kept extra fields, precise rejections.

Every parse test runs twice: on lines as read (strict path) and on lines the reader
pre-parsed (``pipelines.ingest.commit_preparse``); both must give the same rows.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest
from pydantic import ValidationError
from pyspark.sql import functions as F

from jobs.sources.commits import PREPARSED_COLUMNS
from pipelines.ingest.commit_events import (
    CHECKED,
    COMMIT_COLUMNS,
    NAME_WHITESPACE,
    PREPARSED,
    is_blank,
    parse_commit_events,
)
from schemas.records import CommitEvent
from schemas.tables import OFFSET_COMMITS
from tests.pipelines.ingest.lines_helper import (
    BROKEN_LINES,
    broken_files_on_disk,
    broken_lines,
    broken_reasons,
    files_frame,
    lines_frame,
    rows_of,
    sorted_rows,
    with_line_columns,
)
from tests.pipelines.ingest.test_commit_preparse import NOT_PLAIN, UNCHECKED

BASE = {
    "broker": "broker-a",
    "topic": "orders",
    "consumer_group": "billing",
    "queue_id": 5,
    "offset": 2611518,
}


PREPARSE = PREPARSED_COLUMNS  # as the reader adds them: a checked line's text stays behind


def event(**fields) -> str:
    return json.dumps({**BASE, **fields})


@pytest.fixture(params=["strict", "preparsed"])
def as_read(request, spark):
    """How the parser gets its lines: as read, or with the reader's pre-parse."""
    return (
        (lambda lines: lines)
        if request.param == "strict"
        else (lambda lines: with_line_columns(spark, lines, PREPARSE))
    )


def test_landed_columns_are_the_bronze_table_without_run_id_and_partition():
    assert [c for c in OFFSET_COMMITS.columns if c not in ("_ingest_run_id", "commit_date")] == COMMIT_COLUMNS


def test_valid_events_land_as_whole_rows(spark, as_read):
    lines = [
        "\ufeff"
        + event(
            committed_at="2021-06-04T00:00:00+08:00", client_host="10.0.0.7:35394", path="pull_piggyback"
        ),
        event(committed_at=1622736000123, topic="%RETRY%billing", path="update_offset"),
        event(committed_at="1622736000000", queue_id=0, offset=0),
        event(committed_at="2021-06-03T16:00:00.123456789Z", offset=2**53 - 1, queue_id=65535),
        event(
            committed_at="2021-06-03T16:00:00Z",
            agent="hook-1.2",
            tags={"zone": ["a", 1]},
            weight=1.5,
            on=True,
        ),
    ]
    parsed = parse_commit_events(
        as_read(lines_frame(spark, lines, broker=None, source_file="commits/c1/a.jsonl"))
    )

    columns = (
        "line_no",
        "committed_at",
        "broker",
        "client_host",
        "topic",
        "consumer_group",
        "key_kind",
        "queue_id",
    )
    columns += (
        "offset",
        "evidence",
        "commit_path",
        "reported_store_offset",
        "extra_fields",
        "cluster",
        "source_file",
    )
    common = ("commit_log",)
    assert rows_of(parsed.landed, *columns) == sorted_rows(
        [
            (
                1,
                datetime(2021, 6, 3, 16, 0),
                "broker-a",
                "10.0.0.7:35394",
                "orders",
                "billing",
                "normal",
                5,
                2611518,
                *common,
                "pull_piggyback",
                None,
                None,
                "c1",
                "commits/c1/a.jsonl",
            ),
            (
                2,
                datetime(2021, 6, 3, 16, 0, 0, 123000),
                "broker-a",
                None,
                "%RETRY%billing",
                "billing",
                "retry",
                5,
                2611518,
                *common,
                "update_offset",
                None,
                None,
                "c1",
                "commits/c1/a.jsonl",
            ),
            (
                3,
                datetime(2021, 6, 3, 16, 0),
                "broker-a",
                None,
                "orders",
                "billing",
                "normal",
                0,
                0,
                *common,
                None,
                None,
                None,
                "c1",
                "commits/c1/a.jsonl",
            ),
            (
                4,
                datetime(2021, 6, 3, 16, 0, 0, 123456),
                "broker-a",
                None,
                "orders",
                "billing",
                "normal",
                65535,
                2**53 - 1,
                *common,
                None,
                None,
                None,
                "c1",
                "commits/c1/a.jsonl",
            ),
            (
                5,
                datetime(2021, 6, 3, 16, 0),
                "broker-a",
                None,
                "orders",
                "billing",
                "normal",
                5,
                2611518,
                *common,
                None,
                None,
                '{"agent":"hook-1.2","tags":{"zone":["a",1]},"weight":1.5,"on":true}',
                "c1",
                "commits/c1/a.jsonl",
            ),
        ]
    )
    assert rows_of(parsed.rejected, "line_no") == []


def test_landed_schema_types(spark, as_read):
    parsed = parse_commit_events(as_read(lines_frame(spark, [event(committed_at=0)])))
    types = {f.name: f.dataType.simpleString() for f in parsed.landed.schema.fields}
    expected = {
        f.name: f.dataType.simpleString() for f in OFFSET_COMMITS.schema.fields if f.name in COMMIT_COLUMNS
    }
    assert types == expected


def test_blank_lines_are_not_records_and_read_errors_are(spark, as_read):
    # blank is what a regular expression's \s matches: a no-break space is not blank
    lines = ["", "   ", "\t", " \x0b\f\r", event(committed_at=0), (None, "invalid UTF-8"), "oops", "\u00a0"]
    parsed = parse_commit_events(as_read(lines_frame(spark, lines, source_file="x.jsonl")))

    assert rows_of(parsed.landed, "line_no", "committed_at") == [(5, datetime(1970, 1, 1))]
    assert rows_of(
        parsed.rejected, "source_file", "line_no", "reason", "raw", "cluster", "_file_hash"
    ) == sorted_rows(
        [
            ("x.jsonl", 6, "invalid UTF-8", None, "c1", "h-x.jsonl"),
            ("x.jsonl", 7, "not valid JSON", "oops", "c1", "h-x.jsonl"),
            ("x.jsonl", 8, "not valid JSON", "\u00a0", "c1", "h-x.jsonl"),
        ]
    )


def test_a_blank_name_is_white_space_throughout_wherever_the_text_starts(spark):
    """A blank name is what the record contract's ``\\S`` refuses: Unicode's white space (no-break
    and ideographic spaces too), not other control characters."""
    blank = ["", " ", " \t\n\x0b\f\r", "\u00a0", " \u00a0", "\u3000\u2009", "\x85"]
    not_blank = ["a", " a", "a ", "\ta\t", "a\u00a0", "\x1c"]
    texts = [*blank, *not_blank, None]
    frame = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, t string")
    blank_name = is_blank(F.col("t"), NAME_WHITESPACE)
    got = {r.i: r.blank for r in frame.select("i", blank_name.alias("blank")).collect()}
    assert [got[i] for i in range(len(texts))] == [True] * len(blank) + [False] * len(not_blank) + [None]
    for text in blank + not_blank:  # the contract agrees
        record = {"committed_at": "2021-06-03T16:00:00Z", "broker": text, "topic": "t", "consumer_group": "g",
                  "queue_id": 0, "offset": 0}  # fmt: skip
        assert (text in not_blank) == _contract_accepts(record), repr(text)


def _contract_accepts(record: dict) -> bool:
    try:
        CommitEvent.model_validate(record)
    except ValidationError:
        return False
    return True


def test_first_failing_check_gives_the_reason(spark, as_read):
    lines = [
        json.dumps({"queue_id": "x"}),  # several problems: the first required field missing wins
        event(committed_at="2021-06-03T16:00:00Z", queue_id=-1, offset=-1),
        event(committed_at="yesterday", path="rebalance"),
        event(committed_at="0000-01-01T00:00:00Z"),  # a year no Python client can hold
    ]
    parsed = parse_commit_events(as_read(lines_frame(spark, lines)))

    assert rows_of(parsed.rejected, "line_no", "reason") == [
        (1, "missing field committed_at"),
        (2, "queue_id not an integer in [0, 65535]"),
        (3, "unparseable committed_at"),
        (4, "unparseable committed_at"),
    ]


def test_broken_corpus_is_listed_completely():
    assert broken_files_on_disk("commit_events") == set(broken_reasons("commit_events"))


def test_each_broken_file_is_rejected_with_its_reason(spark, as_read):
    parsed = parse_commit_events(as_read(broken_lines(spark, "commit_events")))

    assert rows_of(parsed.landed, "source_file") == []
    expected = []
    for name, reason in broken_reasons("commit_events").items():
        data = (BROKEN_LINES / name).read_bytes()
        raw = None if reason.startswith("invalid UTF-8") else data.decode("utf-8").strip()
        expected.append((name, reason, raw))
    assert rows_of(parsed.rejected, "source_file", "reason", "raw") == sorted_rows(expected)


def test_cached_parse_is_kept_once_and_gives_the_same_rows(spark, as_read):
    lines = [
        event(committed_at="2021-06-03T16:00:00Z"),
        '{"broker": "broker-a"',
        event(committed_at="2021-06-03T16:00:01Z", offset=-1),
    ]
    parsed = parse_commit_events(
        as_read(lines_frame(spark, lines, broker=None, source_file="commits/c1/a.jsonl"))
    )
    kept = []
    cached = parsed.cached(lambda df: kept.append(df) or df.persist())
    try:
        assert len(kept) == 1  # one frame both outputs filter: each line is parsed once
        assert rows_of(cached.landed, *COMMIT_COLUMNS) == rows_of(parsed.landed, *COMMIT_COLUMNS)
        assert rows_of(cached.rejected, "line_no", "reason", "raw") == rows_of(
            parsed.rejected, "line_no", "reason", "raw"
        )
        assert cached.landed.count() == 1
        assert sorted((r.line_no, r.raw) for r in cached.rejected.collect()) == [(2, lines[1]), (3, lines[2])]
    finally:
        kept[0].unpersist()


def test_pre_parsed_lines_give_the_rows_the_strict_path_gives(spark):
    checkable = [
        event(committed_at="2021-06-03T16:00:00Z"),
        event(committed_at=1622736000123, client_host="10.0.0.7:35394", path="update_offset"),
        event(committed_at="1622736000000", queue_id=65535, offset=2**53 - 1),
        event(committed_at="2024-02-29T23:59:59.123456Z", path="pull_piggyback"),
    ]
    unchecked = [event(**fields) for fields in UNCHECKED]
    plain = [
        *checkable,
        event(committed_at="2021-06-04T00:00:00.250+08:00", topic="%RETRY%billing"),
        ' { "committed_at" : "2021-06-03T16:00:00Z" , "broker" : "b" , "topic" : "t" , "consumer_group" : "g" , "queue_id" : 1 , "offset" : 2 } ',
        event(committed_at="yesterday"),
        event(committed_at=-1),
        event(committed_at=10**16),
        event(committed_at="2021-06-03 16:00:00"),
        event(queue_id=-1, committed_at=0),
        event(queue_id=65536, committed_at=0),
        event(offset=2**53, committed_at=0),
        event(offset=-1, committed_at=0),
        event(path="rebalance", committed_at=0),
        event(broker=" ", committed_at=0),
        event(client_host=None, committed_at=0),
        event(topic=None, committed_at=0),
        "{}",
        json.dumps({"offset": 1}),
        event(committed_at="1969-12-31T23:59:59.5Z"),
        event(committed_at="0001-01-01T00:30:00+01:00"),  # year 1 moved back by its zone: year 0
        event(committed_at="2021-06-03T16:00:00.1Z", queue_id=0, offset=0, client_host="h"),
        *unchecked,
    ]
    # a name of no-break spaces is blank to both paths (the pre-parse leaves a line of non-ASCII text to the strict one)
    not_plain = [*NOT_PLAIN, event(topic="\u00a0\u3000", committed_at=0)]
    name = {line: f"commits/c1/{i:03}.jsonl" for i, line in enumerate(plain)}
    corpus = {f"commits/c1/{i:03}.jsonl": [line] for i, line in enumerate(plain + not_plain)}
    corpus["commits/c1/many.jsonl"] = [event(committed_at=i, offset=i) for i in range(2000)] + not_plain
    lines = files_frame(spark, corpus, broker=None)
    preparsed = with_line_columns(spark, lines, PREPARSE)
    # the fast path is taken by every plain line read alone, and by most of the large file
    taken = {
        r.source_file: r["count"] for r in preparsed.where(PREPARSED).groupBy("source_file").count().collect()
    }
    assert {name for name in taken if name != "commits/c1/many.jsonl"} == {
        f"commits/c1/{i:03}.jsonl" for i in range(len(plain))
    }
    assert taken["commits/c1/many.jsonl"] >= 2000 - 256
    # the lines that pass every check by the pre-parse's rules land without Spark's checks
    checked = {r.source_file for r in preparsed.where(CHECKED).select("source_file").distinct().collect()}
    assert {name[line] for line in checkable} <= checked
    assert not checked & {name[line] for line in unchecked}
    strict, fast = parse_commit_events(lines), parse_commit_events(preparsed)
    assert rows_of(fast.landed, *COMMIT_COLUMNS, "extra_fields") == rows_of(
        strict.landed, *COMMIT_COLUMNS, "extra_fields"
    )
    assert rows_of(fast.rejected, "source_file", "line_no", "reason", "raw") == rows_of(
        strict.rejected, "source_file", "line_no", "reason", "raw"
    )
    assert len(rows_of(strict.rejected, "line_no")) >= len(not_plain) * 2  # the corpus is mostly refusals
    assert ("blank field topic",) in rows_of(strict.rejected, "reason")


def test_the_parse_leaves_compiled_code_at_one_step(spark, as_read, capsys):
    # Spark compiles a projection into its generated code only when no expression in it is
    # interpreted; each projection left out copies every row out of the compiled code.
    parsed = parse_commit_events(as_read(lines_frame(spark, [event(committed_at=0)])))
    parsed.tagged.explain()
    plan = capsys.readouterr().out
    interpreted = [line for line in plan.splitlines() if re.match(r"^[ +\-:]*Project \[", line)]
    compiled = [line for line in plan.splitlines() if re.match(r"^[ +\-:]*\*\(\d+\) Project \[", line)]
    assert compiled and len(interpreted) == 1, plan
