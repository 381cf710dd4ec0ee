"""The line reader: exact line numbers, CRLF, gzip, and damage turned into rows."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import replace
from datetime import UTC, datetime

import pyarrow as pa

from jobs.io.text_lines import TextFile, _gathered, balanced_bins, read_file_lines, read_lines
from tests.frames import assert_frames_equal

AT = datetime(2026, 11, 21, 10, 5, tzinfo=UTC)


def text_file(path, name=None) -> TextFile:
    return TextFile(
        path=str(path),
        source_file=name or path.name,
        cluster="c1",
        broker="broker-a",
        event_at=AT,
        source_timezone="Asia/Shanghai",
        file_hash="h-" + path.name,
    )


def lines_of(spark, *files):
    rows = read_lines(spark, [text_file(f) for f in files]).collect()
    return sorted((r.source_file, r.line_no, r.line, r.read_error) for r in rows)


def test_plain_file_without_trailing_newline(spark, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a":1}\n\n{"b":2}')
    assert lines_of(spark, path) == [
        ("a.jsonl", 1, '{"a":1}', None),
        ("a.jsonl", 2, "", None),
        ("a.jsonl", 3, '{"b":2}', None),
    ]


def test_crlf_line_ends_are_removed(spark, tmp_path):
    path = tmp_path / "client.log"
    path.write_bytes(b"first\r\nsecond\r\n")
    assert lines_of(spark, path) == [("client.log", 1, "first", None), ("client.log", 2, "second", None)]


def test_only_the_carriage_return_ending_a_line_is_removed(spark, tmp_path):
    path = tmp_path / "mixed.log"
    path.write_bytes(b"a\rb\n\r\nc\r\r\n\rd\ne")
    assert [line for _, _, line, _ in lines_of(spark, path)] == ["a\rb", "", "c\r", "\rd", "e"]


def test_gzip_is_read_by_content_not_name(spark, tmp_path):
    path = tmp_path / "broker.log.1"
    path.write_bytes(gzip.compress(b"x\ny\n"))
    assert lines_of(spark, path) == [("broker.log.1", 1, "x", None), ("broker.log.1", 2, "y", None)]


def test_corrupt_gzip_keeps_lines_before_the_damage(spark, tmp_path):
    body = b"".join(b"line %d\n" % i for i in range(1, 20001))
    compressed = gzip.compress(body)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    # every line whole in what the cut stream still decompresses to: thousands, not none
    whole = zlib.decompressobj(wbits=31).decompress(compressed[: len(compressed) // 2]).count(b"\n")
    assert whole > 5000
    rows = lines_of(spark, path)
    good, bad = rows[:-1], rows[-1]
    assert good == [("cut.jsonl.gz", i, f"line {i}", None) for i in range(1, whole + 1)]
    assert bad[1] == len(good) + 1 and bad[2] is None
    assert bad[3].startswith("corrupt gzip stream")


def test_invalid_utf8_line_is_flagged_and_neighbours_kept(spark, tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"ok\n\xff\xfebad\nalso ok\n")
    assert lines_of(spark, path) == [
        ("mixed.jsonl", 1, "ok", None),
        ("mixed.jsonl", 2, None, "invalid UTF-8 at byte 0 of the line"),
        ("mixed.jsonl", 3, "also ok", None),
    ]


def test_empty_and_vanished_files(spark, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    gone = tmp_path / "gone.jsonl"
    rows = lines_of(spark, empty, gone)
    assert len(rows) == 1
    assert rows[0][:3] == ("gone.jsonl", 1, None) and rows[0][3].startswith("cannot read file")


def test_metadata_columns_travel_with_each_line(spark, tmp_path):
    path = tmp_path / "m.log"
    path.write_bytes(b"only\n")
    row = read_lines(spark, [text_file(path)]).collect()[0]
    assert (row.cluster, row.broker, row.source_timezone, row._file_hash) == (
        "c1",
        "broker-a",
        "Asia/Shanghai",
        "h-m.log",
    )
    assert row.event_at.replace(tzinfo=UTC) == AT


def test_files_are_grouped_into_tasks_of_similar_size():
    sizes = [50, 10, 40, 30, 20, 20, 10]
    groups = balanced_bins(sizes, 3)
    assert sorted(i for g in groups for i in g) == list(range(len(sizes)))
    totals = [sum(sizes[i] for i in g) for g in groups]
    assert totals == sorted(totals, reverse=True) and max(totals) - min(totals) <= 10
    assert balanced_bins([5, 7], 8) == [[1], [0]]  # a task per file when there are few
    assert balanced_bins([], 4) == []


def test_many_files_read_in_parallel_keep_their_lines(spark, tmp_path):
    paths = []
    for n in range(40):
        path = tmp_path / f"f{n:02}.log"
        path.write_text("".join(f"{n}:{i}\n" for i in range(n + 1)))
        paths.append(path)
    rows = lines_of(spark, *paths)
    assert len(rows) == sum(n + 1 for n in range(40))
    assert all(line == f"{name[1:3].lstrip('0') or '0'}:{line_no - 1}" for name, line_no, line, _ in rows)


def test_small_files_lines_leave_the_worker_in_few_batches_in_order():
    sizes = [3, 5, 10_000, 2, 8_190, 4, 1]
    start = [sum(sizes[:n]) for n in range(len(sizes))]
    batches = [pa.record_batch({"n": pa.array(range(s, s + size))}) for s, size in zip(start, sizes)]
    gathered = list(_gathered(iter(batches), lines=8_192))
    # 3 + 5 + 10,000 reach 8,192 together; 2 + 8,190 exactly; 4 + 1 are what is left
    assert [b.num_rows for b in gathered] == [10_008, 8_192, 5]
    assert [n for b in gathered for n in b.column("n").to_pylist()] == list(range(sum(sizes)))
    assert list(_gathered(iter([]))) == []


def test_a_source_adds_columns_computed_from_each_batch_of_lines(spark, tmp_path):
    from jobs.sources.commits import PREPARSED_COLUMNS

    plain = '{"committed_at":1,"broker":"b","topic":"t","consumer_group":"g","queue_id":%d,"offset":2}'
    path = tmp_path / "c.jsonl.gz"
    lines = [plain % i for i in range(300)] + [plain % 70000, '{"broker":"b","x":1}']
    path.write_bytes(gzip.compress(("\r\n".join(lines) + "\r\n").encode()))
    rows = read_lines(spark, [text_file(path)], PREPARSED_COLUMNS).collect()
    # CRLF removed and gzip read before the pre-parse; the line with an extra field is not plain
    assert sorted((r.line_no, r._pre, r._pre_queue_id, r._pre_committed_at_number) for r in rows) == [
        *[(n, True, str(n - 1), True) for n in range(1, 301)],
        (301, True, "70000", True),
        (302, False, None, None),
    ]
    # a checked line's text stays behind (its columns say it all); the others' is kept
    assert sorted((r.line_no, r._pre_checked, r.line, r.read_error) for r in rows) == [
        *[(n, True, None, None) for n in range(1, 301)],
        (301, False, plain % 70000, None),
        (302, False, '{"broker":"b","x":1}', None),
    ]


def test_commit_events_parsed_by_file_number_equal_those_parsed_with_their_files_columns(spark, tmp_path):
    from jobs.sources.commits import PREPARSED_COLUMNS
    from pipelines.ingest.commit_events import parse_commit_events

    plain = '{"committed_at":1,"broker":"b","topic":"t","consumer_group":"g","queue_id":%d,"offset":2}'
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("\n".join([plain % 1, plain % 70000, "not json"]) + "\n")
    second.write_text("\n".join([plain % 2, '{"broker":"b","x":1}']) + "\n")
    files = [text_file(first), text_file(second)]
    read = read_file_lines(spark, files, PREPARSED_COLUMNS)
    by_number = parse_commit_events(read.lines, read.files)
    named = parse_commit_events(read_lines(spark, files, PREPARSED_COLUMNS))
    assert "source_file" not in by_number.tagged.columns
    assert_frames_equal(by_number.landed, named.landed)
    assert_frames_equal(by_number.rejected, named.rejected)
    assert sorted((r.source_file, r.line_no, r.reason) for r in by_number.rejected.collect()) == [
        ("a.jsonl", 2, "queue_id not an integer in [0, 65535]"),
        ("a.jsonl", 3, "not valid JSON"),
        ("b.jsonl", 2, "missing field committed_at"),
    ]
    assert [
        tuple(r)
        for r in by_number.landed.select("source_file", "cluster", "_file_hash", "queue_id")
        .orderBy("source_file")
        .collect()
    ] == [
        ("a.jsonl", "c1", "h-a.jsonl", 1),
        ("b.jsonl", "c1", "h-b.jsonl", 2),
    ]


def test_a_plain_file_is_read_as_far_as_it_was_found(spark, tmp_path):
    plain, packed = tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz"
    plain.write_bytes(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    packed.write_bytes(gzip.compress(b'{"a":1}\n{"b":2}\n'))
    found = [replace(text_file(plain), size=12), replace(text_file(packed), size=5)]
    rows = sorted((r.source_file, r.line_no, r.line) for r in read_lines(spark, found).collect())
    # the line written on after the file was found cut is landed as found: its next copy reads it again
    assert rows == [
        ("a.jsonl", 1, '{"a":1}'),
        ("a.jsonl", 2, '{"b"'),
        ("b.jsonl.gz", 1, '{"a":1}'),
        ("b.jsonl.gz", 2, '{"b":2}'),
    ]
