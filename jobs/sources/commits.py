"""The canonical commit-event stream (JSON lines, schemas.records.CommitEvent).

Lines of the plain shape are pre-parsed and checked by the reader in Arrow
(pipelines.ingest.commit_preparse); on the embedded lake the reader also writes their bronze
rows itself (jobs.io.checked_commits). Every other line takes Spark's strict parse.
"""

from __future__ import annotations

from dataclasses import replace

from jobs.io.landing import LandedFile
from jobs.io.text_lines import LineColumns, read_file_lines
from jobs.sources.collector import ParseContext
from jobs.sources.source import COMMIT_LOG, Source
from pipelines.ingest.commit_events import CHECKED, parse_commit_events
from pipelines.ingest.commit_preparse import PREPARSED_SCHEMA, preparse
from schemas.tables import OFFSET_COMMITS

# commit events of the plain shape are pre-parsed by the reader, in Arrow
PREPARSED_COLUMNS = LineColumns(PREPARSED_SCHEMA, preparse, spares_line=CHECKED)


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    writer = context.checked_commits
    columns = PREPARSED_COLUMNS if writer is None else replace(PREPARSED_COLUMNS, writes=writer.write)
    # the parse is cached with each line's file number, not its file's path, hash and
    # cluster (some 140 bytes a line): the outputs join them back from the files
    read = read_file_lines(context.spark, context.text_files(files, lambda cluster: "UTC"), columns)
    context.collector.add(OFFSET_COMMITS, parse_commit_events(read.lines, read.files), SOURCE.kind)
    if writer is not None:
        context.collector.worker_written[OFFSET_COMMITS] = writer.directory


SOURCE = Source(
    kind="commits",
    default_pattern="commits/{cluster}/**/*.jsonl*",
    description="the canonical commit-event format (JSON lines, optionally gzipped)",
    lands=(OFFSET_COMMITS,),
    parse=parse,
    replay_role=COMMIT_LOG,
    grows=True,
)
