"""The replay kernel on Arrow tables, without Spark: a partition's queues replayed in one
pass, each from its own checkpoint row, none leaking into the next."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa

from pipelines.replay.expressions import holds
from pipelines.replay.kernel import (
    SEED_RANK,
    SEED_STATE,
    checkpoint_and_regression_rows,
    in_replay_order,
    replay_partition,
    replayed,
)
from pipelines.replay.projections import REGRESSION

T0 = datetime(2026, 11, 21, tzinfo=UTC)
SNAP, COMMIT = 0, 1


def partition(rows: list[tuple]) -> pa.Table:
    """Rows of (queue, seconds, rank, commit offset, snapshot offset, seed state or None[, client
    host]), in replay order; a seed row has rank SEED_RANK and a dict of SEED_STATE values (and
    its last commit's host as its client host)."""
    columns: dict[str, list] = {
        c: []
        for c in (
            "_queue",
            "_file",
            "event_at",
            "event_rank",
            "line_rank",
            "commit_offset",
            "snapshot_offset",
            "client_host",
        )
    }
    seeds: dict[str, list] = {c: [] for c in SEED_STATE}
    for line, (queue, seconds, rank, commit, snapshot, seed, *host) in enumerate(rows):
        values = (
            queue,
            -1 if rank == SEED_RANK else 0,
            None if seconds is None else T0 + timedelta(seconds=seconds),
            rank,
            line,
            commit,
            snapshot,
            host[0] if host else None,
        )
        for column, value in zip(columns, values):
            columns[column].append(value)
        for column in SEED_STATE:
            seeds[column].append((seed or {}).get(column))
    types = {"event_at": pa.timestamp("us", "UTC"), "event_rank": pa.int32(), "client_host": pa.string()}
    types |= {c: pa.timestamp("us", "UTC") for c in ("last_commit_at", "last_snapshot_at")}
    return pa.table({c: pa.array(v, types.get(c, pa.int64())) for c, v in {**columns, **seeds}.items()})


def state(table: pa.Table, *columns: str) -> list[tuple]:
    out = replay_partition(table)
    return list(zip(*(out.column(c).to_pylist() for c in columns)))


def test_the_example_of_the_replay_docstring():
    rows = [
        (0, 0, SNAP, None, 100, None),
        (0, 10, COMMIT, 120, None, None),
        (0, 20, COMMIT, 90, None, None),
        (0, 30, COMMIT, 130, None, None),
    ]
    assert state(
        partition(rows),
        "stored_offset_before",
        "stored_before_source",
        "client_offset_after",
        "is_regression",
        "event_seq",
    ) == [
        (None, None, None, False, 1),
        (100, "snapshot", 120, False, 2),
        (120, "commit", 120, True, 3),
        (90, "commit", 130, False, 4),
    ]


def test_each_queue_continues_from_its_own_checkpoint_row_and_nothing_leaks_into_the_next():
    seed = {"last_commit_offset": 500, "client_offset_hwm": 700, "last_snapshot_offset": 450, "commit_regressions_since_snapshot": 2,
            "last_stored_offset": 500}  # fmt: skip
    rows = [
        (0, 0, COMMIT, 50, None, None), (0, 5, COMMIT, 40, None, None),  # queue 0: no checkpoint
        (1, None, SEED_RANK, None, None, seed), (1, 1, COMMIT, 480, None, None), (1, 2, SNAP, None, 470, None),
        (2, 3, COMMIT, 10, None, None),  # queue 2: the first commit knows nothing before it
    ]  # fmt: skip
    columns = ("_queue", "stored_offset_before", "client_offset_after", "previous_stored_offset", "previous_snapshot_offset",
               "commit_regressions_between", "commit_regressions_after", "event_seq")  # fmt: skip
    assert state(partition(rows), *columns) == [
        (0, None, 50, None, None, 0, 0, 1),
        (0, 50, 50, 50, None, 1, 1, 2),
        (1, 500, 700, 500, 450, 3, 3, 2),  # the checkpoint row was the queue's first (seq 1), and leaves
        (1, None, 700, 480, 450, 3, 0, 3),  # on a snapshot, the client's mark as of it
        (2, None, 10, None, None, 0, 0, 1),
    ]


def test_a_snapshot_is_compared_with_the_last_commit_once_that_commit_is_old_enough_to_be_in_the_file():
    rows = [
        (0, 0, COMMIT, 100, None, None, "10.0.0.1:1"),
        (0, 5, SNAP, None, 90, None),  # 5 s after the commit: the file may not hold it yet
        (0, 30, SNAP, None, 90, None),  # 30 s after: the table went back
        (0, 40, COMMIT, 120, None, None, "10.0.0.2:2"),
        (0, 60, SNAP, None, 120, None),
    ]  # fmt: skip
    columns = ("event_seq", "settled_commit_offset", "previous_commit_at", "previous_commit_host")
    assert state(partition(rows), *columns) == [
        (1, None, None, None),
        (2, None, None, None),
        (3, 100, T0, "10.0.0.1:1"),
        (4, None, None, None),
        (5, 120, None, None),  # settled, not below: the last commit is not carried
    ]
    out = replay_partition(partition(rows))
    assert out.filter(holds(REGRESSION, out)).column("event_seq").to_pylist() == [3]


def test_a_snapshot_settled_after_the_last_commit_is_what_the_next_commit_overwrites():
    # the table went back (a failover): that drop is one regression, the snapshot's; the next
    # commit is above what the broker then held, so it is none
    rows = [
        (0, 0, SNAP, None, 100, None), (0, 10, COMMIT, 120, None, None), (0, 60, SNAP, None, 50, None),
        (0, 120, SNAP, None, 55, None),  # the slave's table moves on: not behind the commit again
        (0, 180, COMMIT, 60, None, None),
    ]  # fmt: skip
    columns = ("stored_offset_before", "stored_before_source", "settled_commit_offset", "is_regression")
    assert state(partition(rows), *columns) == [
        (None, None, None, False),
        (100, "snapshot", None, False),
        (None, None, 120, False),
        (None, None, None, False),
        (55, "snapshot", None, False),
    ]
    out = replay_partition(partition(rows))
    assert out.filter(holds(REGRESSION, out)).column("event_seq").to_pylist() == [3]


def test_a_commit_below_a_settled_snapshot_above_the_last_commit_is_a_regression():
    # the snapshot holds commits the evidence lacks: the broker stored 200 when 190 came
    rows = [
        (0, 0, COMMIT, 100, None, None, "10.0.0.1:1"), (0, 30, SNAP, None, 200, None),
        (0, 35, COMMIT, 190, None, None, "10.0.0.2:2"),
        (0, 36, SNAP, None, 150, None),  # 1 s after the commit: the file may not hold it yet
        (0, 40, COMMIT, 180, None, None, "10.0.0.3:3"),
    ]  # fmt: skip
    columns = ("stored_offset_before", "stored_before_source", "is_regression", "client_offset_after",
               "previous_commit_host")  # fmt: skip
    assert state(partition(rows), *columns) == [
        (None, None, False, 100, None),
        (None, None, False, 100, None),
        (200, "snapshot", True, 190, None),  # above the last commit: that commit is no cause
        (None, None, False, 190, None),
        (190, "commit", True, 190, "10.0.0.2:2"),
    ]


def test_a_checkpoints_snapshot_settled_after_its_last_commit_is_what_the_first_commit_overwrites():
    seed = {"last_commit_offset": 120, "last_commit_at": T0, "last_snapshot_offset": 50,
            "last_snapshot_at": T0 + timedelta(seconds=60), "client_offset_hwm": 120, "last_stored_offset": 50}  # fmt: skip
    unsettled = seed | {"last_snapshot_at": T0 + timedelta(seconds=5)}
    rows = [
        (0, None, SEED_RANK, None, None, seed, "10.0.0.1:1"), (0, 120, COMMIT, 60, None, None),
        (1, None, SEED_RANK, None, None, unsettled, "10.0.0.1:1"), (1, 120, COMMIT, 60, None, None),
    ]  # fmt: skip
    assert state(
        partition(rows), "_queue", "stored_offset_before", "stored_before_source", "is_regression"
    ) == [
        (0, 50, "snapshot", False),
        (1, 120, "commit", True),
    ]


def test_a_commit_regression_carries_the_last_commit_before_it_even_the_checkpoints():
    seed = {
        "last_commit_offset": 500,
        "last_commit_at": T0,
        "client_offset_hwm": 500,
        "last_stored_offset": 500,
    }
    rows = [
        (0, None, SEED_RANK, None, None, seed, "10.0.0.1:1"),
        (0, 10, COMMIT, 400, None, None, "10.0.0.2:2"),
        (0, 20, COMMIT, 300, None, None, "10.0.0.2:2"),
        (0, 30, COMMIT, 350, None, None, "10.0.0.3:3"),
    ]  # fmt: skip
    columns = ("is_regression", "previous_commit_at", "previous_commit_host")
    assert state(partition(rows), *columns) == [
        (True, T0, "10.0.0.1:1"),
        (True, T0 + timedelta(seconds=10), "10.0.0.2:2"),
        (False, None, None),  # no regression: nothing carried
    ]


def test_the_checkpoint_and_regression_rows_are_each_queues_last_of_each_kind_and_its_regressions():
    rows = [
        (0, 0, SNAP, None, 100, None), (0, 1, COMMIT, 90, None, None), (0, 2, COMMIT, 95, None, None), (0, 3, SNAP, None, 80, None),
        (0, 4, SNAP, None, 85, None), (0, 5, COMMIT, 120, None, None), (0, 6, COMMIT, 130, None, None),
        (1, 0, COMMIT, 7, None, None), (1, 1, COMMIT, 8, None, None),
    ]  # fmt: skip
    kept = checkpoint_and_regression_rows(replay_partition(partition(rows)))
    # the regression at 1 s, the last snapshot, the last commit (also the last event); not the
    # snapshot below the one before it at 3 s (the commit regression between explains it: no
    # snapshot_pair); queue 1 has no snapshot
    assert list(zip(kept.column("_queue").to_pylist(), kept.column("event_seq").to_pylist())) == [
        (0, 2),
        (0, 5),
        (0, 7),
        (1, 2),
    ]


def test_an_empty_partition_gives_no_rows():
    assert replay_partition(partition([])).num_rows == 0
    assert replayed(iter([])) is None


def test_a_partition_as_spark_hands_it_over_is_replayed_in_replay_order():
    seed = {"last_commit_offset": 500, "client_offset_hwm": 700, "last_snapshot_offset": 450, "commit_regressions_since_snapshot": 2,
            "last_stored_offset": 500}  # fmt: skip
    rows = [
        (0, 0, COMMIT, 50, None, None), (0, 5, SNAP, None, 45, None), (0, 5, COMMIT, 40, None, None),
        (1, None, SEED_RANK, None, None, seed), (1, 1, COMMIT, 480, None, None), (1, 2, SNAP, None, 470, None),
        (2, 3, COMMIT, 10, None, None),
    ]  # fmt: skip
    ordered = partition(rows)
    # the same instant: the snapshot first by its rank, though its line comes after the commit's
    ordered = ordered.set_column(
        ordered.schema.get_field_index("line_rank"), "line_rank", pa.array([0, 9, 1, 3, 4, 5, 6], pa.int64())
    ).append_column("_path", pa.array([7] * len(rows), pa.int64()))
    shuffled = ordered.take(pa.array([6, 2, 4, 0, 3, 5, 1]))  # queues and instants interleaved
    assert in_replay_order(shuffled.to_batches(max_chunksize=2)).equals(ordered)
    assert replayed(iter(shuffled.to_batches(max_chunksize=3))).equals(replay_partition(ordered))


def test_the_workers_keep_exactly_the_rows_sparks_regressions_select():
    rows = [
        (0, 0, SNAP, None, 100, None), (0, 1, COMMIT, 90, None, None), (0, 3, SNAP, None, 80, None),  # explained
        (0, 4, SNAP, None, 70, None),  # below 80, no commit regression since: a snapshot pair
        (1, 0, SNAP, None, 50, None), (1, 1, SNAP, None, 40, None), (1, 2, COMMIT, 45, None, None),
    ]  # fmt: skip
    state = replay_partition(partition(rows))
    regressions = state.filter(holds(REGRESSION, state))
    assert list(zip(regressions.column("_queue").to_pylist(), regressions.column("event_seq").to_pylist())) == [
        (0, 2), (0, 4), (1, 2),
    ]  # fmt: skip
    kept = checkpoint_and_regression_rows(state)
    pairs = {(q, n) for q, n in zip(kept.column("_queue").to_pylist(), kept.column("event_seq").to_pylist())}
    assert {(0, 2), (0, 4), (1, 2)} <= pairs
