"""The uniqueness check's partition step, without Spark: which hashes a partition holds twice."""

import pyarrow as pa

from pipelines.expectations import repeated_hashes


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
