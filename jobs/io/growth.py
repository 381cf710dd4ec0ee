"""A landed file that grew since an earlier copy of it was ingested: where its new lines begin.

A collector that copies a file still being written (an hourly commit log, a broker's log) lands
the same path again, longer. The earlier copy's lines were ingested with it; read again, they
would be landed and replayed twice. When an ingested copy of the path is a prefix of the new one
(its size and content hash match the new file's first bytes), only the lines after it are read,
numbered on from the earlier copy's. A last line the earlier copy cut short is read again, whole,
from its start, and replaces the earlier copy's row of it. A copy that is not a prefix (the file was rewritten) is read in full, as another
version of the path; so is a compressed file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
BLOCK_BYTES = 1 << 20  # an earlier copy is hashed as it is read, a block at a time


@dataclass(frozen=True)
class ResumePoint:
    """Read the file from byte ``skip_bytes`` on, its first line there being line ``first_line``.

    ``grew_from_hash`` is the content hash of the ingested copy the file continues. When that
    copy ended inside a line, ``reread_line`` is that line's number: the copy landed it cut short
    (a cut line can still parse: a log line ending in a number), it is read again here whole, and
    the earlier copy's row of it is superseded (pipelines.replay.events.without_reread_lines).
    """

    skip_bytes: int
    first_line: int
    grew_from_hash: str | None = None
    reread_line: int | None = None


FROM_START = ResumePoint(0, 1)  # a file read whole


def resume_point(path: Path, earlier: Iterable[tuple[int, str]]) -> ResumePoint | None:
    """Where the new lines of ``path`` begin, given the (size, SHA-256) of its copies ingested
    before (the longest prefix of them wins); None: read it all."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        if handle.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
            return None
    for old_size, old_hash in sorted(set(earlier), reverse=True):
        if not 0 < old_size < size:
            continue
        digest, lines, line_start = hashlib.sha256(), 0, 0  # line_start: the byte after the last newline
        with path.open("rb") as handle:
            for offset in range(0, old_size, BLOCK_BYTES):
                block = handle.read(min(BLOCK_BYTES, old_size - offset))
                digest.update(block)
                lines += block.count(b"\n")
                if (last := block.rfind(b"\n")) >= 0:
                    line_start = offset + last + 1
            following = handle.read(2)
        if digest.hexdigest() != old_hash:
            continue
        if line_start == old_size:
            return ResumePoint(old_size, lines + 1, old_hash)
        # the earlier copy's last line was whole, only its line end (LF or CRLF) missing
        for line_end in (b"\n", b"\r\n"):
            if following.startswith(line_end):
                return ResumePoint(old_size + len(line_end), lines + 2, old_hash)
        return ResumePoint(line_start, lines + 1, old_hash, reread_line=lines + 1)
    return None
