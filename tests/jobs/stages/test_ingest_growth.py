"""Which ingested copies a growing file of a batch continues (jobs.stages.ingest), without Spark:
files on disk, copies as ops/ingest_runs records them."""

from __future__ import annotations

import gzip
import hashlib
from datetime import UTC, datetime
from pathlib import Path

from jobs.io.growth import HEAD_BYTES, content_digest, content_head, head_digest, prefix_digests
from jobs.io.landing import LandedFile
from jobs.stages.ingest import NO_COPIES, Candidate, _growth

# more than HEAD_BYTES, half of it more too
LINES = b"".join(
    b'{"committed_at":"2026-11-21T00:%02d:%02dZ","offset":%d}\n' % (i // 60, i % 60, i) for i in range(200)
)
HALF = LINES[: LINES.index(b"\n", len(LINES) // 2) + 1]
GROUP = ("commits", "prod", None)


def _candidate(path: Path) -> Candidate:
    stat = path.stat()
    landed = LandedFile(
        path=path, relative=path.name, source_kind="commits", cluster="prod", broker=None,
        event_at=datetime(2026, 11, 21, tzinfo=UTC), time_source="mtime", size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )  # fmt: skip
    file_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    return Candidate(landed, file_hash, f"commits|prod|{file_hash}")


def _content(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


def _archive(path: Path, data: bytes) -> Candidate:
    path.write_bytes(gzip.compress(data))
    return _candidate(path)


def _plain(path: Path, data: bytes) -> Candidate:
    path.write_bytes(data)
    return _candidate(path)


def test_a_plain_copy_of_an_archive_landed_before_it_adds_only_what_the_archive_did_not_hold(tmp_path):
    archive = _archive(tmp_path / "00.jsonl.gz", HALF)
    copies = NO_COPIES.copy()
    head = head_digest(content_head(archive.file.path), len(HALF))
    landed = (str(archive.file.path), archive.file.size, archive.file.mtime_ns)
    copies.add(landed, GROUP, _content(HALF), archive.file_hash, head)

    unpacked = _plain(tmp_path / "unpacked-00.jsonl", LINES)
    growth = _growth([unpacked], copies)
    point = growth.points[str(unpacked.file.path)]
    # the rows the archive landed carry the archive's file hash, not its content's
    assert (point.skip_bytes, point.first_line, point.grew_from_hash) == (
        len(HALF),
        HALF.count(b"\n") + 1,
        archive.file_hash,
    )
    assert growth.heads[str(unpacked.file.path)] == head_digest(LINES, len(LINES))


def test_in_one_batch_the_shorter_content_is_landed_first_and_the_longer_continues_it(tmp_path):
    """An archive of a stream's first half and a plain copy of the whole stream, collected at once;
    and the same content twice, plain and compressed: the plain one lands it, the archive nothing."""
    archive = _archive(tmp_path / "00.jsonl.gz", HALF)
    whole = _plain(tmp_path / "00.jsonl", LINES)
    again = _archive(tmp_path / "otherdays-00.jsonl.gz", LINES)
    growth = _growth([again, whole, archive], NO_COPIES)
    assert str(archive.file.path) not in growth.points  # read whole
    assert growth.points[str(whole.file.path)].grew_from_hash == archive.file_hash
    nothing_new = growth.points[str(again.file.path)]
    assert (nothing_new.skip_bytes, nothing_new.grew_from_hash) == (len(LINES), whole.file_hash)
    assert nothing_new.nothing_new
    assert growth.contents == {str(archive.file.path): _content(HALF), str(again.file.path): _content(LINES)}


def test_a_copy_of_another_path_counts_only_when_its_content_begins_as_the_files(tmp_path):
    other = b'{"committed_at":"2026-11-21T01:00:00Z","offset":1}\n' + LINES  # begins otherwise
    copies = NO_COPIES.copy()
    copies.add(
        ("/landing/other.jsonl", 1, 1), GROUP, _content(other), "h-other", head_digest(other, len(other))
    )
    copies.add(("/landing/half.jsonl", 1, 1), GROUP, _content(HALF), "h-half", head_digest(HALF, len(HALF)))
    # copies shorter than a head: those the file's first bytes begin with (one cut inside a line)
    first = LINES[: LINES.index(b"\n") + 1]
    copies.add(("/landing/first.jsonl", 1, 1), GROUP, _content(first), "h-first", None)
    copies.add(("/landing/cut.jsonl", 1, 1), GROUP, _content(first[:-3]), "h-cut", None)
    copies.add(("/landing/not.jsonl", 1, 1), GROUP, _content(b"X" + first[1:]), "h-not", None)
    copies.add(("/landing/empty.jsonl", 0, 1), GROUP, _content(b""), "h-empty", None)
    # a copy as long as a head ingested before heads were recorded: a compressed file's content
    # may still continue it
    legacy = HALF + b"\n"
    copies.add(("/landing/legacy.jsonl", 1, 1), GROUP, _content(legacy), "h-legacy", None)

    plain = _plain(tmp_path / "00.jsonl", LINES)
    assert copies.before(plain.file, _content(LINES), False, content_head(plain.file.path)) == {
        _content(HALF),
        _content(first),
        _content(first[:-3]),
    }
    packed = _archive(tmp_path / "00.jsonl.gz", LINES)
    assert copies.before(packed.file, _content(LINES), True, content_head(packed.file.path)) == {
        _content(HALF),
        _content(first),
        _content(first[:-3]),
        _content(legacy),
    }
    # another group's copies are never candidates
    elsewhere = NO_COPIES.copy()
    elsewhere.add(
        ("/landing/half.jsonl", 1, 1), ("commits", "dev", None), _content(HALF), "h", head_digest(HALF, 99)
    )
    assert elsewhere.before(plain.file, _content(LINES), False, content_head(plain.file.path)) == set()


def test_a_content_shorter_than_a_head_has_none():
    assert head_digest(b"abc", 3) is None
    assert head_digest(LINES[:100], 10**9) is None  # the content could not be read that far
    assert head_digest(LINES, len(LINES)) == hashlib.sha256(LINES[:4096]).hexdigest()


def _ingested(copies, candidate: Candidate, content: tuple[int, str]) -> None:
    """``candidate`` recorded as ingested (its file as landed then)."""
    landed = (str(candidate.file.path), candidate.file.size, candidate.file.mtime_ns)
    head = head_digest(content_head(candidate.file.path), content[0])
    copies.add(landed, GROUP, content, candidate.file_hash, head)


def test_an_older_shorter_copy_landed_after_a_longer_one_adds_nothing(tmp_path):
    """The day's archive lands first, then a copy of the live file taken earlier in the day (its
    last line cut): every line of it is the archive's already."""
    archive = _archive(tmp_path / "00.jsonl.gz", LINES)
    copies = NO_COPIES.copy()
    _ingested(copies, archive, _content(LINES))
    cut = LINES[: len(HALF) + 20]
    older = _plain(tmp_path / "live-00.jsonl", cut)
    point = _growth([older], copies).points[str(older.file.path)]
    assert (point.skip_bytes, point.first_line, point.grew_from_hash) == (
        len(cut), cut.count(b"\n") + 1, archive.file_hash,
    )  # fmt: skip
    assert (point.reread_line, point.nothing_new) == (None, True)

    # the archive's file replaced since: it can no longer tell, and the copy is read whole
    archive.file.path.write_bytes(gzip.compress(LINES + LINES))
    assert str(older.file.path) not in _growth([older], copies).points
    # a copy that is not the start of a longer one is read whole
    other = _plain(tmp_path / "other.jsonl", LINES[:100] + b"X" + LINES[101 : len(HALF)])
    fresh = NO_COPIES.copy()
    _ingested(fresh, _plain(tmp_path / "01.jsonl", LINES), _content(LINES))
    assert str(other.file.path) not in _growth([other], fresh).points


def test_a_longer_copy_that_holds_a_late_copy_wins_over_a_shorter_one_it_continues(tmp_path):
    """Copies of one live file taken at three moments; the middle one lands last. It continues the
    first, but every line after the first is the last copy's already: it lands nothing."""
    copies = NO_COPIES.copy()
    early = _plain(tmp_path / "early.jsonl", LINES[: len(HALF) // 2 + 10])
    late = _plain(tmp_path / "late.jsonl", LINES)
    _ingested(copies, early, _content(early.file.path.read_bytes()))
    _ingested(copies, late, _content(LINES))
    middle = _plain(tmp_path / "middle.jsonl", LINES[: len(HALF) + 7])
    point = _growth([middle], copies).points[str(middle.file.path)]
    assert (point.skip_bytes, point.grew_from_hash, point.nothing_new) == (
        len(HALF) + 7,
        late.file_hash,
        True,
    )
    assert point.reread_line is None


def test_a_late_copy_shorter_than_a_head_adds_nothing_a_longer_copy_landed(tmp_path):
    """Copies of one live file taken at three moments, all shorter than a head; the middle one lands
    last. It continues the first, but the last holds all of it: it lands nothing. Held by a day's
    archive landed before it, with no copy before it, it lands nothing either."""
    short = LINES[: HEAD_BYTES - 100]
    early = _plain(tmp_path / "early.jsonl", short[:300])
    late = _plain(tmp_path / "late.jsonl", short)
    copies = NO_COPIES.copy()
    _ingested(copies, early, _content(short[:300]))
    _ingested(copies, late, _content(short))
    middle = _plain(tmp_path / "middle.jsonl", short[:2000])
    point = _growth([middle], copies).points[str(middle.file.path)]
    assert (point.skip_bytes, point.first_line, point.grew_from_hash, point.nothing_new) == (
        2000, short[:2000].count(b"\n") + 1, late.file_hash, True,
    )  # fmt: skip
    assert point.reread_line is None

    # held by a copy of a head's length or more, of another path, compressed
    archive = _archive(tmp_path / "00.jsonl.gz", LINES)
    held = NO_COPIES.copy()
    _ingested(held, archive, _content(LINES))
    point = _growth([middle], held).points[str(middle.file.path)]
    assert (point.grew_from_hash, point.nothing_new) == (archive.file_hash, True)
    # a copy it is not the start of holds none of it; nor does one whose file was replaced since
    other = _plain(tmp_path / "other.jsonl", short[:100] + b"X" + short[101:2000])
    assert str(other.file.path) not in _growth([other], held).points
    archive.file.path.write_bytes(gzip.compress(b"replaced\n" + LINES))
    assert str(middle.file.path) not in _growth([middle], held).points


def test_a_short_copy_is_held_only_by_what_a_longer_copy_landed(tmp_path):
    """A compressed short copy is held by its content; an empty file holds no line and is held by
    nothing; an archive damaged so that nothing of it could be read (recorded by its file, landing
    no line) holds nothing, though its first bytes still read and begin with the short copy."""
    short = LINES[: HEAD_BYTES - 100]
    archive = _archive(tmp_path / "00.jsonl.gz", short)
    copies = NO_COPIES.copy()
    _ingested(copies, archive, _content(short))
    early = _archive(tmp_path / "early.jsonl.gz", short[:1000])
    point = _growth([early], copies).points[str(early.file.path)]
    assert (point.skip_bytes, point.grew_from_hash, point.nothing_new) == (1000, archive.file_hash, True)
    empty = _plain(tmp_path / "empty.jsonl", b"")
    assert str(empty.file.path) not in _growth([empty], copies).points

    damaged = bytearray(gzip.compress(LINES, mtime=0))
    damaged[461] ^= 0xFF  # a deflate block the first read fails, after the first 4 KiB decompressed
    broken = tmp_path / "01.jsonl.gz"
    broken.write_bytes(bytes(damaged))
    assert content_digest(broken) is None and content_head(broken).startswith(LINES[:2018])
    unread = _candidate(broken)
    recorded = NO_COPIES.copy()
    recorded.add((str(broken), unread.file.size, unread.file.mtime_ns), GROUP,
                 (unread.file.size, unread.file_hash), unread.file_hash, None)  # fmt: skip
    live = _plain(tmp_path / "live-01.jsonl", LINES[:2018])
    assert str(live.file.path) not in _growth([live], recorded).points


def test_a_plain_file_of_another_path_continues_a_copy_shorter_than_a_head(tmp_path):
    """A live log copied when it held a few lines, then renamed by logback without compressing it:
    the renamed file adds only the lines after the early copy."""
    few = LINES[: LINES.index(b"\n", 300) + 1]
    early = _plain(tmp_path / "live-00.jsonl", few)
    copies = NO_COPIES.copy()
    _ingested(copies, early, _content(few))
    renamed = _plain(tmp_path / "00.1.jsonl", LINES)
    growth = _growth([renamed], copies)
    point = growth.points[str(renamed.file.path)]
    assert (point.skip_bytes, point.first_line, point.grew_from_hash) == (
        len(few), few.count(b"\n") + 1, early.file_hash,
    )  # fmt: skip
    # in one batch too, the short copy first
    both = _growth([renamed, early], NO_COPIES)
    assert str(early.file.path) not in both.points
    assert both.points[str(renamed.file.path)].skip_bytes == len(few)


def test_a_short_copy_is_told_from_a_files_head_at_any_size_it_reaches():
    head = b"a\nbb\r\ncc"
    assert dict(prefix_digests(head, {99, 2, 5, len(head)})) == {
        2: hashlib.sha256(b"a\n").hexdigest(),
        5: hashlib.sha256(b"a\nbb\r").hexdigest(),
        len(head): hashlib.sha256(head).hexdigest(),
    }


def test_a_plain_file_continues_a_short_copy_of_another_path_cut_inside_a_line(tmp_path):
    """A live file copied while a line was being written, then renamed plain: the renamed file reads
    the cut line again whole (it supersedes the copy's row of it) and the lines after it."""
    cut_at = LINES.index(b"\n", 300) + 20
    early = _plain(tmp_path / "live-00.jsonl", LINES[:cut_at])
    copies = NO_COPIES.copy()
    _ingested(copies, early, _content(LINES[:cut_at]))
    renamed = _plain(tmp_path / "00.1.jsonl", LINES)
    point = _growth([renamed], copies).points[str(renamed.file.path)]
    whole_lines = LINES[: LINES.rindex(b"\n", 0, cut_at) + 1]
    assert (point.skip_bytes, point.first_line, point.reread_line, point.grew_from_hash) == (
        len(whole_lines), whole_lines.count(b"\n") + 1, whole_lines.count(b"\n") + 1, early.file_hash,
    )  # fmt: skip
