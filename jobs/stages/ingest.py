"""Ingest stage: new landed files -> bronze tables, bad records -> quarantine, accounting -> ops.

A run ingests each file identity once (jobs.io.landing.identity). Files go in batches, and
a batch is crash-safe: its files are first recorded as ``pending`` in ops/ingest_runs;
each bronze append carries a Delta transaction id of the batch, so repeating it is a
no-op; the files' final status and record counts are recorded last. A run that finds a
pending batch (a crash) completes it first: whatever it had written is not written twice.
A longer copy of a commit stream or log ingested before adds only its new lines, and so does a
compressed one of the content of plain copies ingested before (a rotated log; jobs.io.growth).

With ``--from``/``--to``, files whose path gives a time outside the interval (snapshots,
admin-tool outputs, client offsets) wait for the run that covers them; files without a
time in their path (commit streams, logs) are ingested whole when they first appear.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.io.checked_commits import CheckedCommitWriter
from jobs.io.growth import FROM_START, ResumePoint, is_compressed, resume_point
from jobs.io.lake import Lake
from jobs.io.landing import LandedFile, content_hashes, discover
from jobs.io.worker_files import FileCount
from jobs.runtime.concurrent import side_by_side
from jobs.sources import BY_KIND, parse_sources, patterns
from jobs.sources.collector import SourceOutput
from jobs.stages.context import IngestResult, RunContext
from pipelines.ingest.config_files import GZIP_SUFFIX
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
    context.ingest = run_ingest(
        context.lake, context.settings, context.landing, context.start, context.end, context.run_id
    )


@dataclass(frozen=True)
class Copies:
    """The (size, content hash) of the ingested copies of growing files: by path, and the plain
    (uncompressed) ones by (source kind, cluster, broker), which a compressed file may continue."""

    by_path: dict[str, set[tuple[int, str]]]
    plain_by_group: dict[tuple[str, str | None, str | None], set[tuple[int, str]]]

    def with_plain(self, candidates: list[Candidate], compressed: set[str]) -> Copies:
        """These copies and the plain files among ``candidates`` (``compressed``: the paths of the
        others): a compressed file of a batch may continue a plain one landed with it (a live log
        and its rotated copy collected at once)."""
        groups = {group: set(sizes) for group, sizes in self.plain_by_group.items()}
        for c in candidates:
            if str(c.file.path) not in compressed:
                group = (c.file.source_kind, c.file.cluster, c.file.broker)
                groups.setdefault(group, set()).add((c.file.size, c.file_hash))
        return Copies(self.by_path, groups)

    def before(self, file: LandedFile, compressed: bool) -> set[tuple[int, str]]:
        """The copies ``file`` may continue: its path's, and for a compressed file its group's plain
        ones (a rotated log holds the lines its live file's copies landed; jobs.io.growth)."""
        if compressed:
            return self.plain_by_group.get((file.source_kind, file.cluster, file.broker), set())
        return self.by_path.get(str(file.path), set())


NO_COPIES = Copies({}, {})


def _in_interval(file: LandedFile, start: datetime | None, end: datetime | None) -> bool:
    if not BY_KIND[file.source_kind].time_in_path:
        return True
    return (start is None or file.event_at >= start) and (end is None or file.event_at < end)


def _known_files(lake: Lake):
    """Ingest history: hash cache by (path, size, mtime), final identities, pending batches, and
    the ingested copies of growing files (Copies)."""
    rows = (
        lake.read(INGEST_RUNS)
        .select(
            "source_file", "source_kind", "cluster", "broker", "file_size", "file_mtime_ns", "_file_hash",
            "identity", "batch_id", "status",
        )
        .collect()
    )  # fmt: skip
    cache = {(r.source_file, r.file_size, r.file_mtime_ns): r._file_hash for r in rows}
    done = {r.identity for r in rows if r.status != "pending"}
    pending: dict[str, set[str]] = {}
    copies = Copies({}, {})
    for r in rows:
        if r.status == "pending":
            pending.setdefault(r.batch_id, set()).add(r.identity)
        elif r.status == "ingested":
            copies.by_path.setdefault(r.source_file, set()).add((r.file_size, r._file_hash))
            if not r.source_file.endswith(GZIP_SUFFIX):  # by its name: the file may be gone
                group = (r.source_kind, r.cluster, r.broker)
                copies.plain_by_group.setdefault(group, set()).add((r.file_size, r._file_hash))
    return cache, done, pending, copies


def _resumes(candidates: list[Candidate], copies: Copies) -> dict[str, ResumePoint]:
    """Where each candidate that continues an ingested copy has its new lines."""
    points = {}
    growing = [c for c in candidates if BY_KIND[c.file.source_kind].grows]
    compressed = {str(c.file.path) for c in growing if is_compressed(c.file.path)}
    copies = copies.with_plain(growing, compressed)
    for c in growing:
        path = str(c.file.path)
        if earlier := copies.before(c.file, path in compressed):
            point = resume_point(c.file.path, earlier)
            if point is not None:
                log.info(
                    "%s continues a copy landed before it (content %s): reading its lines from line %d on",
                    path, point.grew_from_hash[:12], point.first_line,
                )  # fmt: skip
                points[path] = point
    return points


def _candidates(files: list[LandedFile], cache) -> list[Candidate]:
    """Each file with its content hash (from ``cache`` when its path, size and mtime are known)."""
    cached = [cache.get((str(f.path), f.size, f.mtime_ns)) for f in files]
    hashed = iter(content_hashes([f.path for f, known in zip(files, cached) if known is None]))
    hashes = [known or next(hashed) for known in cached]
    return [Candidate(f, h, BY_KIND[f.source_kind].identity(f, h)) for f, h in zip(files, hashes)]


def run_ingest(lake: Lake, settings: Settings, landing, start, end, run_id: str) -> IngestResult:
    """Ingest every landed file not ingested before (see the module docstring)."""
    files = [f for f in discover(landing, patterns(settings)) if _in_interval(f, start, end)]
    cache, done, pending, copies = _known_files(lake)
    candidates = _candidates(files, cache)
    batches = []
    for batch_id, identities in sorted(pending.items()):
        log.warning("completing ingest batch %s left pending by an interrupted run", batch_id)
        _ingest_batch(lake, settings, batch_id, run_id, [c for c in candidates if c.identity in identities],
                      copies=copies)  # fmt: skip
        done |= identities
        batches.append(batch_id)
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
) -> tuple:
    """One ops/ingest_runs row of a landed file (``count``: its record accounting, None: nothing
    yet; ``resume``: where its reading began)."""
    landed, quarantined = (count.records_landed, count.records_quarantined) if count else (0, 0)
    return (
        run_id, batch_id, str(c.file.path), c.file.source_kind, c.file.cluster, c.file.broker, c.file.event_at,
        identity or c.identity, c.file_hash, c.file.size, c.file.mtime_ns, status, reason,
        landed + quarantined, landed, quarantined, count.event_min_at if count else None,
        count.event_max_at if count else None, at, resume.grew_from_hash, resume.reread_line,
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
    resumes = _resumes(candidates, copies)
    pending = [
        _ops_row(
            c, run_id, batch_id, "pending", None, None, now, resume=resumes.get(str(c.file.path), FROM_START)
        )
        for c in candidates
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
        resumes,
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
    lake.merge_rows(INGEST_RUNS, _final_rows(output, counts, run_id, batch_id, candidates, repeats, resumes))
    output.release()


def _append(
    lake: Lake, spec: TableSpec, df: DataFrame, batch_id: str, worker_files: str | None = None
) -> None:
    if spec.partition_by and spec.event_time and spec.partition_by[0] not in df.columns:
        df = df.withColumn(spec.partition_by[0], F.to_date(spec.event_time))
    lake.append(spec, df, once_as=f"offsetlake-ingest:{batch_id}:{spec.path}", worker_files=worker_files)


def _final_rows(
    output: SourceOutput, counts: dict, run_id, batch_id, candidates, repeats, resumes: dict[str, ResumePoint]
) -> list[tuple]:
    """ops rows with each file's status and record counts (``counts``: the accounting's rows by
    file; ``resumes``: where the files that grew began, by path)."""
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
                resume=resumes.get(path, FROM_START),
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
