"""A landed file that grew since an earlier copy of it was ingested: where its new lines begin.

A collector that copies a file still being written (an hourly commit log, a broker's log) lands
the same path again, longer. The earlier copy's lines were ingested with it; read again, they
would be landed and replayed twice. When an ingested copy of the path is a prefix of the new one
(its size and content hash match the new file's first bytes), only the lines after it are read,
numbered on from the earlier copy's. A last line the earlier copy cut short is read again, whole,
from its start, and replaces the earlier copy's row of it. A copy that is not a prefix (the file
was rewritten) is read in full, as another version of the path.

A file is compared by its content (decompressed, for a gzip stream), with the copies ingested of
any path of its kind, cluster and broker whose content begins as its does (the first ``HEAD_BYTES``,
recorded with each copy: ``head_digest``; a shorter copy's content, told from the file's first
bytes: ``prefix_digests``; a compressed copy's content is recorded with it too, ``content_digest``):
a rotated log (``otherdays/broker.1.log.gz``, or a plain file logback renamed) or an archived
commit stream holds the lines its live file's copies landed, and adds only the others; an archive
landed again longer, or compressed again otherwise, adds only what the earlier
archive did not hold; a plain copy of an archive adds only what the archive did not hold. An older,
shorter copy landed after a longer one adds nothing, when the longer copy's file is still landed as
it was ingested and begins with it: both begin with the same HEAD_BYTES (``held_lines``), or the
older copy is shorter than that and is the start of the longer one's first bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"
BLOCK_BYTES = 1 << 20  # an earlier copy is hashed as it is read, a block at a time
CHUNK_BYTES = 32 << 20  # a file's content is read in blocks this large (content_blocks)
DAMAGE = (OSError, EOFError, zlib.error)  # what reading a damaged gzip stream raises
# a copy of another path is compared with a file in full only if their contents begin with the
# same bytes, this many (every copy of a kind, cluster and broker is a candidate; a shorter copy is
# one when the file's first bytes are all of it: prefix_digests)
HEAD_BYTES = 4096


@dataclass(frozen=True)
class ResumePoint:
    """Read the file from byte ``skip_bytes`` on, its first line there being line ``first_line``.

    ``grew_from_hash`` is the content hash of the ingested copy the file continues. When that
    copy ended inside a line, ``reread_line`` is that line's number: the copy landed it cut short
    (a cut line can still parse: a log line ending in a number), it is read again here whole, and
    the earlier copy's row of it is superseded (pipelines.replay.events.without_reread_lines).
    ``nothing_new``: that copy holds all of the file, which is then not read, not even whole near
    a clock change (jobs.sources.collector.ParseContext.log_lines).
    """

    skip_bytes: int
    first_line: int
    grew_from_hash: str | None = None
    reread_line: int | None = None
    nothing_new: bool = False


FROM_START = ResumePoint(0, 1)  # a file read whole


def is_compressed(path: str | Path) -> bool:
    """Whether the file is a gzip stream (by its first bytes, whatever its name)."""
    with open(path, "rb") as probe:
        return probe.read(len(GZIP_MAGIC)) == GZIP_MAGIC


def content_blocks(handle: BinaryIO) -> Iterator[bytes]:
    """The handle's bytes in blocks of at least ``CHUNK_BYTES`` (the last may be shorter).

    Read a piece at a time (``read1``): a damaged gzip stream fails the read that reaches the
    damage, and a larger read would drop everything it had decompressed before it. Every piece
    read before the damage is yielded, then the error is raised. The text reader
    (jobs.io.text_lines) and ``content_digest`` both read so: a damaged stream's content is
    the same to both."""
    pieces: list[bytes] = []
    size = 0
    while True:
        try:
            piece = handle.read1(CHUNK_BYTES)
        except DAMAGE:
            if pieces:
                yield b"".join(pieces)
            raise
        if not piece:
            break
        pieces.append(piece)
        size += len(piece)
        if size >= CHUNK_BYTES:
            yield b"".join(pieces)
            pieces, size = [], 0
    if pieces:
        yield b"".join(pieces)


def content_digest(path: Path) -> tuple[int, str] | None:
    """A compressed file's decompressed content as the text reader lands it: (size, SHA-256), what
    a later copy that continues it is compared with. A damaged stream's content is its whole lines
    before the damage (an archive copied while it was being written: the complete one landed
    later continues it); None: nothing of it could be read."""
    digest, size, tail = hashlib.sha256(), 0, b""
    try:
        with gzip.open(path, "rb") as handle:
            for block in content_blocks(handle):
                data = tail + block
                cut = data.rfind(b"\n") + 1
                digest.update(data[:cut])
                size, tail = size + cut, data[cut:]
        digest.update(tail)  # a whole stream's last line, even without its newline, is landed
        size += len(tail)
    except DAMAGE:
        pass  # the line the damage cut is not landed
    return (size, digest.hexdigest()) if size else None


def content_head(path: Path) -> bytes:
    """The first ``HEAD_BYTES`` of the file's content (decompressed, for a gzip stream): fewer when
    the content is shorter, or the stream damaged within them."""
    head = b""
    try:
        with gzip.open(path, "rb") if is_compressed(path) else path.open("rb") as handle:
            while len(head) < HEAD_BYTES and (piece := handle.read1(HEAD_BYTES - len(head))):
                head += piece
    except DAMAGE:
        pass
    return head


def head_digest(head: bytes, size: int) -> str | None:
    """The SHA-256 of a content's first ``HEAD_BYTES``, given its ``head`` (``content_head``) and
    ``size``: what a copy records, and what a file must share with a copy of another path to be
    compared with it in full. None: the content is shorter, or could not be read that far."""
    return (
        hashlib.sha256(head[:HEAD_BYTES]).hexdigest()
        if size >= HEAD_BYTES and len(head) >= HEAD_BYTES
        else None
    )


def prefix_digests(head: bytes, sizes: Iterable[int]) -> Iterator[tuple[int, str]]:
    """(size, SHA-256 of the first ``size`` bytes of ``head``) for each of ``sizes`` that ``head``
    reaches: whether a file begins with a copy shorter than HEAD_BYTES, told from its head. One
    running hash, so that many sizes cost one pass and a digest each (fewer than HEAD_BYTES of them,
    however many copies; docs/experiments.md, "Copies shorter than 4 KiB")."""
    digest, hashed = hashlib.sha256(), 0
    for size in sorted(sizes):
        if size > len(head):
            break
        digest.update(head[hashed:size])
        hashed = size
        yield size, digest.copy().hexdigest()


class _Content:
    """A file's content (decompressed if it is a gzip stream), read forward, with a look ahead."""

    def __init__(self, handle: BinaryIO):
        self.handle, self.ahead = handle, b""

    def read(self, n: int) -> bytes:
        if self.ahead:
            block, self.ahead = self.ahead[:n], self.ahead[n:]
            return block
        return self.handle.read(n)

    def peek(self, n: int) -> bytes:
        if len(self.ahead) < n:
            self.ahead += self.handle.read(n - len(self.ahead))
        return self.ahead[:n]


def resume_point(path: Path, earlier: Iterable[tuple[int, str]]) -> ResumePoint | None:
    """Where the new lines of ``path`` begin, given the (content size, SHA-256) of copies ingested
    before (the longest prefix of its content among them wins); None: read it all.

    One pass over the content, as far as the largest copy: the running hash is compared at
    each copy's size."""
    compressed = is_compressed(path)
    # a copy of the same content continues the file with nothing new (a copy ingested of this very
    # content is the file itself, which is never ingested twice)
    copies = sorted({(n, h) for n, h in earlier if n > 0})
    if not copies:
        return None
    digest = hashlib.sha256()
    lines = offset = 0
    line_start = 0  # the byte after the last newline
    found = None
    try:
        with gzip.open(path, "rb") if compressed else path.open("rb") as handle:
            content = _Content(handle)
            for old_size, old_hash in copies:
                while offset < old_size:
                    block = content.read(min(BLOCK_BYTES, old_size - offset))
                    if not block:
                        return found  # the content ends before this copy's size
                    digest.update(block)
                    lines += block.count(b"\n")
                    if (last := block.rfind(b"\n")) >= 0:
                        line_start = offset + last + 1
                    offset += len(block)
                if digest.hexdigest() == old_hash:
                    found = _after(old_size, old_hash, lines, line_start, _peek(content))
    except DAMAGE:
        pass  # a damaged stream: the copies it holds whole still count
    return found


def held_lines(path: Path, size: int, content_hash: str) -> int | None:
    """The newlines of a content of ``size`` bytes and SHA-256 ``content_hash``, if the content of
    the file at ``path`` begins with it (it is an older, shorter copy of that file's); None if not."""
    digest, lines, offset = hashlib.sha256(), 0, 0
    try:
        with gzip.open(path, "rb") if is_compressed(path) else path.open("rb") as handle:
            while offset < size:
                block = handle.read(min(BLOCK_BYTES, size - offset))
                if not block:
                    return None
                digest.update(block)
                lines += block.count(b"\n")
                offset += len(block)
    except DAMAGE:
        return None
    return lines if digest.hexdigest() == content_hash else None


def _peek(content: _Content) -> bytes:
    """The next two bytes of the content; none where the stream is damaged right after the copy (a
    copy's content may end where a damaged archive's readable content ends)."""
    try:
        return content.peek(2)
    except DAMAGE:
        return b""


def _after(old_size: int, old_hash: str, lines: int, line_start: int, following: bytes) -> ResumePoint:
    """Where reading resumes after a copy of ``old_size`` bytes holding ``lines`` newlines, its last
    line beginning at ``line_start``, the content going on with ``following``."""
    if not following:  # the same content: nothing new
        return ResumePoint(old_size, lines + 1, old_hash, nothing_new=True)
    if line_start == old_size:  # the copy ended with a whole line
        return ResumePoint(old_size, lines + 1, old_hash)
    # the earlier copy's last line was whole, only its line end (LF or CRLF) missing
    for line_end in (b"\n", b"\r\n"):
        if following.startswith(line_end):
            return ResumePoint(old_size + len(line_end), lines + 2, old_hash)
    return ResumePoint(line_start, lines + 1, old_hash, reread_line=lines + 1)
