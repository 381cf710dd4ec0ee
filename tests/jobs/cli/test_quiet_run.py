"""A default ``offsetlake run`` in its own process, as a person or Airflow starts it: Spark's,
Parquet's and Java's warnings go to the run's log file, not to its standard output or error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jobs.tools.simulator import simulate
from tests.jobs.tools.simulator_helpers import small_cluster

pytestmark = pytest.mark.slow
START = datetime(2026, 11, 21, tzinfo=UTC)
JVM_CHATTER = re.compile(r"\bWARN\b|log4j|NativeCodeLoader|incubator modules|setLogLevel")


def test_a_default_run_prints_no_spark_warning_and_logs_them_to_its_file(tmp_path):
    landing, lake = tmp_path / "landing", tmp_path / "lake"
    simulate(small_cluster(START, timedelta(hours=1), progress_interval=timedelta(minutes=10)), landing)
    program = Path(sys.executable).with_name("offsetlake")
    done = subprocess.run(
        [str(program), "run", "--landing", str(landing), "--lake", str(lake), "--run-id", "quiet"],
        capture_output=True, text=True, check=False, timeout=600,
        env={k: v for k, v in os.environ.items() if k != "OFFSETLAKE_SPARK_LOG_LEVEL"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines() + done.stderr.splitlines()
    assert [line for line in printed if JVM_CHATTER.search(line)] == []
    # not a terminal: each stage is a plain log line as it starts and ends
    ends = [
        re.sub(r".* offsetlake.progress: (\S+) .*", r"\1", line)
        for line in done.stderr.splitlines()
        if " done in " in line
    ]
    assert ends == ["start", "ingest", "replay", "marts", "audit", "publish"]
    assert "Replayed interval: [2026-11-21T00:00:00Z, " in done.stdout
    log = (lake / "logs" / "quiet.log").read_text()
    assert " WARN " in log and "offsetlake.progress: publish done in" in log
    assert f"Log (Spark's, Java's and every stage's messages): {lake / 'logs' / 'quiet.log'}" in done.stdout
    # the run's charts, linked to its quality report
    assert 'href="../quality/quiet.html"' in (lake / "reports" / "lake" / "quiet.html").read_text()
