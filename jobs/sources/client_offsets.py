"""Broadcast consumers' local ``offsets.json`` (``~/.rocketmq_offsets/<clientIP>@<instance>/<group>/``)."""

from __future__ import annotations

from jobs.io.landing import LandedFile
from jobs.io.snapshot_files import WholeFile, read_whole_files
from jobs.sources.collector import ParseContext
from jobs.sources.source import SNAPSHOTS, Source
from pipelines.ingest.client_offsets import explode_client_offsets
from schemas.tables import OFFSET_SNAPSHOTS


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    client_files = [WholeFile(str(f.path), f.cluster, f.event_at, context.hashes[str(f.path)]) for f in files]
    result = explode_client_offsets(read_whole_files(context.spark, client_files))
    context.collector.add(OFFSET_SNAPSHOTS, result.parsed, SOURCE.kind)
    context.collector.skipped.append(result.skipped.select("source_file", "status", "status_reason"))


SOURCE = Source(
    kind="client_offsets",
    default_pattern="client_offsets/{cluster}/{time}/**/offsets.json*",
    description="copies of broadcast consumers' ~/.rocketmq_offsets/<clientIP>@<instance>/<group>/offsets.json",
    lands=(OFFSET_SNAPSHOTS,),
    parse=parse,
    replay_role=SNAPSHOTS,
    time_in_path=True,
    identified_by="path",
)
