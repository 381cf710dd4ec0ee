"""Every kind of input the ingest reads, each declared once with its pattern, parse and tables.

| kind           | default pattern                              | lands in                        | replayed as    |
|----------------|----------------------------------------------|---------------------------------|----------------|
| snapshots      | ``snapshots/{cluster}/{broker}/{time}/*``    | offset_snapshots, delay_offsets | snapshots      |
| commits        | ``commits/{cluster}/**/*.jsonl*``            | offset_commits                  | the commit log |
| connections    | ``progress/{cluster}/{time}/consumerConnection-*.txt`` | group_connections     |                |
| progress       | ``progress/{cluster}/{time}/*.txt``          | queue_offsets                   |                |
| broker_logs    | ``broker_logs/{cluster}/{broker}/**/*.log*`` | offset_commits, offset_resets   | logged commits |
| client_logs    | ``client_logs/{cluster}/**/*.log*``          | offset_commits                  | logged commits |
| client_offsets | ``client_offsets/{cluster}/{time}/**/offsets.json*`` | offset_snapshots        | snapshots      |

A new source is one module of this package (its ``SOURCE``: a :class:`~jobs.sources.source.Source`
with its parse, built on a reader of jobs.io and a parser of pipelines.ingest) and one entry in
:data:`SOURCES`. The order of :data:`SOURCES` is the order in which a landed file is matched
against the patterns: a file two patterns match belongs to the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from jobs.io.checked_commits import CheckedCommitWriter
from jobs.io.growth import ResumePoint
from jobs.io.lake import Lake
from jobs.io.landing import LandedFile
from jobs.runtime.concurrent import side_by_side
from jobs.sources import broker_logs, client_logs, client_offsets, commits, connections, progress, snapshots
from jobs.sources.collector import Collector, ParseContext, SourceOutput, finish
from jobs.sources.source import COMMIT_LOG, LOGGED_COMMITS, REPLAYED_EVIDENCE, SNAPSHOTS, Source
from schemas.config import ConfigError, Settings

SOURCES: tuple[Source, ...] = (
    snapshots.SOURCE,
    commits.SOURCE,
    # before progress: its outputs are saved beside consumerProgress's
    connections.SOURCE,
    progress.SOURCE,
    broker_logs.SOURCE,
    client_logs.SOURCE,
    client_offsets.SOURCE,
)
BY_KIND: dict[str, Source] = {source.kind: source for source in SOURCES}

__all__ = [
    "BY_KIND", "COMMIT_LOG", "LOGGED_COMMITS", "REPLAYED_EVIDENCE", "SNAPSHOTS", "SOURCES", "Source",
    "check_patterns", "kinds", "parse_sources", "patterns",
]  # fmt: skip


def kinds(roles: str | tuple[str, ...]) -> tuple[str, ...]:
    """The source kinds whose rows the replay reads in one of ``roles`` (see jobs.sources.source)."""
    wanted = (roles,) if isinstance(roles, str) else roles
    return tuple(source.kind for source in SOURCES if source.replay_role in wanted)


def check_patterns(overrides: Mapping[str, str]) -> None:
    """A ConfigError for a ``[patterns]`` setting that names no source kind."""
    unknown = sorted(set(overrides) - set(BY_KIND))
    if unknown:
        raise ConfigError(f"[patterns] names unknown source kinds {unknown}; the kinds are {list(BY_KIND)}")


def patterns(settings: Settings) -> dict[str, str]:
    """Each source kind's landing pattern: the settings' override, else the source's default."""
    check_patterns(settings.patterns)
    return {source.kind: settings.patterns.get(source.kind, source.default_pattern) for source in SOURCES}


def parse_sources(
    lake: Lake,
    settings: Settings,
    files: list[LandedFile],
    hashes: dict[str, str],
    checked_commits: CheckedCommitWriter | None = None,
    resumes: Mapping[str, ResumePoint] | None = None,
) -> SourceOutput:
    """Read and parse ``files`` (any kinds; ``hashes``: each one's content hash by path) with
    their sources, gathering the rows per bronze table (``lake``: what landed before, which
    some decisions depend on).

    With ``checked_commits``, the commit-event reader writes the rows of the lines it has
    checked itself (jobs.io.checked_commits); the output names their directory for
    bronze/offset_commits (``worker_written``). ``resumes`` gives, by path, where a file that grew
    since an ingested copy has its new lines (jobs.io.growth).
    """
    by_kind: dict[str, list[LandedFile]] = {}
    for f in files:
        by_kind.setdefault(f.source_kind, []).append(f)
    landed = [source for source in SOURCES if by_kind.get(source.kind)]
    contexts = [
        ParseContext(lake, settings, hashes, Collector(lake.spark), checked_commits, resumes or {})
        for _ in landed
    ]
    # Building a source's frames is planning (the JVM analyses each step), with nothing to run
    # yet: the sources are planned side by side, each into its own collector, gathered in
    # SOURCES' order (docs/experiments.md, "The sources planned side by side").
    side_by_side(
        *(partial(source.parse, context, by_kind[source.kind]) for source, context in zip(landed, contexts))
    )
    return finish(lake.spark, [context.collector for context in contexts])
