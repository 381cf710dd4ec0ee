"""The iteration order of Java hash maps, so written tables list keys as a broker would.

fastjson writes a map in its iteration order: for a ``HashMap`` or a
``ConcurrentHashMap`` that is bucket by bucket, ``(h ^ (h >>> 16)) & (n - 1)`` with
``h`` the key's ``hashCode()`` and ``n`` the table size, and insertion order within a
bucket. Real 4.x ``consumerOffset.json`` files follow it with ``n = 16`` (the map the
broker decoded at start), e.g. ``%RETRY%please_rename_unique_group_name@...`` lands in
bucket 1 and ``TopicTest@please_rename_unique_group_name`` in bucket 14.
"""

from __future__ import annotations

from collections.abc import Iterable


def string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` as an unsigned 32-bit value."""
    data = text.encode("utf-16-be")
    value = 0
    for i in range(0, len(data), 2):
        value = (31 * value + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return value


def table_size(count: int, initial: int, concurrent: bool) -> int:
    """Table size after ``count`` insertions: a ConcurrentHashMap doubles on reaching 3/4, a HashMap beyond it."""
    size = initial
    while count >= size * 3 // 4 + (0 if concurrent else 1):
        size *= 2
    return size


def _bucket(hash_code: int, size: int) -> int:
    return (hash_code ^ (hash_code >> 16)) & (size - 1)


def hash_order_strings(keys: Iterable[str], initial: int = 16, concurrent: bool = True) -> list[str]:
    """String keys in a Java hash map's iteration order (``keys`` in insertion order)."""
    keys = list(keys)
    size = table_size(len(keys), initial, concurrent)
    return [k for _, _, k in sorted((_bucket(string_hash(k), size), i, k) for i, k in enumerate(keys))]


def hash_order_ints(keys: Iterable[int], initial: int = 16) -> list[int]:
    """Integer keys (``Integer.hashCode()`` is the value) in a ConcurrentHashMap's iteration order."""
    keys = list(keys)
    size = table_size(len(keys), initial, concurrent=True)
    return [k for _, _, k in sorted((_bucket(k & 0xFFFFFFFF, size), i, k) for i, k in enumerate(keys))]
