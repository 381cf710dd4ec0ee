"""One writer at a time: the lock a run holds on its lake while its stages write.

Two runs on one lake (a backfill started beside the schedule, a retried Airflow task whose
first attempt still runs, a manual trigger) would each plan an interval from what the other
is half-way through writing. The second refuses at once with :class:`LakeBusyError` (exit code
5), naming the run that holds the lake; Airflow's retries start it again later.

The lock is the operating system's (``flock`` on ``<lake>/_offsetlake.lock``): it belongs to
the process that holds it and is released when that process ends, however it ends, so a run
killed with ``kill -9`` leaves no lock behind. The file keeps the holder's description for the
next run's message. A lake given as a URI (object storage) is not locked here: there each write
is an atomic Delta commit that fails when a concurrent one conflicts with it, and the runs'
records tell interleaved stages apart (jobs.stages.replay._ingest_bounds, jobs.stages.staged).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

LOCK_NAME = "_offsetlake.lock"


class LakeBusyError(RuntimeError):
    """Another run holds the lake; the message names it."""


class LakeLock:
    """``with LakeLock(root, run_id):`` holds the lake for one run (a no-op for a URI lake)."""

    def __init__(self, root: str | Path, run_id: str):
        self.root = str(root)
        self.run_id = run_id
        self._handle = None

    @property
    def is_local(self) -> bool:
        return "://" not in self.root or self.root.startswith("file://")

    def __enter__(self) -> LakeLock:
        if not self.is_local:
            return self
        root = Path(self.root.removeprefix("file://"))
        root.mkdir(parents=True, exist_ok=True)
        handle = open(root / LOCK_NAME, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another run"
            handle.close()
            raise LakeBusyError(
                f"the lake {root} is being written by {holder}; this run ({self.run_id}) did not start. "
                "Runs of one lake go one at a time: wait for that run to end (a killed run releases the lake)"
            ) from None
        handle.seek(0)
        handle.truncate()
        holder = {
            "run_id": self.run_id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(UTC).isoformat(),
        }
        handle.write("run " + json.dumps(holder))
        handle.flush()
        self._handle = handle
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None
