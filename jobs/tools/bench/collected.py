"""What a cluster's collector has landed of a simulated landing by an instant: the hourly bench's
landing, hour by hour.

The simulator writes every hour at once. A collector lands them as they come:

- a file whose path gives its time (a snapshot, an admin tool's output) once that time has passed;
- a file without one (a commit stream, a broker or client log) as a copy of what it holds by
  then: its lines before the first one written at or after the instant. A line without a time of
  its own (a stack trace's) goes with the line before it. A copy of a file that grew replaces the
  one landed before, as a collector copying a live file does; a file that did not grow is left as
  it was landed; a file with nothing yet is not landed.

So each hour's ingest lands that hour's commits and log lines, as a running schedule's does, not
every hour's in the first.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs.io.landing import discover
from jobs.tools.simulator.model import LOCAL_OFFSET_MS
from schemas.instants import parse_utc

# a commit event's time (schemas.records.CommitEvent as the simulator writes it), and a log line's
# leading local time (the simulator's logs are in GMT+8: jobs.tools.simulator.logs); a client log's
# milliseconds are left out, which cuts exactly at the whole seconds the bench's hours end on
_COMMITTED_AT = re.compile(rb'"committed_at":"([^"]+)"')
_LOGGED_AT = re.compile(rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_LOCAL_OFFSET = timedelta(milliseconds=LOCAL_OFFSET_MS)


def line_time(line: bytes) -> datetime | None:
    """When ``line`` was written, in UTC: a commit event's ``committed_at`` or a log line's leading
    local time; None for a line without one."""
    committed = _COMMITTED_AT.search(line)
    if committed:
        return parse_utc(committed[1].decode())
    logged = _LOGGED_AT.match(line)
    if logged:
        return datetime.strptime(logged[1].decode(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC) - _LOCAL_OFFSET
    return None


def written_before(content: bytes, until: datetime) -> bytes:
    """``content``'s lines before the first one written at or after ``until``."""
    position = 0
    for line in content.splitlines(keepends=True):
        at = line_time(line)
        if at is not None and at >= until:
            break
        position += len(line)
    return content[:position]


def _copy_at(content: bytes, until: datetime) -> bytes:
    """What a copy of a file holding ``content`` holds at ``until``: a compressed file (an archive)
    appears whole once every line in it was written, a plain one as the lines written before."""
    if content[:2] != b"\x1f\x8b":
        return written_before(content, until)
    lines = gzip.decompress(content)
    return content if written_before(lines, until) == lines else b""


def land_until(generated: Path, landing: Path, until: datetime, patterns: Mapping[str, str]) -> int:
    """Land into ``landing`` what a collector has of ``generated`` (a simulated landing) at
    ``until``; returns how many files were landed or replaced by a longer copy."""
    landed = 0
    for file in discover(generated, patterns):
        target = landing / file.relative
        if file.time_source == "path":
            if file.event_at >= until or target.exists():
                continue
            content = file.path.read_bytes()
        else:
            if target.exists() and target.stat().st_size == file.size:
                continue  # landed whole already
            content = _copy_at(file.path.read_bytes(), until)
            if not content or (target.exists() and target.stat().st_size >= len(content)):
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.part")
        temporary.write_bytes(content)
        # a collector's copy appears whole: the ingest never sees it half written
        os.replace(temporary, target)
        landed += 1
    return landed
