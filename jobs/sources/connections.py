"""Saved ``mqadmin consumerConnection`` outputs: who was in each group, and how it consumed."""

from __future__ import annotations

from jobs.io.landing import LandedFile
from jobs.io.snapshot_files import WholeFile, read_whole_files
from jobs.sources.collector import ParseContext
from jobs.sources.source import Source
from pipelines.ingest.group_connections import parse_group_connections
from schemas.tables import GROUP_CONNECTIONS


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    whole = [WholeFile(str(f.path), f.cluster, f.event_at, context.hashes[str(f.path)]) for f in files]
    parsed = parse_group_connections(read_whole_files(context.spark, whole))
    context.collector.add(GROUP_CONNECTIONS, parsed, SOURCE.kind)


SOURCE = Source(
    kind="connections",
    default_pattern="progress/{cluster}/{time}/consumerConnection-*.txt",
    description="mqadmin consumerConnection (consumerConnection-<group>.txt): a group's clients, consume type and model",
    lands=(GROUP_CONNECTIONS,),
    parse=parse,
    time_in_path=True,
    identified_by="path",
)
