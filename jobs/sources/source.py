"""What a source of evidence is: one kind of landed file, declared once (see jobs.sources)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from jobs.io.landing import LandedFile
from jobs.sources.collector import ParseContext
from schemas.config import Settings
from schemas.tables import TableSpec

# What the replay reads of a source's rows (Source.replay_role):
COMMIT_LOG = "commit_log"  # the canonical commit events
LOGGED_COMMITS = "logged_commits"  # commits a log line tells (corroborating the commit log, or alone)
SNAPSHOTS = "snapshots"  # stored offset tables, at an instant
REPLAYED_EVIDENCE = (COMMIT_LOG, LOGGED_COMMITS, SNAPSHOTS)


@dataclass(frozen=True)
class Source:
    """One kind of input: where its files land, how they are read, what they land in.

    ``parse`` reads the kind's files of an ingest batch and hands the collector one
    :class:`~pipelines.ingest.quarantine.Parsed` per table it lands (and the files it skips).
    """

    kind: str
    default_pattern: str
    description: str
    lands: tuple[TableSpec, ...]
    parse: Callable[[ParseContext, list[LandedFile]], None]
    replay_role: str | None = None
    # the path's {time} is the file's event time: it waits for the run whose interval holds it
    time_in_path: bool = False
    # what makes a landed file "the same" as one ingested before (see identity)
    identified_by: Literal["content", "path", "snapshot"] = "content"
    # the ClusterSettings field naming the time zone of the file's local times (None: UTC)
    timezone_setting: str | None = None
    # a file of lines that its writer appends to: a longer copy of an ingested one adds only its
    # new lines (jobs.io.growth)
    grows: bool = False

    def identity(self, file: LandedFile, file_hash: str) -> str:
        """What makes a landed file 'the same' as one already ingested.

        A snapshot is identified by its cluster, broker, time and file name (main or .bak) as
        well as its content: two brokers with byte-identical files are two snapshots. A client
        offsets file or an admin-tool output also by its path (the path names the client, the
        group or the topic). Commit streams and logs by content alone, so the same file landed
        twice, or under two names, is ingested once.
        """
        if self.identified_by == "snapshot":
            stamp = file.event_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            return f"{self.kind}|{file.cluster}|{file.broker or ''}|{stamp}|{file.name}|{file_hash}"
        if self.identified_by == "path":
            return f"{self.kind}|{file.relative}|{file_hash}"
        return f"{self.kind}|{file.cluster}|{file_hash}"

    def timezone(self, settings: Settings, cluster: str) -> str:
        """The IANA zone of the local times in this kind's files of ``cluster``."""
        return (
            "UTC"
            if self.timezone_setting is None
            else getattr(settings.cluster(cluster), self.timezone_setting)
        )
