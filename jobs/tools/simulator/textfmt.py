"""Column-wise text building with pyarrow: millions of log or JSON lines without a Python loop.

A line is a concatenation of columns (``binary_join_element_wise``); the file content
is the value buffer of the resulting string array, used without copying line by line.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_PAD2 = pa.array([f"{i:02d}" for i in range(100)])
_PAD3 = pa.array([f"{i:03d}" for i in range(1000)])


def format_instants(
    millis: np.ndarray,
    *,
    offset_ms: int = 0,
    date_time_sep: str = "T",
    fraction_sep: str | None = ".",
    suffix: str = "",
) -> pa.Array:
    """``yyyy-MM-dd<sep>HH:mm:ss[<fraction_sep>SSS]<suffix>`` for epoch milliseconds shifted by ``offset_ms``.

    >>> format_instants(np.array([1795255500123]), suffix="Z").to_pylist()
    ['2026-11-21T10:05:00.123Z']
    """
    local = np.asarray(millis, dtype=np.int64) + offset_ms
    if len(local) == 0:
        return pa.array([], pa.string())
    hours = local // 3_600_000
    first = int(hours.min())
    prefixes = pa.array(
        [
            datetime.fromtimestamp(h * 3600, tz=UTC).strftime(f"%Y-%m-%d{date_time_sep}%H:")
            for h in range(first, int(hours.max()) + 1)
        ]
    )
    parts = [
        prefixes.take(hours - first),
        _PAD2.take((local // 60_000) % 60),
        ":",
        _PAD2.take((local // 1000) % 60),
    ]
    if fraction_sep is not None:
        parts += [fraction_sep, _PAD3.take(local % 1000)]
    return pc.binary_join_element_wise(*parts, suffix, "")


def iso_second(millis: int) -> str:
    """``2026-11-21T10:05:00Z``: how landing paths name an instant."""
    return datetime.fromtimestamp(millis // 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def join_columns(*columns: pa.Array | str) -> pa.Array:
    """Concatenate string columns and literal strings element-wise."""
    return pc.binary_join_element_wise(*columns, "")


def as_text(values: np.ndarray) -> pa.Array:
    """Decimal text of an integer array."""
    return pc.cast(pa.array(values), pa.string())


def concatenated_bytes(lines: pa.Array) -> memoryview:
    """All strings of ``lines`` back to back (each already ends with its line terminator), without a copy."""
    if len(lines) == 0:
        return memoryview(b"")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=4 * lines.offset)
    return memoryview(lines.buffers()[2])[int(offsets[0]) : int(offsets[-1])]
