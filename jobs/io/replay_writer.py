"""Replayed commits and the timeline, written by the replay's Python workers (the embedded lake).

The replay's workers hold every event's state in Arrow (pipelines.replay.kernel). On the
embedded lake (a local Delta table, a local master) they also write the two tables with a
row per event, silver/offset_commits_replayed and silver/stored_offset_timeline, as Parquet
as worker files (:mod:`jobs.io.worker_files`), and send Spark back only the rows the
regressions and the next checkpoint read (``checkpoint_and_regression_rows``): the state of
every event is not converted back to Spark's rows, cached and written again by Spark. The
files join their tables in the replay's replace of the interval
(:meth:`jobs.io.lake.Lake.replace_range`'s ``worker_files``).

Each partition of the replay's shuffle writes one file per table and date, named by the least
queue id of its rows: a queue's events are all in one partition, so the name is the partition's
wherever it is computed (in a task of its own, in a task that runs again, or beside other
partitions in one task beneath a ``coalesce``), and a partition replayed again writes the same
files under the same names.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel

from jobs.io.worker_files import write_part
from pipelines.replay.events import EventIds
from pipelines.replay.kernel import (
    QUEUE_ID,
    Names,
    checkpoint_and_regression_rows,
    commit_rows,
    replayed,
    timeline_rows,
)
from schemas.tables import OFFSET_COMMITS_REPLAYED, STORED_OFFSET_TIMELINE, TableSpec


@dataclass(frozen=True)
class ReplayWriter:
    """Where a replay's workers write the two tables' files (``commits``, ``timeline``: local
    directories from :meth:`jobs.io.lake.Lake.worker_dir`), and the names the ids stand for."""

    commits: str
    timeline: str
    names: Names

    @classmethod
    def for_ids(cls, commits: str, timeline: str, ids: EventIds) -> ReplayWriter:
        """The writer for a replay whose queues and files ``ids`` numbers: its workers give the
        rows their text back from the two dictionaries, cached here (the replay's Spark side
        reads them too) and collected."""
        for dictionary in (ids.queues, ids.files):
            dictionary.persist(StorageLevel.MEMORY_AND_DISK)
        return cls(commits, timeline, Names(ids.queues.toArrow(), ids.file_names.toArrow()))

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """``mapInArrow`` over a partition of ordered events (see pipelines.replay.events.with_replayed_state):
        replay it, write its two tables' files, return the rows Spark still needs."""
        state = replayed(batches)
        if state is None:
            return
        named = self.names.attach(state)
        part = pc.min(state.column(QUEUE_ID)).as_py() if state.num_rows else 0  # names its files (see above)
        _write_by_date(self.commits, OFFSET_COMMITS_REPLAYED, commit_rows(named), part)
        _write_by_date(self.timeline, STORED_OFFSET_TIMELINE, timeline_rows(named), part)
        yield from checkpoint_and_regression_rows(state).to_batches()


def _write_by_date(directory: str, spec: TableSpec, rows: pa.Table, part: int) -> None:
    """One file of ``rows`` per value of the table's date partition column."""
    (partition,) = spec.partition_by
    rows = rows.cast(_keeping_dictionaries(spec.arrow_schema, rows.schema))
    days = rows.column(partition).cast(pa.int32()).to_numpy()
    distinct = np.unique(days)
    for day in distinct:
        chosen = rows.filter(pa.array(days == day)) if len(distinct) > 1 else rows
        write_part(directory, spec, chosen, f"part-{part:010d}-{int(day)}")


def _keeping_dictionaries(schema: pa.Schema, given: pa.Schema) -> pa.Schema:
    """``schema``, where ``given`` has a dictionary of the type a field names: that dictionary
    (the text is written from it, not hashed again row by row: jobs.io.worker_files.write_part)."""

    def kept(field: pa.Field) -> pa.Field:
        type_given = given.field(field.name).type
        if pa.types.is_dictionary(type_given) and type_given.value_type == field.type:
            return field.with_type(type_given)
        return field

    return pa.schema([kept(field) for field in schema])
