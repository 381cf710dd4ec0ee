"""A run's progress as a person sees it: a live line per step on a terminal, plain log lines elsewhere.

On a terminal (:class:`TerminalProgress`, rich) the running step shows Spark's tasks done of
those planned (a bar: Spark knows each stage's task count), the time so far, and when it ends
the step's outcome and duration. Elsewhere (:class:`LogProgress`, e.g. an Airflow task) each
step is a log line when it starts and one when it ends, which a log collector keeps in order.

    with progress_for(sys.stderr.isatty()) as observer:
        run_stages(..., observer=observer)
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

from pyspark.sql import SparkSession
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from jobs.stages.runner import SESSION_STEP, StageObserver

log = logging.getLogger("offsetlake.progress")
POLL_SECONDS = 0.5
_TITLES = {SESSION_STEP: "start Spark"}


def spark_tasks(spark: SparkSession) -> tuple[int, int]:
    """(tasks done, tasks planned) of Spark's active stages."""
    tracker = spark.sparkContext.statusTracker()
    done = planned = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            done += info.numCompletedTasks
            planned += info.numTasks
    return done, planned


class LogProgress:
    """A log line as each step starts and ends."""

    def started(self, step: str, spark: SparkSession | None) -> None:
        log.info("%s ...", _TITLES.get(step, step))

    def finished(self, step: str, seconds: float, outcome: str) -> None:
        log.info("%s done in %.1fs: %s", _TITLES.get(step, step), seconds, outcome)


class TerminalProgress:
    """A rich line per step: Spark's tasks of the running one, then its outcome."""

    def __init__(self, console: Console):
        self._progress = Progress(
            TextColumn("{task.fields[mark]} {task.description:<12}"),
            BarColumn(bar_width=30),
            TextColumn("{task.fields[counts]:>18}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[outcome]}"),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    def __enter__(self) -> TerminalProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop_polling()
        self._progress.stop()

    def started(self, step: str, spark: SparkSession | None) -> None:
        self._task = self._progress.add_task(
            _TITLES.get(step, step), total=None, mark="…", counts="", outcome=""
        )
        if spark is not None:
            self._stop.clear()
            self._poller = threading.Thread(target=self._poll, args=(spark, self._task), daemon=True)
            self._poller.start()

    def finished(self, step: str, seconds: float, outcome: str) -> None:
        self._stop_polling()
        if self._task is not None:
            self._progress.update(
                self._task, total=1, completed=1, mark="✓", counts="", outcome=f"{seconds:.1f}s  {outcome}"
            )
            self._progress.stop_task(self._task)

    def _poll(self, spark: SparkSession, task: TaskID) -> None:
        while not self._stop.wait(POLL_SECONDS):
            with contextlib.suppress(Exception):  # a tracker that went away with its context
                done, planned = spark_tasks(spark)
                if planned:
                    counts = f"{done:,}/{planned:,} Spark tasks"
                    self._progress.update(task, total=planned, completed=done, counts=counts)

    def _stop_polling(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join()
            self._poller = None


@contextlib.contextmanager
def progress_for(interactive: bool, verbose: bool = False) -> Iterator[StageObserver]:
    """The display for this output: live lines on a terminal (unless ``verbose``, whose log lines
    would tear them), log lines otherwise."""
    if not interactive or verbose:
        yield LogProgress()
        return
    with TerminalProgress(Console(stderr=True)) as display:
        yield display
