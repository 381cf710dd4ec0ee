"""Where a run's messages go: the log file takes what children print and every log record; the
console shows what a person acts on."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

from jobs.runtime.logs import _ConsoleFilter, attach_log_file, log_file, process_output_to


def test_the_log_file_is_in_the_lake_unless_the_settings_say_where(tmp_path):
    assert log_file("/data/lake", None, "r 1/2") == Path("/data/lake/logs/r_1_2.log")
    assert log_file("/data/lake", tmp_path, "r1") == tmp_path / "r1.log"
    assert log_file("s3a://bucket/lake", None, "r1") == Path("offsetlake-logs/r1.log")


def test_a_child_started_inside_writes_to_the_file_and_the_terminal_gets_its_descriptors_back(
    tmp_path, capfd
):
    path = tmp_path / "logs" / "run.log"
    with process_output_to(path):
        subprocess.run(
            [sys.executable, "-c", "import sys; print('out'); print('WARN err', file=sys.stderr)"], check=True
        )
    print("after")
    assert path.read_text().splitlines() == ["out", "WARN err"]
    assert capfd.readouterr().out == "after\n"


def _record(name: str, level: int) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, "m", None, None)


def test_a_terminal_shows_errors_only_and_a_task_log_the_projects_information():
    terminal, task_log = _ConsoleFilter(interactive=True), _ConsoleFilter(interactive=False)
    shown = [
        (name, level)
        for name in ("offsetlake.progress", "py4j.clientserver")
        for level in (logging.INFO, logging.WARNING, logging.ERROR)
        if task_log.filter(_record(name, level))
    ]
    assert shown == [
        ("offsetlake.progress", logging.INFO),
        ("offsetlake.progress", logging.WARNING),
        ("offsetlake.progress", logging.ERROR),
        ("py4j.clientserver", logging.WARNING),
        ("py4j.clientserver", logging.ERROR),
    ]
    assert [
        terminal.filter(_record("offsetlake.quality.alerts", lv)) for lv in (logging.WARNING, logging.ERROR)
    ] == [
        False,
        True,
    ]


def test_every_record_reaches_the_log_file(tmp_path):
    path = attach_log_file(tmp_path / "run.log")
    try:
        logging.getLogger("offsetlake.test").info("ingest done")
        logging.getLogger("py4j.test").warning("gateway")
    finally:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if h.get_name() == "offsetlake-log-file"]:
            root.removeHandler(handler)
            handler.close()
    lines = path.read_text().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "INFO offsetlake.test: ingest done",
        "WARNING py4j.test: gateway",
    ]
