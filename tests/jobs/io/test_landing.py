"""Landed files: what each one is, and its content hash."""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime

import pytest

from jobs.io.landing import HASH_THREADS, content_hash, content_hashes, discover, parse_path_time


def test_files_hashed_in_parallel_keep_their_order(tmp_path):
    paths = []
    for n in range(HASH_THREADS * 3):
        path = tmp_path / f"file-{n}"
        path.write_bytes(bytes([n]) * (n * 300_000 + 1))  # some over hashlib's GIL-free block size
        paths.append(path)
    expected = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert content_hashes([(p, None) for p in paths]) == expected
    assert [content_hash(p) for p in paths] == expected
    assert content_hashes([(paths[0], None)]) == expected[:1]
    assert content_hashes([]) == []


def test_a_file_written_on_after_it_was_found_is_hashed_as_it_was_found(tmp_path):
    path = tmp_path / "commits.jsonl"
    path.write_bytes(b"x" * 3_000_000 + b"written on\n")
    found = hashlib.sha256(b"x" * 3_000_000).hexdigest()
    assert content_hash(path, 3_000_000) == found
    assert content_hashes([(path, 3_000_000), (path, 0)]) == [found, hashlib.sha256().hexdigest()]


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("2026-11-21T10:05:00Z", datetime(2026, 11, 21, 10, 5, tzinfo=UTC)),
        ("2026-11-21T18:05:00+08:00", datetime(2026, 11, 21, 10, 5, tzinfo=UTC)),
        ("2026-11-21T10:05-05:00", datetime(2026, 11, 21, 15, 5, tzinfo=UTC)),
        ("20261121T100500Z", datetime(2026, 11, 21, 10, 5, tzinfo=UTC)),
        ("2026-11-21", datetime(2026, 11, 21, tzinfo=UTC)),
        ("1795255500000", datetime(2026, 11, 21, 10, 5, tzinfo=UTC)),
        # a collector's 10:05 with its colon written as a dash, which ISO-8601 reads as 15:00 UTC
        ("2026-11-21T10-05", None),
        ("2026-11-21 10-05", None),
        ("2026-11-21_10-05", None),
        ("2026-11-21t10-05", None),
        ("20261121T10-05", None),
        (" 2026-11-21T10-05", None),
        ("2026-W47-6T10-05", None),
        ("2026-11-21T10+08", None),
        ("2026-11-21T10-05-00Z", None),
        ("yesterday", None),
    ],
)
def test_a_path_time_is_read_only_where_no_part_of_it_can_be_taken_for_another(text, read):
    assert parse_path_time(text) == read


def test_a_time_in_the_path_else_the_modification_time_with_a_warning_for_an_unread_one(tmp_path, caplog):
    pattern = {"snapshots": "snapshots/{cluster}/{broker}/{time}/*"}
    for time in ("2026-11-21T10:05:00Z", "1795255500000", "2026-11-21T10-05-00Z"):
        path = tmp_path / "snapshots" / "c1" / "broker-a" / time / "consumerOffset.json"
        path.parent.mkdir(parents=True)
        path.write_text("{}")
        os.utime(path, (0, 86_400))
    with caplog.at_level(logging.WARNING, logger="offsetlake.landing"):
        found = {f.relative.split("/")[3]: f for f in discover(tmp_path, pattern)}
    at = datetime(2026, 11, 21, 10, 5, tzinfo=UTC)
    assert (found["2026-11-21T10:05:00Z"].event_at, found["2026-11-21T10:05:00Z"].time_source) == (at, "path")
    assert (found["1795255500000"].event_at, found["1795255500000"].time_source) == (at, "path")
    unread = found["2026-11-21T10-05-00Z"]
    assert (unread.event_at, unread.time_source) == (datetime(1970, 1, 2, tzinfo=UTC), "unread")
    assert [r.getMessage() for r in caplog.records] == [
        "1 landed file(s) have a {time} that is neither ISO-8601 nor epoch milliseconds; their modification"
        " time is used instead (first: snapshots/c1/broker-a/2026-11-21T10-05-00Z/consumerOffset.json)"
    ]
