"""Work handed over side by side: every call's result in order, an error raised after all ended."""

from __future__ import annotations

import threading
import time

import pytest

from jobs.runtime.concurrent import side_by_side


def test_each_call_runs_in_a_thread_of_its_own_and_its_result_comes_back_in_order():
    started = threading.Barrier(3, timeout=10)  # passes only when the three calls run at once

    def call(n: int):
        def run():
            started.wait()
            return n, threading.current_thread().name

        return run

    results = side_by_side(call(1), call(2), call(3))
    assert [n for n, _ in results] == [1, 2, 3]
    assert len({name for _, name in results}) == 3
    assert threading.current_thread().name not in {name for _, name in results}


def test_an_error_is_raised_once_every_other_call_has_ended():
    ended = []

    def slow():
        time.sleep(0.3)
        ended.append("slow")

    def failing():
        raise ValueError("the write failed")

    with pytest.raises(ValueError, match="the write failed"):
        side_by_side(failing, slow)
    assert ended == ["slow"]


def test_a_call_that_hands_over_work_itself_runs_it_in_its_own_thread():
    """Nested work runs inline in the handing thread (on a full pool, waiting for a thread would never end)."""

    def outer():
        own = threading.current_thread().name
        return own, side_by_side(
            lambda: threading.current_thread().name, lambda: threading.current_thread().name
        )

    [(own, inner), _] = side_by_side(outer, lambda: None)
    assert own.startswith("offsetlake-side")
    assert inner == [own, own]
