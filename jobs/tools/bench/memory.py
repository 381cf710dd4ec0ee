"""Memory and CPU of a driver process tree, sampled from /proc in a background thread.

The tree is the Python driver (``root_pid``), its JVM (a ``java`` descendant) and the
Python workers the JVM starts (every other descendant). Each sample records the resident
set size (``/proc/<pid>/statm``; for the forked workers the proportional set size) and the
CPU seconds used so far (``/proc/<pid>/stat``) of each group; ``peak`` gives the largest driver (Python + JVM) footprint in a time span.
Linux only; elsewhere the sampler records nothing.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
MIB = 1 << 20


@dataclass(frozen=True)
class Sample:
    at: float  # time.time()
    python_rss: int  # bytes
    jvm_rss: int
    workers_rss: int  # proportional (PSS) where the kernel tells it
    python_cpu: float  # seconds since the process started
    jvm_cpu: float
    workers_cpu: tuple[tuple[int, float], ...]  # (pid, CPU seconds) of each live worker: workers come and go

    @property
    def driver_rss(self) -> int:
        return self.python_rss + self.jvm_rss


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text()
            found += [int(p) for p in text.split()]
    except OSError:
        pass
    return found


def _proportional_bytes(pid: int) -> int | None:
    """PSS: resident memory with pages shared between processes divided among them. Python
    workers are forked from one daemon, so their plain RSS would count its pages once per worker."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _stat(pid: int) -> tuple[str, int, float] | None:
    """(command name, resident bytes, CPU seconds) of a live process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        resident = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return name, resident, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def sample_tree(root_pid: int) -> Sample | None:
    """One sample of ``root_pid`` and its descendants (None when the root is gone)."""
    root = _stat(root_pid)
    if root is None:
        return None
    jvm_rss = workers_rss = 0
    jvm_cpu = 0.0
    workers_cpu: list[tuple[int, float]] = []
    pending = _children(root_pid)
    while pending:
        pid = pending.pop()
        info = _stat(pid)
        if info is None:
            continue
        name, rss, cpu = info
        if name == "java":
            jvm_rss, jvm_cpu = jvm_rss + rss, jvm_cpu + cpu
        else:
            proportional = _proportional_bytes(pid)
            workers_rss += rss if proportional is None else proportional
            workers_cpu.append((pid, cpu))
        pending += _children(pid)
    return Sample(time.time(), root[1], jvm_rss, workers_rss, root[2], jvm_cpu, tuple(workers_cpu))


def high_water_marks(root_pid: int) -> dict[str, int]:
    """Kernel-kept peak RSS (VmHWM, bytes) of the root and its ``java`` child, when readable."""
    marks = {}
    for label, pid in (("python", root_pid), *(("jvm", c) for c in _children(root_pid))):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if label == "jvm" and "Name:\tjava" not in status:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                marks[label] = int(line.split()[1]) * 1024
    return marks


def _workers_cpu(span: list[Sample]) -> float:
    """CPU seconds the workers used over ``span``: per worker, its last sampled CPU time less
    its first (or less nothing when it started within the span); a worker's last moments
    between two samples are not seen."""
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    for position, sample in enumerate(span):
        for pid, cpu in sample.workers_cpu:
            first.setdefault(pid, cpu if position == 0 else 0.0)
            last[pid] = cpu
    return sum(last[pid] - first[pid] for pid in last)


class TreeSampler:
    """Samples a process tree every ``interval`` seconds until stopped (use as a context manager)."""

    def __init__(self, root_pid: int, interval: float = 0.2):
        self.root_pid, self.interval = root_pid, interval
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="offsetlake-bench-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            sample = sample_tree(self.root_pid)
            if sample is not None:
                self.samples.append(sample)
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def within(self, start: float, end: float) -> list[Sample]:
        return [s for s in self.samples if start <= s.at <= end]

    def peak(self, start: float, end: float) -> dict[str, float | None]:
        """Peak RSS (MiB) of the driver (Python + JVM), of each part and of the workers, and CPU seconds used, in [start, end]."""
        span = self.within(start, end)
        if not span:  # a span shorter than the interval: the sample just before its end stands for it
            span = [s for s in self.samples if s.at <= end][-1:]
        if not span:
            return {"driver_peak_mib": None, "python_peak_mib": None, "jvm_peak_mib": None, "workers_peak_mib": None,
                    "workers_max": None, "driver_cpu_seconds": None, "workers_cpu_seconds": None, "samples": 0}  # fmt: skip
        first, last = span[0], span[-1]
        return {
            "driver_peak_mib": max(s.driver_rss for s in span) / MIB,
            "python_peak_mib": max(s.python_rss for s in span) / MIB,
            "jvm_peak_mib": max(s.jvm_rss for s in span) / MIB,
            "workers_peak_mib": max(s.workers_rss for s in span) / MIB,
            "workers_max": max(len(s.workers_cpu) for s in span),
            "driver_cpu_seconds": (last.python_cpu + last.jvm_cpu) - (first.python_cpu + first.jvm_cpu),
            "workers_cpu_seconds": _workers_cpu(span),
            "samples": len(span),
        }
