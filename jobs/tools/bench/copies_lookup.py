"""What choosing the copies a growing file continues costs the ingest's driver (jobs.stages.ingest._growth).

A batch of growing client logs, each about 9 KiB, against earlier copies of their group: copies
that begin with 4 KiB of their own (looked up by the digest of their first 4 KiB), or copies shorter
than that, each of another size (the worst case for the short-copy check: one digest per file and
size). With ``--late``, the batch's logs are shorter than 4 KiB and the earlier copies are landed
9 KiB logs, none beginning with them: each copy's head is read, once, to tell whether it holds a
short file. Prints the median of the rounds. Not part of ``offsetlake bench``, which times whole runs::

    python -m jobs.tools.bench.copies_lookup --files 1200 --copies 3600 --short
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from jobs.io.growth import HEAD_BYTES, content_head, head_digest
from jobs.io.landing import LandedFile
from jobs.stages.ingest import NO_COPIES, Candidate, Copies, Group, _growth

GROUP: Group = ("client_logs", "prod", "broker-a")


def _logs(directory: Path, count: int, lines_each: int = 200, name: str = "client") -> list[Candidate]:
    """``count`` logs of ``lines_each`` lines (200: about 9 KiB), each of its own content (its
    ``name`` and number in every line)."""
    candidates = []
    for n in range(count):
        path = directory / f"{name}-{n}.log"
        lines = (
            b"2026-11-29 10:%02d:%02d,000 INFO %s %d line %d\n" % (i // 60, i % 60, name.encode(), n, i)
            for i in range(lines_each)
        )
        path.write_bytes(b"".join(lines))
        stat = path.stat()
        landed = LandedFile(
            path=path, relative=path.name, source_kind=GROUP[0], cluster=GROUP[1], broker=GROUP[2],
            event_at=datetime(2026, 11, 29, tzinfo=UTC), time_source="mtime", size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
        )  # fmt: skip
        file_hash = hashlib.sha256(path.read_bytes()).hexdigest()
        candidates.append(Candidate(landed, file_hash, file_hash))
    return candidates


def _copies(count: int, short: bool) -> Copies:
    """``count`` earlier copies that no file continues: short ones of sizes 1, 2, ... (cycling below
    HEAD_BYTES), or long ones, each with its own head."""
    copies = NO_COPIES.copy()
    for n in range(count):
        digest = hashlib.sha256(b"copy %d" % n).hexdigest()
        size = 1 + n % (HEAD_BYTES - 1) if short else HEAD_BYTES + n
        head = None if short else digest
        copies.add((f"/landing/earlier-{n}.log", size, 1), GROUP, (size, digest), digest, head)
    return copies


def _landed_copies(directory: Path, count: int) -> Copies:
    """``count`` landed 9 KiB logs, recorded as ingested copies with their heads."""
    copies = NO_COPIES.copy()
    for c in _logs(directory, count, name="earlier"):
        head = head_digest(content_head(c.file.path), c.file.size)
        copies.add((str(c.file.path), c.file.size, c.file.mtime_ns), GROUP, (c.file.size, c.file_hash),
                   c.file_hash, head)  # fmt: skip
    return copies


def measure(files: int, copies: int, short: bool, rounds: int, late: bool = False) -> list[float]:
    """Seconds ``_growth`` took for each round."""
    with tempfile.TemporaryDirectory(prefix="copies-lookup-") as directory:
        # 40 lines: about 1.8 KiB, shorter than a head
        candidates = _logs(Path(directory), files, lines_each=40 if late else 200)
        landed = _landed_copies(Path(directory), copies) if late else None
        times = []
        for _ in range(rounds):
            earlier = landed if late else _copies(copies, short)
            started = time.perf_counter()
            growth = _growth(candidates, earlier)
            times.append(time.perf_counter() - started)
            if growth.points:
                raise AssertionError("a file was taken to continue a copy it does not begin with")
        return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1200, help="growing files in the batch")
    parser.add_argument("--copies", type=int, default=3600, help="earlier copies of their group")
    parser.add_argument(
        "--short", action="store_true", help="copies shorter than 4 KiB, each of its own size"
    )
    parser.add_argument(
        "--late", action="store_true", help="files shorter than 4 KiB against landed 9 KiB copies"
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    times = measure(args.files, args.copies, args.short, args.rounds, args.late)
    kind = (
        "landed 9 KiB copies (files shorter than 4 KiB)"
        if args.late
        else "short copies of distinct sizes"
        if args.short
        else "copies with 4 KiB heads"
    )
    print(
        f"_growth: {args.files} files against {args.copies} {kind}: median {statistics.median(times):.3f} s "
        f"(rounds {', '.join(f'{t:.3f}' for t in times)}; load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
