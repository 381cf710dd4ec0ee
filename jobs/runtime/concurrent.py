"""Independent work of a stage run side by side.

An hour's tables are small: each write spends most of its time planning in the driver and in
Spark's fixed costs per job, with the cores idle, so writes that depend on nothing of each other
overlap (docs/experiments.md, "An hour's independent work side by side"). Spark runs the jobs of
several threads at once; each write still commits its own table alone.

The threads are kept for the process's life: each keeps its own connection to the JVM, which a
new thread would open again (and a long-lived shared session would open and close every interval).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
_THREADS = 8  # the most a stage hands over at once: an ingest's bronze tables and its rejections
_PREFIX = "offsetlake-side"
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix=_PREFIX)
        return _pool


def side_by_side(*calls: Callable[[], T]) -> list[T]:
    """What ``calls`` return, each run in a thread of its own, once all have ended; the first of
    ``calls`` that raised raises here (after the others ended: none is left half-run behind).
    Called from one of those threads, it runs ``calls`` one after the other (a call waiting for
    threads that wait for it would never end)."""
    if len(calls) <= 1 or threading.current_thread().name.startswith(_PREFIX):
        return [call() for call in calls]
    futures = [_executor().submit(call) for call in calls]
    for future in futures:
        future.exception()  # waits for it, whether it raised or not
    return [future.result() for future in futures]
