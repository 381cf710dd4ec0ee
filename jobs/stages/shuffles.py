"""How many partitions a stage's shuffles start with: as many as its interval's commit events need.

Adaptive execution merges a shuffle's partitions once it has run, but every map task still
writes one piece per starting partition, and an hour's few hundred thousand commit events spread
over 64 partitions make many small tasks, files and pieces for each stage's dozens of shuffles.
The replay, marts, audit and publish stages each start theirs with one partition per
``shuffle_partition_rows`` commit events of the interval they cover (the Delta log's count), at
least two a core and at most ``shuffle_partitions`` (docs/experiments.md, "Shuffles sized to the
interval"). A run over a whole history or a large interval keeps ``shuffle_partitions``. The
ingest keeps it too: its commit events are not counted before it parses them. A session's
settings set ``shuffle_partitions`` again at each command, so a kept session's next ingest
starts from it.
"""

from __future__ import annotations

from datetime import datetime

from jobs.io.lake import Lake
from schemas.config import SparkSettings
from schemas.tables import OFFSET_COMMITS

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
PARTITIONS_PER_CORE = 2  # a partition or two of skew leaves no core idle


def shuffle_partitions(settings: SparkSettings, commit_events: int | None, cores: int) -> int:
    """The partitions a stage's shuffles start with, for an interval of ``commit_events`` (None:
    not known) on ``cores`` cores."""
    if commit_events is None:
        return settings.shuffle_partitions
    wanted = max(-(-commit_events // settings.shuffle_partition_rows), PARTITIONS_PER_CORE * cores)
    return min(settings.shuffle_partitions, wanted)


def size_shuffles(lake: Lake, settings: SparkSettings, start: datetime, end: datetime) -> int:
    """Start the session's shuffles with :func:`shuffle_partitions` for the commit events of
    ``[start, end)``, unless ``[spark.conf]`` fixes ``spark.sql.shuffle.partitions``; returns the
    number the session's shuffles start with."""
    spark = lake.spark
    if SHUFFLE_PARTITIONS in settings.conf:
        return int(settings.conf[SHUFFLE_PARTITIONS])
    counted = lake.statistics(OFFSET_COMMITS, start=start, end=end)
    partitions = shuffle_partitions(
        settings, counted.rows if counted is not None else None, spark.sparkContext.defaultParallelism
    )
    spark.conf.set(SHUFFLE_PARTITIONS, str(partitions))
    return partitions
