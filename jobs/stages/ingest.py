"""Ingest stage: new landed files -> bronze tables, bad records -> quarantine, accounting -> ops.

A run ingests each file identity once (jobs.io.landing.identity). Files go in batches, and
a batch is crash-safe: its files are first recorded as ``pending`` in ops/ingest_runs;
each bronze append carries a Delta transaction id of the batch, so repeating it is a
no-op; the files' final status and record counts are recorded last. A run that finds a
pending batch (a crash) completes it first: whatever it had written is not written twice.
A longer copy of a commit stream or log ingested before adds only its new lines, and so does a
compressed one of the content of copies ingested before (a rotated log, an archive landed again
longer or compressed otherwise; jobs.io.growth). A plain file is hashed and read as it was found
(its size then): lines a collector writes on after that land with its next copy, once.

With ``--to``, files whose path gives a time at or after it (snapshots, admin-tool outputs,
client offsets) wait for the run that covers them; one of a time before ``--from`` that landed
after the run of its time is ingested by the next run (its replay reaches back to it:
jobs.stages.replay). Files without a time in their path (commit streams, logs) are ingested
whole when they first appear.
"""

from __future__ import annotations

import hashlib
import logging
from bisect import bisect_left
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.io.checked_commits import CheckedCommitWriter
from jobs.io.growth import (
    FROM_START,
    HEAD_BYTES,
    ResumePoint,
    content_digest,
    content_head,
    head_digest,
    held_lines,
    is_compressed,
    prefix_digests,
    resume_point,
)
from jobs.io.lake import Lake
from jobs.io.landing import LandedFile, content_hashes, discover, still_landed
from jobs.io.worker_files import FileCount
from jobs.runtime.concurrent import side_by_side
from jobs.sources import BY_KIND, parse_sources, patterns
from jobs.sources.collector import SourceOutput
from jobs.stages.context import IngestResult, RunContext
from schemas.config import Settings
from schemas.tables import INGEST_RUNS, OFFSET_COMMITS, REJECTED_INPUTS, TableSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    file: LandedFile
    file_hash: str
    identity: str


def run(context: RunContext) -> None:
    """The stage's entry (see jobs.stages.runner)."""
    context.ingest = run_ingest(context.lake, context.settings, context.landing, context.end, context.run_id)


Content = tuple[int, str]  # a file's content: its size and SHA-256 (decompressed, for a gzip stream)
Group = tuple[str, str | None, str | None]  # (source kind, cluster, broker)


def _group(file: LandedFile) -> Group:
    return file.source_kind, file.cluster, file.broker


@dataclass(frozen=True)
class Copies:
    """The content of the ingested copies of growing files: by path; by (source kind, cluster, broker)
    and the digest of their first bytes (jobs.io.growth.head_digest), which a file of another path
    beginning with the same bytes may continue; by group and size, those shorter than that (``short``:
    a file's first bytes tell whether it begins with one); by group, those longer without that digest
    (``headless``: ingested before it was recorded, or a damaged archive whose first bytes could not
    be read). ``row_hashes``: by content hash, the ``_file_hash`` its rows landed with (a compressed
    copy's is its file's, not its content's); ``files``: by content hash, the landed file (path,
    size, mtime) of the copy that holds it; ``by_group``: every copy of a group that holds a line,
    with its head's digest as recorded, and ``heads_read``, by group, the first HEAD_BYTES of those
    still landed as recorded, sorted: read once per batch (``copy`` leaves them out), when a copy
    shorter than that asks which longer copy holds it."""

    by_path: dict[str, set[Content]]
    by_head: dict[tuple[Group, str], set[Content]]
    short: dict[Group, dict[int, set[str]]]
    headless: dict[Group, set[Content]]
    row_hashes: dict[str, str]
    files: dict[str, tuple[str, int, int]]
    by_group: dict[Group, dict[Content, str | None]] = field(default_factory=dict)
    heads_read: dict[Group, list[tuple[bytes, int, str]]] = field(default_factory=dict)

    def add(
        self, file: tuple[str, int, int], group: Group, content: Content, file_hash: str, head: str | None
    ) -> None:
        """Count a copy's content among the copies (``file``: its path, size and mtime). The first
        copy of a content keeps its row hash and file: a later one of the same content landed nothing."""
        self.by_path.setdefault(file[0], set()).add(content)
        if head is not None:
            self.by_head.setdefault((group, head), set()).add(content)
        elif content[0] >= HEAD_BYTES:
            self.headless.setdefault(group, set()).add(content)
        elif content[0]:  # an empty copy begins every file and holds no line
            self.short.setdefault(group, {}).setdefault(content[0], set()).add(content[1])
        if content[0]:
            self.by_group.setdefault(group, {}).setdefault(content, head)
        self.row_hashes.setdefault(content[1], file_hash)
        self.files.setdefault(content[1], file)

    def copy(self) -> Copies:
        return Copies(
            {path: set(c) for path, c in self.by_path.items()},
            {key: set(c) for key, c in self.by_head.items()},
            {group: {size: set(h) for size, h in by_size.items()} for group, by_size in self.short.items()},
            {group: set(c) for group, c in self.headless.items()},
            dict(self.row_hashes),
            dict(self.files),
            {group: dict(c) for group, c in self.by_group.items()},
        )

    def holding(self, file: LandedFile, content: Content, head: bytes) -> ResumePoint | None:
        """Where ``file`` (of ``content``, beginning with ``head``) has nothing new, when a longer copy
        ingested before holds all of it: an older copy of a file, landed after a newer one. Only a
        copy whose file is still landed as it was ingested can tell, and only of copies that begin
        with the same HEAD_BYTES, or, for a file shorter than that, whose first bytes are all of it."""
        size, content_hash = content
        if (digest := head_digest(head, size)) is None:
            return self._holding_short(file, content, head)
        for longer_size, longer_hash in self.by_head.get((_group(file), digest), set()):
            if longer_size <= size or (landed := self.files.get(longer_hash)) is None:
                continue
            path, landed_size, mtime_ns = landed
            if not still_landed(Path(path), landed_size, mtime_ns):
                continue
            if (lines := held_lines(Path(path), size, content_hash)) is not None:
                return ResumePoint(size, lines + 1, longer_hash, nothing_new=True)
        return None

    def _holding_short(self, file: LandedFile, content: Content, head: bytes) -> ResumePoint | None:
        """``holding`` for a file shorter than HEAD_BYTES, whose head is all of its content: a longer
        copy of its group holds it when that copy's head begins with it (among the heads sorted, those
        that begin with it are side by side)."""
        size, content_hash = content
        if not _begins_with(head, size, content_hash):
            return None  # empty (it holds no line), or a damaged stream whose head is not what it lands
        head = head[:size]
        heads = self._landed_heads(_group(file))
        at = bisect_left(heads, (head,))
        while at < len(heads) and heads[at][0].startswith(head):
            _, longer_size, longer_hash = heads[at]
            if longer_size > size:
                return ResumePoint(size, head.count(b"\n") + 1, longer_hash, nothing_new=True)
            at += 1
        return None

    def _landed_heads(self, group: Group) -> list[tuple[bytes, int, str]]:
        """(content head, content size, content hash) of each copy of ``group`` whose file is still
        landed as it was ingested, sorted; read once per batch (``heads_read``). A head is kept only
        if it is the start of the content the copy landed, as recorded: not a damaged archive's
        bytes that its lines did not reach, nor a compressed copy recorded by its file (nothing of
        it could be read, or it was ingested before contents were recorded). A batch's own files,
        counted among the copies after these are read, are never longer than the files that ask
        (_growth takes them shortest first)."""
        if (heads := self.heads_read.get(group)) is None:
            heads = []
            for (size, content_hash), digest in self.by_group.get(group, {}).items():
                path, landed_size, mtime_ns = self.files[content_hash]
                if not still_landed(Path(path), landed_size, mtime_ns):
                    continue
                head = content_head(Path(path))
                if _begins_with(head, size, content_hash) or (digest and head_digest(head, size) == digest):
                    heads.append((head[:size], size, content_hash))
            heads.sort()
            self.heads_read[group] = heads
        return heads

    def before(
        self, file: LandedFile, content: Content | None, compressed: bool, head: bytes
    ) -> set[Content]:
        """The copies ``file`` (of ``content``, beginning with ``head``) may continue: its path's, and
        those of its group that begin with the same HEAD_BYTES (a rotated log holds the lines its live
        file's copies landed, a plain copy of an archive the archive's; jobs.io.growth), or that are
        shorter and are the start of ``head`` (whole lines, or cut inside one: the cut line is read
        again). A longer copy without a digest counts for a compressed file only, as before digests
        were recorded."""
        group = _group(file)
        found = set(self.by_path.get(str(file.path), set()))
        if content and (digest := head_digest(head, content[0])):
            found |= self.by_head.get((group, digest), set())
        short = self.short.get(group, {})
        found |= {(size, digest) for size, digest in prefix_digests(head, short) if digest in short[size]}
        if compressed:
            found |= self.headless.get(group, set())
        return found


NO_COPIES = Copies({}, {}, {}, {}, {}, {})


def _begins_with(head: bytes, size: int, content_hash: str) -> bool:
    """Whether ``head`` begins with all of a content of ``size`` bytes and SHA-256 ``content_hash``
    (one shorter than HEAD_BYTES; a damaged stream's head may go on past the lines it landed), and
    that content holds a line."""
    return 0 < size <= len(head) and hashlib.sha256(head[:size]).hexdigest() == content_hash


def _due(file: LandedFile, end: datetime | None) -> bool:
    """Whether a run up to ``end`` ingests ``file``: one whose path gives a later time waits for
    the run that covers it; an earlier one not ingested yet landed late, and is ingested now."""
    return end is None or not BY_KIND[file.source_kind].time_in_path or file.event_at < end


def _known_files(lake: Lake):
    """Ingest history: hash cache by (path, size, mtime), final identities, pending batches, and
    the ingested copies of growing files (Copies)."""
    rows = (
        lake.read(INGEST_RUNS)
        .select(
            "source_file", "source_kind", "cluster", "broker", "file_size", "file_mtime_ns", "_file_hash",
            "identity", "batch_id", "status", "content_size", "content_hash", "content_head", "ingested_at",
            "records_read",
        )
        .collect()
    )  # fmt: skip
    cache = {(r.source_file, r.file_size, r.file_mtime_ns): r._file_hash for r in rows}
    done = {r.identity for r in rows if r.status != "pending"}
    pending: dict[str, set[str]] = {}
    copies = NO_COPIES.copy()
    # the first copy of a content holds its rows (of a batch's copies of one content, the one that read some)
    for r in sorted(rows, key=lambda r: (r.ingested_at, r.records_read == 0)):
        if r.status == "pending":
            pending.setdefault(r.batch_id, set()).add(r.identity)
        elif r.status == "ingested":
            # a compressed copy's content is recorded with it; a plain one's is its file
            content = (r.content_size, r.content_hash) if r.content_hash else (r.file_size, r._file_hash)
            landed = (r.source_file, r.file_size, r.file_mtime_ns)
            copies.add(landed, (r.source_kind, r.cluster, r.broker), content, r._file_hash, r.content_head)
    return cache, done, pending, copies


@dataclass(frozen=True)
class Growth:
    """Of a batch's growing files, by path: where those that continue an ingested copy have their
    new lines (``points``), the content of the compressed ones (``contents``; None: nothing of it
    could be read) and the digest of each one's first bytes (``heads``; jobs.io.growth.head_digest)."""

    points: dict[str, ResumePoint]
    contents: dict[str, Content | None]
    heads: dict[str, str | None]


def _growth(candidates: list[Candidate], copies: Copies) -> Growth:
    """The batch's Growth. A file may also continue one of its batch with less content (a live log
    and its rotated copy collected at once, an archive and a longer one, an archive and a plain
    copy of it), so the batch's files are compared shortest content first, a plain file before a
    compressed one of the same length."""
    growing = [c for c in candidates if BY_KIND[c.file.source_kind].grows]
    contents = {str(c.file.path): content_digest(c.file.path) for c in growing if is_compressed(c.file.path)}
    first_bytes = {str(c.file.path): content_head(c.file.path) for c in growing}
    copies = copies.copy()

    def content(c: Candidate) -> Content | None:
        path = str(c.file.path)
        return contents.get(path, (c.file.size, c.file_hash))

    def order(c: Candidate) -> tuple:
        path = str(c.file.path)
        return (content(c) or (0, ""))[0], path in contents, path

    points, heads = {}, {}
    for c in sorted(growing, key=order):
        path, own = str(c.file.path), content(c)
        # a longer copy that holds all of the file wins over a shorter one it continues: the lines
        # after the shorter one are the longer one's too
        point = copies.holding(c.file, own, first_bytes[path]) if own else None
        if point is None and (earlier := copies.before(c.file, own, path in contents, first_bytes[path])):
            point = resume_point(c.file.path, earlier)
        if point is not None:
            # the copy's rows carry its file's hash, which is not its content's if it was compressed
            point = replace(
                point, grew_from_hash=copies.row_hashes.get(point.grew_from_hash, point.grew_from_hash)
            )
            if point.nothing_new:
                log.info(
                    "%s holds nothing a copy landed before it (%s) did not: not read",
                    path,
                    point.grew_from_hash[:12],
                )
            else:
                log.info(
                    "%s continues a copy landed before it (%s): reading its lines from line %d on",
                    path, point.grew_from_hash[:12], point.first_line,
                )  # fmt: skip
            points[path] = point
        if own:
            heads[path] = head_digest(first_bytes[path], own[0])
            landed = (path, c.file.size, c.file.mtime_ns)
            copies.add(landed, _group(c.file), own, c.file_hash, heads[path])
    return Growth(points, contents, heads)


def _candidates(files: list[LandedFile], cache) -> list[Candidate]:
    """Each file with its content hash (from ``cache`` when its path, size and mtime are known)."""
    cached = [cache.get((str(f.path), f.size, f.mtime_ns)) for f in files]
    hashed = iter(content_hashes([(f.path, f.size) for f, known in zip(files, cached) if known is None]))
    hashes = [known or next(hashed) for known in cached]
    return [Candidate(f, h, BY_KIND[f.source_kind].identity(f, h)) for f, h in zip(files, hashes)]


def run_ingest(lake: Lake, settings: Settings, landing, end, run_id: str) -> IngestResult:
    """Ingest every landed file not ingested before (see the module docstring)."""
    files = [f for f in discover(landing, patterns(settings)) if _due(f, end)]
    cache, done, pending, copies = _known_files(lake)
    candidates = _candidates(files, cache)
    batches = []
    for batch_id, identities in sorted(pending.items()):
        log.warning("completing ingest batch %s left pending by an interrupted run", batch_id)
        _ingest_batch(lake, settings, batch_id, run_id, [c for c in candidates if c.identity in identities],
                      copies=copies)  # fmt: skip
        done |= identities
        batches.append(batch_id)
    if pending:  # the completed batches' files are copies the new files may continue
        copies = _known_files(lake)[3]
    fresh: dict[str, Candidate] = {}
    repeats: list[Candidate] = []
    for c in candidates:
        if c.identity in done:
            continue
        if c.identity in fresh:
            repeats.append(c)  # the same content under another name in this batch
        else:
            fresh[c.identity] = c
    if fresh:
        chosen = list(fresh.values())
        batch_id = hashlib.sha256("\n".join(sorted(fresh)).encode()).hexdigest()[:20]
        _ingest_batch(lake, settings, batch_id, run_id, chosen, repeats, copies)
        batches.append(batch_id)
    return IngestResult(tuple(batches), len(fresh), len(candidates) - len(fresh))


def _ops_row(
    c: Candidate,
    run_id: str,
    batch_id: str,
    status: str,
    reason: str | None,
    count: FileCount | None,
    at: datetime,
    identity: str | None = None,
    resume: ResumePoint = FROM_START,
    content: Content | None = None,
    head: str | None = None,
) -> tuple:
    """One ops/ingest_runs row of a landed file (``count``: its record accounting, None: nothing
    yet; ``resume``: where its reading began; ``content``: a compressed file's; ``head``: a
    growing file's first bytes' digest)."""
    landed, quarantined = (count.records_landed, count.records_quarantined) if count else (0, 0)
    return (
        run_id, batch_id, str(c.file.path), c.file.source_kind, c.file.cluster, c.file.broker, c.file.event_at,
        identity or c.identity, c.file_hash, c.file.size, c.file.mtime_ns, status, reason,
        landed + quarantined, landed, quarantined, count.event_min_at if count else None,
        count.event_max_at if count else None, at, resume.grew_from_hash, resume.reread_line,
        *(content or (None, None)), head,
    )  # fmt: skip


def _ingest_batch(
    lake: Lake,
    settings: Settings,
    batch_id: str,
    run_id: str,
    candidates: list[Candidate],
    repeats=(),
    copies: Copies = NO_COPIES,
) -> None:
    if not candidates:
        return
    now = datetime.now(UTC)
    growth = _growth(candidates, copies)
    pending = [
        _ops_row(c, run_id, batch_id, "pending", None, None, now, **_read_as(growth, c)) for c in candidates
    ]
    lake.merge_rows(INGEST_RUNS, pending)
    # on the embedded lake the commit reader writes the rows of the lines it has checked itself
    directory = lake.worker_dir(OFFSET_COMMITS, f"reader-{batch_id}")
    writer = CheckedCommitWriter(directory, run_id) if directory else None
    output = parse_sources(
        lake,
        settings,
        [c.file for c in candidates],
        {str(c.file.path): c.file_hash for c in candidates},
        writer,
        growth.points,
    )
    counts = output.counts()  # runs every read: the reader's files are written before the appends
    run_tag = F.lit(run_id)
    rejected = (
        output.rejected_given(counts)
        .withColumn("rejected_at", F.lit(now))
        .withColumn("_ingest_run_id", run_tag)
    )
    appends = [
        partial(
            _append,
            lake,
            spec,
            landed.withColumn("_ingest_run_id", run_tag),
            batch_id,
            output.worker_written.get(spec),
        )
        for spec, landed in output.landed.items()
    ]
    merges = [
        partial(lake.merge, spec, rows.withColumn("_ingest_run_id", run_tag))
        for spec, rows in output.decided.items()
    ]
    # each table's write is its own, so they run side by side; the files are marked ingested after them all
    side_by_side(*appends, *merges, partial(_append, lake, REJECTED_INPUTS, rejected, batch_id))
    lake.merge_rows(INGEST_RUNS, _final_rows(output, counts, run_id, batch_id, candidates, repeats, growth))
    output.release()


def _append(
    lake: Lake, spec: TableSpec, df: DataFrame, batch_id: str, worker_files: str | None = None
) -> None:
    if spec.partition_by and spec.event_time and spec.partition_by[0] not in df.columns:
        df = df.withColumn(spec.partition_by[0], F.to_date(spec.event_time))
    lake.append(spec, df, once_as=f"offsetlake-ingest:{batch_id}:{spec.path}", worker_files=worker_files)


def _read_as(growth: Growth, c: Candidate) -> dict:
    """_ops_row's ``resume``, ``content`` and ``head`` of a candidate."""
    path = str(c.file.path)
    return {
        "resume": growth.points.get(path, FROM_START),
        "content": growth.contents.get(path),
        "head": growth.heads.get(path),
    }


def _final_rows(
    output: SourceOutput, counts: dict, run_id, batch_id, candidates, repeats, growth: Growth
) -> list[tuple]:
    """ops rows with each file's status and record counts (``counts``: the accounting's rows by
    file; ``growth``: where the files that grew began, and the compressed ones' content)."""
    skipped = {r.source_file: r for r in output.skipped.collect()}
    now = datetime.now(UTC)
    rows = []
    for c in candidates:
        path = str(c.file.path)
        status, reason = ("ingested", None)
        if path in skipped:
            status, reason = skipped[path].status, skipped[path].status_reason
        rows.append(
            _ops_row(
                c,
                run_id,
                batch_id,
                status,
                reason,
                counts.get(path),
                now,
                **_read_as(growth, c),
            )
        )
    for c in repeats:
        identity = c.identity + "|" + str(c.file.path)
        rows.append(
            _ops_row(
                c,
                run_id,
                batch_id,
                "duplicate",
                "same content as another file of the batch",
                None,
                now,
                identity,
            )
        )
    return rows
