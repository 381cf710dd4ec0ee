"""Without Spark: the uniqueness check's sorting step (which hashes a partition or a table holds
twice), and which expectations the files' statistics settle."""

from datetime import UTC, date, datetime

import numpy as np
import pyarrow as pa

from pipelines.expectations import repeated_hashes, repeated_values, settled
from schemas.quality import Expectation, Param
from schemas.statistics import ColumnStatistics, TableStatistics


def _batches(*chunks: list[int]) -> list[pa.RecordBatch]:
    return [pa.RecordBatch.from_arrays([pa.array(c, pa.int64())], ["_key_hash"]) for c in chunks]


def _repeats(batches: list[pa.RecordBatch]) -> list[int]:
    out = list(repeated_hashes(iter(batches)))
    assert all(b.schema.names == ["_key_hash"] for b in out)
    return sorted(v for b in out for v in b.column(0).to_pylist())


def test_a_hash_repeated_across_batches_is_found_once():
    assert _repeats(_batches([5, -3, 9], [9, 1], [9, -3, 2**63 - 1])) == [-3, 9]


def test_distinct_hashes_yield_nothing():
    assert list(repeated_hashes(iter(_batches([3, 1, 2], [-7, 2**63 - 1, -(2**63)])))) == []


def test_an_empty_partition_yields_nothing():
    assert list(repeated_hashes(iter([]))) == []
    assert list(repeated_hashes(iter(_batches([])))) == []


def test_repeated_values_are_each_found_once_in_order():
    hashes = np.array([9, -3, 5, 9, 2**63 - 1, -3, 9, -(2**63)], dtype=np.int64)
    assert repeated_values(hashes).tolist() == [-3, 9]
    assert repeated_values(np.array([3, 1, 2], dtype=np.int64)).tolist() == []
    assert repeated_values(np.array([], dtype=np.int64)).tolist() == []


# -- expectations settled by the files' statistics ------------------------------------------------

_END = datetime(2026, 11, 21, 3, tzinfo=UTC)
_PARAMS = {
    Param.INTERVAL_END: _END,
    Param.FIRST_DATE: date(2026, 11, 21),
    Param.LAST_DATE: date(2026, 11, 21),
}


def _stats(**columns: ColumnStatistics) -> TableStatistics:
    return TableStatistics(rows=10, exact=True, columns=columns)


def test_no_nulls_settle_not_null_and_any_null_or_unknown_count_does_not():
    keys = Expectation("keys_not_null", "not_null", ("a", "b", "c", "d"))
    known = _stats(a=ColumnStatistics(0, 1, 5), b=ColumnStatistics(2, 1, 5), c=ColumnStatistics(None))
    assert settled(keys, _PARAMS, known) == [True, False, False, False]  # d: the log records nothing


def test_bounds_inside_the_range_settle_between_and_bounds_that_reach_past_it_do_not():
    offsets = Expectation("offsets_in_range", "between", ("a", "b", "c", "d", "e"), 0, 100)
    known = _stats(
        a=ColumnStatistics(3, 0, 100),  # inclusive at both ends; its nulls pass
        b=ColumnStatistics(0, -1, 50),
        c=ColumnStatistics(0, 5, 101),
        d=ColumnStatistics(4),  # values of no recorded range
        e=ColumnStatistics(10),  # every row null: nothing to break the range
    )
    assert settled(offsets, _PARAMS, known) == [True, False, False, False, True]


def test_a_strict_maximum_needs_an_upper_bound_below_it():
    in_interval = Expectation(
        "event_time_in_interval", "between", ("at",), None, Param.INTERVAL_END, strict_max=True
    )
    below = _stats(
        at=ColumnStatistics(
            0, datetime(2026, 11, 21, 2, tzinfo=UTC), datetime(2026, 11, 21, 2, 59, tzinfo=UTC)
        )
    )
    at_end = _stats(at=ColumnStatistics(0, datetime(2026, 11, 21, 2, tzinfo=UTC), _END))
    assert settled(in_interval, _PARAMS, below) == [True]
    assert settled(in_interval, _PARAMS, at_end) == [False]


def test_parameters_resolve_and_a_bound_of_another_type_settles_nothing():
    dates = Expectation("partition_in_interval", "between", ("day",), Param.FIRST_DATE, Param.LAST_DATE)
    assert settled(
        dates, _PARAMS, _stats(day=ColumnStatistics(0, date(2026, 11, 21), date(2026, 11, 21)))
    ) == [True]
    assert settled(
        dates, _PARAMS, _stats(day=ColumnStatistics(0, date(2026, 11, 20), date(2026, 11, 21)))
    ) == [False]
    as_instants = _stats(day=ColumnStatistics(0, _END, _END))  # a timestamp against dates: not comparable
    assert settled(dates, _PARAMS, as_instants) == [False]


def test_sets_pairs_uniqueness_and_missing_statistics_are_left_to_the_scan():
    known = _stats(a=ColumnStatistics(0, 1, 1), b=ColumnStatistics(0, 0, 0))
    assert settled(Expectation("a_known", "in_set", ("a",), values=("1",)), _PARAMS, known) == [False]
    assert settled(Expectation("a_over_b", "pair_at_least", ("a", "b")), _PARAMS, known) == [False]
    assert settled(Expectation("keys_unique", "unique", ("a",)), _PARAMS, known) == []
    assert settled(Expectation("keys_not_null", "not_null", ("a", "b")), _PARAMS, None) == [False, False]
