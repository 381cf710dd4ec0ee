"""Where a run's messages go: the person gets progress and results; the log file gets the rest.

The terminal (or Airflow's task log) shows what a person acts on. Everything else, every
record of Python's logging and everything the JVM prints (Java's start-up notes, Spark's
and Parquet's warnings, the Python workers' output), goes to the run's log file,
``<lake>/logs/<run_id>.log`` unless the settings name another directory. With ``-v`` the
terminal shows it all, as it would without OffsetLake in between.

    configure_console(verbose=False, interactive=sys.stderr.isatty())
    attach_log_file(log_file("/data/lake", None, run_id))
    with process_output_to(path):     # around the JVM's start: it keeps the file as its output
        SparkSession.builder.getOrCreate()
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_HANDLER_NAME = "offsetlake-log-file"
# py4j tells at INFO of each connection to the JVM a thread opens and closes: nothing to act on
logging.getLogger("py4j").setLevel(logging.WARNING)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def inert(text: object) -> str:
    """``text`` on one line for a log or a terminal: a topic or group name from a landed file may hold
    a line break (a forged log line) or a terminal escape; each control character shows as its escape."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def log_directory(lake_root: str, directory: Path | None) -> Path:
    """Where a lake's logs go: ``directory`` when set, else ``<lake>/logs`` (a lake given as a
    URI keeps its logs in ``./offsetlake-logs``, since the JVM writes to a local file)."""
    if directory is not None:
        return directory
    return Path(lake_root) / "logs" if "://" not in lake_root else Path("offsetlake-logs")


def log_file(lake_root: str, directory: Path | None, run_id: str) -> Path:
    """The run's log file, in :func:`log_directory`."""
    return log_directory(lake_root, directory) / (re.sub(r"[^A-Za-z0-9._:+-]", "_", run_id) + ".log")


# the runner's "stage X: started" / "done in" records: in the log file and with -v (the bench and
# the crash trial read them there), not on a default console
STAGE_LOGGER = "offsetlake.stages"


class _ConsoleFilter(logging.Filter):
    """On a terminal only errors (progress lines say the rest); elsewhere (Airflow) the
    project's own records from INFO up, and other libraries' warnings."""

    def __init__(self, interactive: bool):
        super().__init__()
        self.interactive = interactive

    def filter(self, record: logging.LogRecord) -> bool:
        if self.interactive:
            return record.levelno >= logging.ERROR
        if record.name == STAGE_LOGGER and record.levelno < logging.WARNING:
            return False  # the runner's stage boundaries: the progress lines say the same on the console
        own = record.name == "offsetlake" or record.name.startswith("offsetlake.")
        return record.levelno >= (logging.INFO if own else logging.WARNING)


def configure_console(*, verbose: bool, interactive: bool) -> None:
    """Python's logging on standard error: everything from INFO with ``verbose``, else filtered."""
    logging.captureWarnings(True)  # Python's warnings (a library's deprecation notes) are log records too
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        if getattr(handler, "name", None) != _HANDLER_NAME:
            root.removeHandler(handler)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(logging.Formatter(FORMAT))
    if not verbose:
        console.addFilter(_ConsoleFilter(interactive))
    root.addHandler(console)


def attach_log_file(path: Path) -> Path:
    """Every logging record from INFO up also into ``path`` (created with its directory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    detach_log_file()
    root = logging.getLogger()
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(logging.INFO)
    root.addHandler(handler)
    root.setLevel(min(root.level, logging.INFO) or logging.INFO)
    return path


def detach_log_file() -> None:
    """Stop writing records into the run's log file (a shared session, after each command it served)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "name", None) == _HANDLER_NAME:
            root.removeHandler(handler)
            handler.close()


@contextlib.contextmanager
def process_output_to(path: Path | None) -> Iterator[None]:
    """Point this process's standard output and error (the file descriptors, which a child
    process inherits) at ``path`` for the duration; None leaves them alone.

    The JVM that PySpark starts inside writes its own notes and its log4j console output to
    the descriptors it inherited, for its whole life, and so do the Python workers it starts.
    """
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for fd in saved:
            os.dup2(target, fd)
        yield
    finally:
        for fd, original in saved.items():
            os.dup2(original, fd)
            os.close(original)
        os.close(target)
