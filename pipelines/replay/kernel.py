"""Both commit semantics over one partition of ordered events, in Arrow and numpy.

:func:`pipelines.replay.events.with_replayed_state` has Spark shuffle the events by queue;
:func:`replayed` sorts each partition in ``REPLAY_ORDER`` and :func:`replay_partition` walks its
rows once, as columns. Every rule of the replay is a running value within a queue (the last
commit before an event, the largest commit so far, the regressions since the last snapshot),
and each is one vectorised pass over the partition: the index of the last row with a value
at or before each row (a running maximum of row numbers), cut at the queue's first row.

A queue's rows are all in one partition, its checkpoint row (``event_rank`` SEED_RANK, the
state it continues from) first: that row gives the queue's starting state and leaves (its
``client_host`` is the host of the last commit the checkpoint knows).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipelines.replay.expressions import holds
from pipelines.replay.projections import REGRESSION, REPLAYED_COMMITS, STORED_OFFSET_TIMELINE

# the queue's, the landed file's and its path's ids (pipelines.replay.events.EventIds)
QUEUE_ID, FILE_ID, PATH_ID = "_queue", "_file", "_path"
SEED_RANK = -1
# Replay order within a queue: time, rank, path, line, then content hash (FILE_ID orders the
# versions of one path). A longer copy of a file numbers its new lines on from the earlier
# copy's (jobs.io.growth), so the line, not the version, orders one path's lines; the hash only
# parts two versions of the path with a line at the same instant and number. Every column is
# non-null, so the order is total (a seed row, whose event_at is null, comes before all: see
# pipelines.replay.events._seed_events).
REPLAY_ORDER = ("event_at", "event_rank", PATH_ID, "line_rank", FILE_ID)
SEED_STATE = (
    "last_commit_offset",
    "last_commit_at",
    "client_offset_hwm",
    "last_snapshot_offset",
    "last_snapshot_at",
    "commit_regressions_since_snapshot",
    "last_stored_offset",
)
# what the replay adds to every event, in this order (their types: STATE_TYPES)
STATE_COLUMNS = (
    "event_seq",
    "previous_snapshot_offset",
    "stored_offset",
    "previous_stored_offset",
    "stored_offset_before",
    "stored_before_source",
    "is_regression",
    "client_offset_after",
    "commit_regressions_between",
    "commit_regressions_after",
    "settled_commit_offset",
    "previous_commit_at",
    "previous_commit_host",
)
STATE_TYPES = {c: pa.int64() for c in STATE_COLUMNS} | {
    "event_seq": pa.int32(),
    "stored_before_source": pa.string(),
    "is_regression": pa.bool_(),
    "previous_commit_at": pa.timestamp("us", "UTC"),
    "previous_commit_host": pa.string(),
}
# A broker persists its offset table every five seconds: a snapshot file collected within two persists
# of a commit may not hold it yet. A snapshot below a commit at least this much older than it
# shows the table itself went back (a failover to a slave's older table).
SNAPSHOT_SETTLE_SECONDS = 10


class _Long:
    """A nullable int64 column as numpy values (0 where null) and a validity mask."""

    __slots__ = ("valid", "values")

    def __init__(self, values: np.ndarray, valid: np.ndarray):
        self.values, self.valid = values, valid

    @classmethod
    def of(cls, column: pa.ChunkedArray | pa.Array) -> _Long:
        column = column.cast(pa.int64())
        return cls(
            pc.fill_null(column, 0).to_numpy(zero_copy_only=False),
            pc.is_valid(column).to_numpy(zero_copy_only=False),
        )

    def at(self, index: np.ndarray) -> _Long:
        """The value at ``index`` of each row (null where ``index`` is -1)."""
        found = index >= 0
        safe = np.where(found, index, 0)
        return _Long(np.where(found, self.values[safe], 0), found & self.valid[safe])

    def or_else(self, other: _Long) -> _Long:
        """Coalesce: this value where it is not null, else ``other``'s."""
        return _Long(np.where(self.valid, self.values, other.values), self.valid | other.valid)

    def greatest(self, other: _Long) -> _Long:
        """The larger of the two, nulls skipped (SQL's ``greatest``)."""
        take = other.valid & (~self.valid | (other.values > self.values))
        return _Long(np.where(take, other.values, self.values), self.valid | other.valid)

    def where(self, mask: np.ndarray) -> _Long:
        return _Long(np.where(mask, self.values, 0), self.valid & mask)

    def arrow(self) -> pa.Array:
        return pa.array(self.values, pa.int64(), mask=~self.valid)


def replay_partition(events: pa.Table) -> pa.Table:
    """The replayed state of every event of ``events`` (see pipelines.replay.events's docstring).

    ``events``: whole queues, each in REPLAY_ORDER, with its checkpoint row first if it has
    one (SEED_STATE columns: null on the events). Returns the events without the checkpoint
    rows and SEED_STATE, with STATE_COLUMNS added.
    """
    n = events.num_rows
    row = np.arange(n)
    queue = events.column(QUEUE_ID).to_numpy()
    is_first = np.r_[True, queue[1:] != queue[:-1]] if n else np.zeros(0, bool)
    starts = np.flatnonzero(is_first)
    of_queue = np.cumsum(is_first) - 1  # each row's queue, numbered from 0 in the partition
    first_row = starts[of_queue]

    def last_before(mask: np.ndarray) -> np.ndarray:
        """Index of the queue's last row before each row where ``mask`` holds; -1 if none."""
        index = np.r_[-1, np.maximum.accumulate(np.where(mask, row, -1))[:-1]] if n else row
        return np.where(index >= first_row, index, -1)

    commit, snapshot = _Long.of(events.column("commit_offset")), _Long.of(events.column("snapshot_offset"))
    is_commit, is_snapshot = commit.valid, snapshot.valid
    # the checkpoint state each row continues from: its queue's first row's (null if none)
    seed = {c: _Long.of(events.column(c)).at(first_row) for c in SEED_STATE}
    stored = commit.or_else(snapshot)

    event_at = _Long.of(events.column("event_at"))
    at_commit, at_snapshot = last_before(is_commit), last_before(is_snapshot)
    previous_commit = commit.at(at_commit).or_else(seed["last_commit_offset"])
    previous_commit_at = event_at.at(at_commit).or_else(seed["last_commit_at"])
    previous_snapshot = snapshot.at(at_snapshot).or_else(seed["last_snapshot_offset"])
    previous_snapshot_at = event_at.at(at_snapshot).or_else(seed["last_snapshot_at"])
    previous_stored = stored.at(last_before(stored.valid)).or_else(seed["last_stored_offset"])
    # broker semantics: what the broker held before each event is the previous commit's offset,
    # unless a snapshot settled after that commit shows the table moved since (a failover to a
    # slave's older table, a 5.x server-side reset); failing a commit, the latest snapshot
    commit_holds = previous_commit.valid & ~(
        previous_snapshot.valid & _settled_after(previous_snapshot_at, previous_commit_at)
    )
    before = _Long(
        np.where(commit_holds, previous_commit.values, previous_snapshot.values),
        commit_holds | previous_snapshot.valid,
    ).where(is_commit)
    source = np.where(is_commit & commit_holds, 0, np.where(before.valid, 1, 2))
    is_regression = before.valid & (commit.values < before.values)

    # client semantics: the largest of the checkpoint's mark, the stored offset the queue's
    # first commit started from, and every commit so far (on a snapshot: the mark as of it)
    first_commit = np.minimum.reduceat(np.where(is_commit, row, n), starts)[of_queue] if n else row
    started_from = before.at(np.where(first_commit <= row, first_commit, -1))
    largest = _running_max(commit, starts)
    client_after = largest.greatest(started_from).greatest(seed["client_offset_hwm"])

    # commit regressions since the queue's previous snapshot (or carried by the checkpoint)
    total = np.cumsum(is_regression, dtype=np.int64)
    so_far = total - (total[first_row] - is_regression[first_row]) if n else total
    carried = np.where(
        seed["commit_regressions_since_snapshot"].valid, seed["commit_regressions_since_snapshot"].values, 0
    )
    between = np.where(at_snapshot >= 0, so_far - so_far[np.maximum(at_snapshot, 0)], so_far + carried)

    # the last commit before each event, when and by whom (before the queue's first commit: the
    # checkpoint's); a snapshot compares with it once it is old enough to be in the file, and
    # while it is what the broker held (no snapshot settled after it has shown the table moved)
    settled = previous_commit.where(is_snapshot & commit_holds & _settled_after(event_at, previous_commit_at))
    # what the regressions read of the last commit: on the rows that went below it (a commit
    # below a snapshot that moved past the last commit does not rest on that commit)
    below_previous = (
        is_regression & is_commit & previous_commit.valid & (commit.values < previous_commit.values)
    )
    judged = below_previous | (settled.valid & (snapshot.values < settled.values))
    is_seeded = events.column("event_rank").to_numpy(zero_copy_only=False) == SEED_RANK
    host_at = np.where(at_commit >= 0, at_commit, np.where(is_seeded[first_row], first_row, -1))
    host_at = np.where(judged, host_at, -1)
    previous_host = events.column("client_host").take(pa.array(np.maximum(host_at, 0), mask=host_at < 0))

    state = {
        "event_seq": pa.array(row - first_row + 1, STATE_TYPES["event_seq"]),
        "previous_snapshot_offset": previous_snapshot.arrow(),
        "stored_offset": stored.arrow(),
        "previous_stored_offset": previous_stored.arrow(),
        "stored_offset_before": before.arrow(),
        "stored_before_source": pa.array(
            ["commit", "snapshot", None], STATE_TYPES["stored_before_source"]
        ).take(pa.array(source)),
        "is_regression": pa.array(is_regression & is_commit, STATE_TYPES["is_regression"]),
        "client_offset_after": client_after.arrow(),
        "commit_regressions_between": pa.array(between, pa.int64()),
        "commit_regressions_after": pa.array(np.where(is_commit, between, 0), pa.int64()),
        "settled_commit_offset": settled.arrow(),
        "previous_commit_at": previous_commit_at.where(judged)
        .arrow()
        .cast(STATE_TYPES["previous_commit_at"]),
        "previous_commit_host": previous_host,
    }
    kept = [c for c in events.column_names if c not in SEED_STATE]
    out = pa.table({**{c: events.column(c) for c in kept}, **state})
    return out.filter(pc.not_equal(events.column("event_rank"), SEED_RANK))


def _settled_after(later: _Long, earlier: _Long) -> np.ndarray:
    """Where ``later`` is at least SNAPSHOT_SETTLE_SECONDS after ``earlier`` (both known): a
    snapshot that late holds the commit, so it shows what the broker stored after it."""
    return (
        later.valid & earlier.valid & (earlier.values <= later.values - SNAPSHOT_SETTLE_SECONDS * 1_000_000)
    )


def _running_max(values: _Long, starts: np.ndarray) -> _Long:
    """The largest value of each row's queue so far, the row's own included (nulls skipped):
    one accumulation per queue (a partition holds hundreds of queues, not millions)."""
    largest = np.where(values.valid, values.values, np.iinfo(np.int64).min)
    seen = values.valid.copy()
    bounds = np.r_[starts, len(largest)]
    for lo, hi in itertools.pairwise(bounds):
        np.maximum.accumulate(largest[lo:hi], out=largest[lo:hi])
        np.logical_or.accumulate(seen[lo:hi], out=seen[lo:hi])
    return _Long(np.where(seen, largest, 0), seen)


def in_replay_order(batches: list[pa.RecordBatch]) -> pa.Table | None:
    """A partition's events (whole queues, in any order) as one table, each queue's rows together
    in REPLAY_ORDER, its checkpoint row first (a null ``event_at`` sorts first, as in Spark's
    ascending order); None if empty."""
    if not batches:
        return None
    events = pa.Table.from_batches(batches)
    keys = [(c, "ascending", "at_start") for c in (QUEUE_ID, *REPLAY_ORDER)]
    return events.take(pc.sort_indices(events, sort_keys=keys))


def replayed(batches: Iterator[pa.RecordBatch]) -> pa.Table | None:
    """A partition of events (``mapInArrow``'s batches: whole queues) replayed as one table; None if empty."""
    events = in_replay_order(list(batches))  # the batches as received are let go once sorted
    return None if events is None else replay_partition(events)


def replay_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` over a partition of ordered events: every event with its replayed state."""
    state = replayed(batches)
    if state is not None:
        yield from state.to_batches()


class Names:
    """The text a partition's queue and file ids stand for (:class:`pipelines.replay.events.EventIds`'s
    two dictionaries, as Arrow tables), to give the replayed rows their text back.

    A text column comes back dictionary-encoded, each of its values once and an index a row: a
    queue's or a file's text is the same on many rows, and a row's is then neither copied nor, in
    a Parquet file of them, hashed again (docs/experiments.md, "The replayed rows' text by its
    dictionary")."""

    def __init__(self, queues: pa.Table, files: pa.Table):
        self._known: dict[str, np.ndarray] = {}  # each dictionary's ids, in order
        self._text: dict[str, dict[str, _Text]] = {}  # and its other columns, in the ids' order
        for id_column, dictionary in ((QUEUE_ID, queues), (FILE_ID, files)):
            dictionary = dictionary.sort_by(id_column)
            self._known[id_column] = dictionary.column(id_column).to_numpy()
            self._text[id_column] = {
                name: _Text.of(dictionary.column(name))
                for name in dictionary.column_names
                if name != id_column
            }

    def _lookup(self, id_column: str, ids: pa.ChunkedArray) -> dict[str, pa.Array]:
        """The columns of the dictionary of ``id_column`` (without the id) on each of ``ids``."""
        known = self._known[id_column]
        wanted = pc.fill_null(ids, -1).to_numpy()
        at = np.searchsorted(known, wanted)
        if len(wanted) and (
            np.any(at >= len(known)) or np.any(known[np.minimum(at, len(known) - 1)] != wanted)
        ):
            raise ValueError(f"no {id_column} in the dictionary for some replayed rows")
        return {name: text.at(at) for name, text in self._text[id_column].items()}

    def attach(self, state: pa.Table) -> pa.Table:
        """``state`` with the queue key's and the landed file's columns beside their ids."""
        for id_column in (QUEUE_ID, FILE_ID):
            for name, column in self._lookup(id_column, state.column(id_column)).items():
                state = state.append_column(name, column)
        return state


class _Text:
    """A column of a dictionary of queues or files: a text column as its distinct values and
    each row's index among them (-1: null); any other column as it is."""

    __slots__ = ("codes", "values")

    def __init__(self, values: pa.Array, codes: np.ndarray | None):
        self.values, self.codes = values, codes

    @classmethod
    def of(cls, column: pa.ChunkedArray) -> _Text:
        if not pa.types.is_string(column.type):
            return cls(column.combine_chunks(), None)
        encoded = pc.dictionary_encode(column.combine_chunks())
        return cls(encoded.dictionary, pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False))

    def at(self, rows: np.ndarray) -> pa.Array:
        """The column's value on each of ``rows``."""
        if self.codes is None:
            return self.values.take(pa.array(rows))
        codes = self.codes[rows]
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32(), mask=codes < 0), self.values)


def commit_rows(named: pa.Table) -> pa.Table:
    """silver/offset_commits_replayed's rows of the replayed commits in ``named`` (state with
    its text, :meth:`Names.attach`), by the projection Spark renders too."""
    return REPLAYED_COMMITS.arrow(named)


def timeline_rows(named: pa.Table) -> pa.Table:
    """silver/stored_offset_timeline's rows of every event in ``named`` (state with its text,
    :meth:`Names.attach`), by the projection Spark renders too."""
    return STORED_OFFSET_TIMELINE.arrow(named)


def checkpoint_and_regression_rows(state: pa.Table) -> pa.Table:
    """The rows of ``state`` that the regressions and the next checkpoint read: every commit
    regression, every snapshot below the one before it, and each queue's last event, last
    commit and last snapshot (see pipelines.replay.tables.next_checkpoint: "last" is by
    EVENT_SEQ, and the client's mark only grows, so it is at the last commit)."""
    n = state.num_rows
    if not n:
        return state
    queue = state.column(QUEUE_ID).to_numpy()
    last_of_queue = np.r_[queue[1:] != queue[:-1], True]
    keep = last_of_queue.copy()
    ends = np.flatnonzero(last_of_queue)
    starts = np.r_[0, ends[:-1] + 1]
    for kind in ("commit_offset", "snapshot_offset"):
        valid = pc.is_valid(state.column(kind)).to_numpy(zero_copy_only=False)
        # each queue's last row of this kind: the last valid index before the next queue starts
        found = np.maximum.accumulate(np.where(valid, np.arange(n), -1))[ends]
        keep[found[found >= starts]] = True
    keep |= holds(REGRESSION, state).to_numpy(zero_copy_only=False)
    return state.filter(pa.array(keep))
