"""The uniqueness check's sorting step, without Spark: which hashes a partition or a table holds twice."""

import numpy as np
import pyarrow as pa

from pipelines.expectations import repeated_hashes, repeated_values


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
