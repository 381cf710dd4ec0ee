"""Find landed files, tell what each one is, and identify it by content.

The landing directory is where collectors copy what brokers and clients leave behind. Each
source kind has a path pattern relative to it (jobs.sources declares the defaults; settings
may override them), e.g. ``snapshots/{cluster}/{broker}/{time}/*``. ``{time}`` is ISO-8601 UTC
(``2026-11-21T10:05:00Z``) or epoch milliseconds; a file whose path gives no time, or a
``{time}`` that is neither, takes its modification time (the second with a warning).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from schemas.instants import parse_utc

# hashlib lets go of the GIL while it hashes a large block, so files hash in parallel threads
# (docs/experiments.md, "Hashing landed files in threads")
HASH_THREADS = 4
log = logging.getLogger("offsetlake.landing")
_PLACEHOLDER = re.compile(r"\{(cluster|broker|time)\}")


class LandingError(RuntimeError):
    """The landing directory cannot be read; the message says what to fix."""


@dataclass(frozen=True)
class LandedFile:
    """One file found in the landing directory."""

    path: Path
    relative: str  # POSIX path below the landing root
    source_kind: str
    cluster: str
    broker: str | None
    event_at: datetime
    time_source: str  # "path"; "mtime" (no {time}); "unread" (a {time} not read: the mtime)
    size: int
    mtime_ns: int

    @property
    def name(self) -> str:
        return self.path.name


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Turn a landing pattern into a regex over POSIX paths relative to the landing root."""
    parts = []
    for segment in pattern.strip("/").split("/"):
        if segment == "**":
            parts.append("(?:[^/]+/)*")
            continue
        regex, position = "", 0
        for match in _PLACEHOLDER.finditer(segment):
            regex += re.escape(segment[position : match.start()]).replace(r"\*", "[^/]*")
            regex += f"(?P<{match.group(1)}>[^/]+)"
            position = match.end()
        regex += re.escape(segment[position:]).replace(r"\*", "[^/]*")
        parts.append(regex + "/")
    return re.compile("^" + "".join(parts)[:-1] + "$")


# An hour without its minutes, then a sign: Python's ISO-8601 reader takes "T10-05" (or "_10-05":
# any one character between date and time) as ten o'clock at UTC-05:00, where a collector that
# writes its colons as dashes meant 10:05. Such a time is not read.
_HOUR_THEN_OFFSET = re.compile(r"^\d{4}-?(?:\d{2}-?\d{2}|W\d{2}-?\d).\d{2}[+-]")


def parse_path_time(text: str) -> datetime | None:
    """ISO-8601 (``Z`` or offset; naive means UTC) or epoch milliseconds; None if neither, or
    if an offset follows an hour without its minutes (``2026-11-21T10-05``: see above)."""
    if text.isdigit():
        return datetime.fromtimestamp(int(text) / 1000, tz=UTC)
    if _HOUR_THEN_OFFSET.search(text.strip()):
        return None
    try:
        return parse_utc(text)
    except ValueError:
        return None


def discover(landing: Path, patterns: Mapping[str, str]) -> list[LandedFile]:
    """Every file under ``landing`` that one of ``patterns`` (source kind -> pattern) matches,
    in path order; a file two patterns match belongs to the first."""
    if not landing.is_dir():
        raise LandingError(f"landing directory {landing} does not exist or is not a directory")
    compiled = {kind: compile_pattern(pattern) for kind, pattern in patterns.items()}
    found: list[LandedFile] = []
    for directory, _, names in os.walk(landing):
        for name in names:
            path = Path(directory) / name
            relative = path.relative_to(landing).as_posix()
            for kind, regex in compiled.items():
                match = regex.match(relative)
                if match:
                    found.append(_landed(path, relative, kind, match.groupdict()))
                    break
    unread = sorted(f.relative for f in found if f.time_source == "unread")
    if unread:
        log.warning(
            "%d landed file(s) have a {time} that is neither ISO-8601 nor epoch milliseconds; their"
            " modification time is used instead (first: %s)",
            len(unread),
            unread[0],
        )
    return sorted(found, key=lambda f: str(f.path))


def _landed(path: Path, relative: str, kind: str, groups: dict[str, str]) -> LandedFile:
    stat = path.stat()
    event_at = parse_path_time(groups["time"]) if groups.get("time") else None
    return LandedFile(
        path=path,
        relative=relative,
        source_kind=kind,
        cluster=groups.get("cluster") or "default",
        broker=groups.get("broker"),
        event_at=event_at or datetime.fromtimestamp(stat.st_mtime, tz=UTC),
        time_source="path" if event_at else "unread" if groups.get("time") else "mtime",
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )


def still_landed(path: Path, size: int, mtime_ns: int) -> bool:
    """Whether the file at ``path`` is still the copy ingested with ``size`` and ``mtime_ns``: there,
    and not replaced by another copy since."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return (stat.st_size, stat.st_mtime_ns) == (size, mtime_ns)


def content_hash(path: Path, size: int | None = None) -> str:
    """SHA-256 of the file's bytes (its first ``size``: the file as it was found, though written
    on since), streamed."""
    digest, read = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while size is None or read < size:
            block = handle.read(1 << 20 if size is None else min(1 << 20, size - read))
            if not block:
                break
            digest.update(block)
            read += len(block)
    return digest.hexdigest()


def content_hashes(files: Sequence[tuple[Path, int | None]]) -> list[str]:
    """``content_hash`` of each (path, size), in order, hashed in ``HASH_THREADS`` threads."""
    if len(files) < 2:
        return [content_hash(*f) for f in files]
    with ThreadPoolExecutor(HASH_THREADS) as pool:
        return list(pool.map(lambda f: content_hash(*f), files))
