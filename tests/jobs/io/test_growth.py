"""Where a landed file that grew since an ingested copy has its new lines."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from jobs.io.growth import DAMAGE, ResumePoint, content_digest, resume_point


def copy_of(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def after(data: bytes, skip_bytes: int, first_line: int, reread_line: int | None = None) -> ResumePoint:
    """The resume point of a file that continues the ingested copy ``data``."""
    return ResumePoint(skip_bytes, first_line, copy_of(data)[1], reread_line)


def all_of(data: bytes, first_line: int) -> ResumePoint:
    """The resume point of a file the ingested copy ``data`` holds whole: nothing new."""
    return ResumePoint(len(data), first_line, copy_of(data)[1], nothing_new=True)


def test_a_longer_copy_is_read_from_the_end_of_the_earlier_one(tmp_path):
    path = tmp_path / "00.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a":3}\n')
    assert resume_point(path, [copy_of(b'{"a":1}\n{"a":2}\n')]) == after(b'{"a":1}\n{"a":2}\n', 16, 3)
    # the longest ingested prefix wins
    longest = b'{"a":1}\n{"a":2}\n'
    assert resume_point(path, [copy_of(b'{"a":1}\n'), copy_of(longest)]) == after(longest, 16, 3)


def test_a_last_line_the_earlier_copy_cut_short_is_read_again_whole(tmp_path):
    path = tmp_path / "00.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a":3}\n')
    assert resume_point(path, [copy_of(b'{"a":1}\n{"a":')]) == after(b'{"a":1}\n{"a":', 8, 2, reread_line=2)
    # whole but for its newline: it was read, the next line is the first new one
    assert resume_point(path, [copy_of(b'{"a":1}\n{"a":2}')]) == after(b'{"a":1}\n{"a":2}', 16, 3)


def test_a_crlf_line_whole_but_for_its_line_end_is_not_read_again(tmp_path):
    path = tmp_path / "client.log"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert resume_point(path, [copy_of(b"one\r\ntwo")]) == after(b"one\r\ntwo", 10, 3)
    # cut between its carriage return and newline: whole too (the reader drops a trailing \r)
    assert resume_point(path, [copy_of(b"one\r\ntwo\r")]) == after(b"one\r\ntwo\r", 10, 3)
    # cut inside the line: read again from its start
    assert resume_point(path, [copy_of(b"one\r\ntw")]) == after(b"one\r\ntw", 5, 2, reread_line=2)


def test_a_rewritten_or_compressed_file_is_read_in_full(tmp_path):
    path = tmp_path / "00.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n')
    assert resume_point(path, [copy_of(b'{"a":9}\n')]) is None  # not a prefix: another version
    # another copy of the same content (an archive of it) holds all of it: nothing is new
    same = b'{"a":1}\n{"a":2}\n'
    assert resume_point(path, [copy_of(same)]) == all_of(same, 3)
    assert resume_point(path, []) is None
    packed = tmp_path / "00.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"a":1}\n') + gzip.compress(b'{"a":2}\n'))
    # a compressed copy ingested before is not compared by its bytes
    assert resume_point(packed, [copy_of(gzip.compress(b'{"a":1}\n'))]) is None


def test_a_compressed_file_continues_the_plain_copy_its_content_begins_with(tmp_path):
    """A rotated log (``otherdays/broker.1.log.gz``) holds what its live file's copies landed."""
    content = b"one\ntwo\nthree\n"
    rotated = tmp_path / "broker.1.log.gz"
    rotated.write_bytes(gzip.compress(content))
    assert resume_point(rotated, [copy_of(b"one\ntwo\n"), copy_of(b"other\n")]) == after(b"one\ntwo\n", 8, 3)
    assert resume_point(rotated, [copy_of(content)]) == all_of(content, 4)  # nothing new
    assert resume_point(rotated, [copy_of(b"one\ntw")]) == after(b"one\ntw", 4, 2, reread_line=2)
    assert resume_point(rotated, [copy_of(content + b"four\n")]) is None  # the content ends before it
    # a stream damaged after the copy's bytes still holds the copy
    damaged = tmp_path / "damaged.log.gz"
    packed = gzip.compress(content * 2000)
    damaged.write_bytes(packed[: len(packed) // 2])
    assert resume_point(damaged, [copy_of(content)]) == after(content, 14, 4)


def test_a_compressed_file_of_the_content_of_an_earlier_one_holds_nothing_new(tmp_path):
    """An archive compressed again otherwise: its content is the copy's, even a copy cut inside a line."""
    for content in (b"one\ntwo\n", b"one\ntw"):
        again = tmp_path / "again.log.gz"
        again.write_bytes(gzip.compress(content, compresslevel=1))
        assert content_digest(again) == copy_of(content)
        assert resume_point(again, [copy_of(content)]) == all_of(content, 3 if content.endswith(b"\n") else 2)


def test_a_damaged_streams_content_is_the_whole_lines_the_reader_lands(tmp_path):
    """An archive copied while it was being compressed: its content is what the reader landed of it,
    and the complete archive landed later continues it."""
    from jobs.io.text_lines import _chunks

    content = b"".join(b"line %d\n" % n for n in range(40000))
    packed = gzip.compress(content)
    damaged = tmp_path / "damaged.log.gz"
    damaged.write_bytes(packed[: len(packed) // 2])
    landed = b""
    with pytest.raises(DAMAGE):
        for chunk in _chunks(str(damaged)):
            landed += chunk
    assert 0 < len(landed) < len(content) and landed.endswith(b"\n")
    assert content_digest(damaged) == copy_of(landed)
    complete = tmp_path / "complete.log.gz"
    complete.write_bytes(packed)
    assert resume_point(complete, [copy_of(landed)]) == after(landed, len(landed), landed.count(b"\n") + 1)
    # damaged right after its content: it holds the copy, and nothing new
    cut_trailer = tmp_path / "cut-trailer.log.gz"
    cut_trailer.write_bytes(packed[:-4])
    assert content_digest(cut_trailer) == copy_of(content)
    assert resume_point(cut_trailer, [copy_of(content)]) == all_of(content, 40001)
    nothing = tmp_path / "nothing.log.gz"
    nothing.write_bytes(packed[:12])
    assert content_digest(nothing) is None


def test_the_reader_numbers_a_grown_files_new_lines_on(spark, tmp_path: Path):
    from jobs.io.text_lines import TextFile, read_lines

    path = tmp_path / "00.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    grown = TextFile(str(path), str(path), "c", None, None, "UTC", "h", skip_bytes=8, first_line=3)
    rows = read_lines(spark, [grown]).select("line_no", "line").collect()
    assert [(r.line_no, r.line) for r in rows] == [(3, "three")]


def test_the_earlier_copy_is_hashed_and_counted_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr("jobs.io.growth.BLOCK_BYTES", 3)
    path = tmp_path / "00.jsonl"
    path.write_bytes(b'{"a":1}\n{"a":2}\n{"a":3}\n')
    assert resume_point(path, [copy_of(b'{"a":1}\n{"a":2}\n')]) == after(b'{"a":1}\n{"a":2}\n', 16, 3)
    assert resume_point(path, [copy_of(b'{"a":1}\n{"a":')]) == after(b'{"a":1}\n{"a":', 8, 2, reread_line=2)
    assert resume_point(path, [copy_of(b'{"a":1}\n{"a":2}')]) == after(b'{"a":1}\n{"a":2}', 16, 3)
