"""How many partitions a stage's shuffles start with: as many as its interval's events need.

Adaptive execution merges a shuffle's partitions once it has run, but every map task still writes
one piece per starting partition: an hour's few hundred thousand events spread over 64 partitions
make many small tasks and pieces for each of a stage's dozens of shuffles. The replay, marts,
audit and publish start theirs with one partition per ``shuffle_partition_rows`` events of the
interval they cover, at least two a core and at most ``shuffle_partitions`` (docs/experiments.md,
"Shuffles sized to the interval"). The events are the rows the replay shuffles by queue: bronze
commits and snapshots, counted from the Delta log's statistics of the files that hold the
interval's (a file reaching across either end counts whole, so the count errs towards more
partitions). ``shuffle_partitions`` stays the number where the count is not known (native Spark
Delta keeps its files' statistics to itself), from ``shuffle_partitions`` x
``shuffle_partition_rows`` events up (6.4M by default), and for the ingest, which has not parsed
its events yet; each command sets it again as it builds its session, so a kept session's next
ingest starts from it. The marts are sized by the interval alone, also where a window of theirs
(``[status] window``, ``[replay] throughput_window``; an hour by default) reaches further back.
"""

from __future__ import annotations

from datetime import datetime

from jobs.io.lake import Lake
from schemas.config import SparkSettings
from schemas.tables import OFFSET_COMMITS, OFFSET_SNAPSHOTS

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
# with adaptive execution on, Spark starts its shuffles from this setting when it is given
INITIAL_PARTITIONS = "spark.sql.adaptive.coalescePartitions.initialPartitionNum"
PARTITIONS_PER_CORE = 2  # a partition or two of skew leaves no core idle
EVENTS = (OFFSET_COMMITS, OFFSET_SNAPSHOTS)


def shuffle_partitions(settings: SparkSettings, events: int | None, cores: int) -> int:
    """The partitions a stage's shuffles start with, for an interval of ``events`` (None: not
    counted) on ``cores`` cores."""
    if events is None:
        return settings.shuffle_partitions
    wanted = max(-(-events // settings.shuffle_partition_rows), PARTITIONS_PER_CORE * cores)
    return min(settings.shuffle_partitions, wanted)


def size_shuffles(lake: Lake, settings: SparkSettings, start: datetime, end: datetime) -> int | None:
    """Start the session's shuffles with :func:`shuffle_partitions` for the events of
    ``[start, end)``; returns that number, or None where ``[spark] conf`` fixes the shuffles'
    partitions (``spark.sql.shuffle.partitions`` or adaptive execution's initial number), which
    are then left as they are."""
    if SHUFFLE_PARTITIONS in settings.conf or INITIAL_PARTITIONS in settings.conf:
        return None
    counted = [lake.statistics(spec, start=start, end=end) for spec in EVENTS]
    events = None if None in counted else sum(c.rows for c in counted)
    spark = lake.spark
    partitions = shuffle_partitions(settings, events, spark.sparkContext.defaultParallelism)
    spark.conf.set(SHUFFLE_PARTITIONS, str(partitions))
    return partitions
