"""One run holds a lake at a time; a killed run releases it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from jobs.io.lake_lock import LOCK_NAME, LakeBusyError, LakeLock


def test_a_second_holder_is_refused_with_the_first_ones_name_and_may_hold_it_once_released(tmp_path):
    with (
        LakeLock(tmp_path / "lake", "run-1"),
        pytest.raises(LakeBusyError, match=r'run \{"run_id": "run-1", "pid": \d+'),
        LakeLock(tmp_path / "lake", "run-2"),
    ):
        pass
    with LakeLock(tmp_path / "lake", "run-2"):
        assert '"run_id": "run-2"' in (tmp_path / "lake" / LOCK_NAME).read_text()


def test_a_process_killed_while_holding_the_lake_leaves_no_lock(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from jobs.io.lake_lock import LakeLock\n"
         f"with LakeLock({str(tmp_path / 'lake')!r}, 'doomed'):\n    print('held', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True, cwd=os.getcwd(),
    )  # fmt: skip
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(LakeBusyError, match="doomed"), LakeLock(tmp_path / "lake", "next"):
        pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    started = time.monotonic()
    with LakeLock(tmp_path / "lake", "next"):
        assert time.monotonic() - started < 5


def test_a_lake_on_object_storage_is_not_locked_here():
    with LakeLock("s3a://bucket/lake", "run-1"), LakeLock("s3a://bucket/lake", "run-2"):
        pass
