"""The shared session: stage commands handed to one server process on a lake, and the tables they
leave equal to a run without it; a command with other settings, or with no session running, runs
in its own process; a client killed mid-stage has its jobs cancelled and the session lives on."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jobs.cli import shared_session
from jobs.cli.shared_session import (
    SERVED_COMMANDS,
    SessionError,
    ask,
    code_version,
    delegate,
    quick,
    socket_path,
)
from jobs.stages.runner import STAGE_NAMES, run_stages
from jobs.tools.lake_compare import compare_table, delta_tables
from jobs.tools.simulator import SimulationSpec, simulate
from schemas.config import load_settings

START = datetime(2026, 11, 21, tzinfo=UTC)
END = START + timedelta(hours=1)
PROGRAM = [sys.executable, "-m", "jobs.console"]


def _child_java_options(pid: int) -> str:
    """The command line of the Java process that ``pid`` started (its Spark driver JVM)."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    lines = [Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode() for child in children]
    return next(line for line in lines if "java" in line.split(" ", 1)[0])


def test_the_session_serves_run_and_each_stage():
    assert ("run", *STAGE_NAMES) == SERVED_COMMANDS


def test_without_a_session_every_command_runs_in_its_own_process(tmp_path, monkeypatch):
    lake = tmp_path / "lake"
    assert not socket_path(lake).exists()
    assert delegate(["-v", "ingest", "--lake", str(lake), "--landing", str(tmp_path)]) is None
    # a command the session does not serve is never handed over, whatever runs
    assert delegate(["sql", "--lake", str(lake), "SELECT 1"]) is None
    assert delegate(["report", "--lake", str(lake), "--run-id", "r1"]) is None
    assert delegate(["ingest", "--help"]) is None
    assert delegate(["ingest", "--lake"]) is None  # the command line's parser says what is missing
    monkeypatch.setenv("OFFSETLAKE_SHARED_SESSION", "off")
    assert delegate(["replay", "--lake", str(lake)]) is None


def test_the_code_version_changes_with_any_source_file_of_the_project(tmp_path):
    for package in ("jobs", "pipelines", "schemas", "airflow_dags"):
        (tmp_path / package / "sub").mkdir(parents=True)
        (tmp_path / package / "sub" / "module.py").write_text("RULE = 1\n")
    first = code_version(tmp_path)
    assert code_version(tmp_path) == first and code_version() != first
    (tmp_path / "airflow_dags" / "sub" / "module.py").write_text("RULE = 2\n")  # not run by a session
    assert code_version(tmp_path) == first
    (tmp_path / "pipelines" / "sub" / "module.py").write_text("RULE = 2\n")
    assert code_version(tmp_path) != first
    (tmp_path / "pipelines" / "sub" / "module.py").write_text("RULE = 1\n")
    (tmp_path / "schemas" / "sub" / "new.py").write_text("")
    assert code_version(tmp_path) != first


def test_words_to_a_session_are_answered_without_the_full_command_line(tmp_path, capsys):
    lake = ["--lake", str(tmp_path / "lake")]
    assert quick(["session", "status", *lake]) == 3
    assert quick(["-v", "session", "release", *lake, "--idle", "PT2H"]) == 0
    assert capsys.readouterr().out.count("no shared session serves") == 2
    # a session to start, and anything the full command line must judge, is left to it
    assert quick(["session", "start", *lake, "--optional"]) is None
    for wrong in (["--from", "2026-11-21T00:00:00Z"], ["--idle", "PT0M"], ["--idle", "soon"], ["--colour"]):
        assert quick(["session", "start", *lake, *wrong]) is None
    assert quick(["session", "start"]) is None and quick(["run", *lake]) is None


def test_a_session_that_does_not_answer_in_time_is_a_clear_error(tmp_path):
    # a session answers after the command it is serving: here, one that never does
    lake = tmp_path / "lake"
    path = socket_path(lake)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    try:
        with pytest.raises(SessionError, match="did not answer within 1s: it is serving a command"):
            ask(lake, {"kind": "status"}, timeout=1)
    finally:
        listener.close()
        path.unlink()


def _offsetlake(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*PROGRAM, *args], capture_output=True, text=True, timeout=600, **kwargs)


@pytest.mark.slow
def test_stages_served_by_a_shared_session_leave_the_tables_of_a_run_without_it(
    spark, tmp_path, capsys, monkeypatch
):
    landing, lake, reference = tmp_path / "landing", tmp_path / "lake", tmp_path / "reference"
    spec = SimulationSpec(
        start=START, duration=timedelta(hours=1), topics=1, queues_per_topic=(2,), groups=1, clients_per_group=(2,),
        snapshot_interval=timedelta(minutes=10), bak_every=0, progress_interval=timedelta(minutes=30), client_logs_for=0,
        rate_scale=0.3,
    )  # fmt: skip
    simulate(spec, landing)
    config = tmp_path / "offsetlake.toml"
    config.write_text('[spark]\nmaster = "local[2]"\ndriver_memory = "1g"\nshuffle_partitions = 2\n')
    interval = ["--from", START.isoformat(), "--to", END.isoformat()]
    settings_args = ["--lake", str(lake), "--config", str(config)]

    started = _offsetlake("session", "start", *settings_args)
    assert started.returncode == 0, started.stderr
    assert "serves" in started.stdout and socket_path(lake).exists()
    try:
        # the same settings again: the running session is kept
        again = _offsetlake("session", "start", *settings_args)
        assert "already serves" in again.stdout
        # it serves many intervals, however short each: its JVM compiles fully (jit = "auto")
        server = int(re.search(r"pid (\d+)", started.stdout).group(1))
        assert "-XX:+UseParallelGC" in _child_java_options(server)
        assert "TieredStopAtLevel" not in _child_java_options(server)

        # a client killed while its ingest runs: its Spark jobs are cancelled, the session lives on
        client = subprocess.Popen(
            [*PROGRAM, "ingest", *settings_args, "--landing", str(landing), *interval, "--run-id", "killed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        session_log = next((lake / "logs").glob("session-*.log"))
        deadline = time.monotonic() + 300
        while "serving ['ingest'" not in session_log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)
        os.killpg(client.pid, signal.SIGKILL)
        client.wait()
        while "exit code" not in session_log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)  # the session ends the killed client's command (status waits only so long)
        status = _offsetlake("session", "status", "--lake", str(lake))
        assert status.returncode == 0 and "1 command served" in status.stdout, status.stdout

        # a command with other settings is not served: it would run in this process
        other = tmp_path / "other.toml"
        other.write_text('[spark]\nmaster = "local[2]"\nshuffle_partitions = 3\n')
        assert delegate(["replay", "--lake", str(lake), "--config", str(other)]) is None
        assert "config and config_sha256 differ from" in capsys.readouterr().err
        # nor is a command of another release (its code changed since the session started)
        with monkeypatch.context() as patched:
            patched.setattr(shared_session, "code_version", lambda: "another release")
            assert delegate(["replay", "--lake", str(lake), "--config", str(config)]) is None
        assert "its code differs from" in capsys.readouterr().err

        # the whole interval through the session, on the lake the killed ingest left
        served = _offsetlake(
            "-v", "run", *settings_args, "--landing", str(landing), *interval, "--run-id", "r1"
        )
        assert served.returncode == 0, served.stderr[-3000:]
        assert "stage publish: done in" in served.stderr and "Published gold rows" in served.stdout
        assert f"Lake: {lake}" in served.stdout
        # an interval's end: the session stays for the next one ...
        kept = _offsetlake("session", "release", "--lake", str(lake), "--idle", "PT1H")
        assert "kept the shared session" in kept.stdout and "2 commands served" in kept.stdout, kept.stdout
        assert _offsetlake("session", "status", "--lake", str(lake)).returncode == 0
    finally:
        # ... unless it has served longer than --renew-after
        renewed = _offsetlake("session", "release", "--lake", str(lake), "--renew-after", "PT0M")
        stopped = _offsetlake("session", "stop", "--lake", str(lake))
    assert "stopped the shared session" in renewed.stdout and "2 commands served" in renewed.stdout
    assert "no shared session serves" in stopped.stdout
    assert not socket_path(lake).exists()
    assert _offsetlake("session", "status", "--lake", str(lake)).returncode == 3

    run_stages(load_settings(config), reference, landing, START, END, "r1")
    tables = sorted({*delta_tables(reference), *delta_tables(lake)})
    compared = [p for p in tables if p.split("/")[0] in ("bronze", "silver", "gold")]
    assert len(compared) >= 15
    for path in compared:
        latest = "as_of" if path == "silver/replay_checkpoints" else None
        result = compare_table(reference, lake, path, latest_of=latest)
        assert result.agrees, result.line()
