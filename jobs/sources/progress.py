"""Saved ``mqadmin consumerProgress`` and ``topicStatus`` outputs: the brokers' max and min offsets."""

from __future__ import annotations

from jobs.io.landing import LandedFile
from jobs.io.text_lines import read_lines
from jobs.sources.collector import ParseContext
from jobs.sources.source import Source
from pipelines.ingest.admin_progress import parse_admin_progress
from schemas.tables import QUEUE_OFFSETS

# The parse's window is per file: the lines get as many partitions as the cores several
# times over, which adaptive execution does not merge (it ran a large batch of small files'
# lines in fewer tasks than cores, the last running alone)
PARTITIONS_PER_CORE = 4


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    zone = lambda cluster: SOURCE.timezone(context.settings, cluster)  # noqa: E731
    lines = read_lines(context.spark, context.text_files(files, zone))
    # the parse is one split of its records, which the collector caches: the files are read once
    partitions = context.spark.sparkContext.defaultParallelism * PARTITIONS_PER_CORE
    by_file = lines.repartition(partitions, "source_file", "_file_hash")
    context.collector.add(QUEUE_OFFSETS, parse_admin_progress(by_file), SOURCE.kind)


SOURCE = Source(
    kind="progress",
    default_pattern="progress/{cluster}/{time}/*.txt",
    description="mqadmin consumerProgress (consumerProgress-<group>.txt) and topicStatus (topicStatus-<topic>.txt), 4.0 to 5.x layouts",
    lands=(QUEUE_OFFSETS,),
    parse=parse,
    time_in_path=True,
    identified_by="path",
    timezone_setting="admin_timezone",
)
