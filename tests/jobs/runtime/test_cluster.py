"""``offsetlake run`` on a real Spark cluster: a standalone master and two workers started with the
installed PySpark's ``spark-class`` on 127.0.0.1, whose executors have Python and Spark only
(jobs.runtime.shipping ships the code and a packed environment). Every table equals the
embedded run's on the same landing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyspark
import pytest

from jobs import console
from jobs.runtime import shipping
from jobs.tools.lake_compare import compare_lakes, delta_tables
from jobs.tools.simulator import simulate
from tests.jobs.tools.simulator_helpers import small_cluster

pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.integration]
START = datetime(2026, 11, 21, tzinfo=UTC)
END = START + timedelta(hours=1)
SPARK_HOME = Path(pyspark.__file__).parent
WORKERS = 2
STARTUP_SECONDS = 120
RUN_SECONDS = 1800


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _bare_environment() -> dict[str, str]:
    """This process's environment without its virtualenv or Python path: what a machine with
    only Java, Python and Spark gives the master, the workers and their executors."""
    venv_bin = Path(sys.prefix, "bin").resolve()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if Path(p).resolve() != venv_bin
    )
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1")
    return env


def _state(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as response:
        return json.load(response)


class StandaloneCluster:
    """A master and workers of Spark's standalone mode, each a process group of its own."""

    def __init__(self, root: Path):
        self.root = root
        self.processes: list[subprocess.Popen] = []
        self.port, self.ui_port = _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *arguments: str) -> None:
        log = (self.root / f"{name}.log").open("wb")
        self.processes.append(
            subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *arguments],
                env=_bare_environment(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        )  # fmt: skip

    def start(self) -> None:
        self._start("master", "org.apache.spark.deploy.master.Master",
                    "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", str(self.ui_port))  # fmt: skip
        for n in range(WORKERS):
            work = self.root / f"worker-{n}"
            work.mkdir()
            self._start(f"worker-{n}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                        "--port", str(_free_port()), "--webui-port", str(_free_port()),
                        "--cores", "1", "--memory", "1g", "--work-dir", str(work), self.url)  # fmt: skip
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.processes):
                break
            try:
                alive = [w for w in _state(self.ui_port)["workers"] if w["state"] == "ALIVE"]
            except OSError:
                alive = []
            if len(alive) == WORKERS:
                return
            time.sleep(1)
        logs = {p.name: p.read_text()[-2000:] for p in self.root.glob("*.log")}
        raise RuntimeError(f"the standalone cluster did not start: {logs}")

    def stop(self) -> None:
        """Stop every process this cluster started (and the executors they started), by group."""
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request):
    started = StandaloneCluster(tmp_path_factory.mktemp("standalone"))
    request.addfinalizer(started.stop)
    started.start()
    return started


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("landing")
    simulate(small_cluster(START, END - START, progress_interval=timedelta(minutes=10)), root)
    return root


def _run(program: list[str], landing: Path, lake: Path, *options: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [*program, "run", "--landing", str(landing), "--lake", str(lake), "--run-id", "same",
         "--from", START.isoformat(), "--to", END.isoformat(), *options],
        capture_output=True, text=True, check=False, timeout=RUN_SECONDS,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_DRIVER_PYTHON": sys.executable},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


OFFSETLAKE = [str(Path(sys.executable).with_name("offsetlake"))]


@pytest.fixture(scope="module")
def embedded_lake(landing, tmp_path_factory) -> Path:
    lake = tmp_path_factory.mktemp("embedded") / "lake"
    _run(OFFSETLAKE, landing, lake)
    return lake


def _assert_executors_ran_the_packed_environment(cluster: StandaloneCluster, application: str) -> None:
    """Each worker's executor of ``application`` ran the packed environment and the shipped code."""
    for n in range(WORKERS):
        executors = list((cluster.root / f"worker-{n}" / application).glob("*"))
        assert executors, f"worker {n} ran no executor of {application}"
        for executor in executors:
            assert (executor / shipping.ENVIRONMENT_NAME / "bin" / "python").is_file()
            assert list(executor.glob("offsetlake-code-*.zip"))
    bare_python = subprocess.run(
        [str(shipping.base_interpreter()), "-c", "import pyarrow"],
        capture_output=True,
        env=_bare_environment(),
    )
    assert bare_python.returncode != 0, "the executors' interpreter has the dependencies of its own"


def _assert_same_lakes(actual: Path, expected: Path) -> None:
    compared = compare_lakes(actual, expected)
    assert {c.path for c in compared} == set(delta_tables(expected))
    assert [c.line() for c in compared if not c.agrees] == []
    assert sum(c.rows_a or 0 for c in compared) > 0


def _applications(cluster: StandaloneCluster) -> set[str]:
    return {p.name for p in (cluster.root / "worker-0").glob("app-*")}


def test_offsetlake_run_with_a_cluster_master_equals_the_embedded_run(
    cluster, landing, embedded_lake, tmp_path
):
    settings = tmp_path / "cluster.toml"
    settings.write_text('[spark]\nconf = { "spark.ui.enabled" = "false", "spark.executor.memory" = "1g" }\n')
    before = _applications(cluster)
    done = _run(OFFSETLAKE, landing, tmp_path / "lake", "--master", cluster.url, "--config", str(settings))
    assert f"Spark master: {cluster.url}" in done.stdout
    (application,) = _applications(cluster) - before
    _assert_executors_ran_the_packed_environment(cluster, application)
    _assert_same_lakes(tmp_path / "lake", embedded_lake)


def test_the_readme_spark_submit_line_equals_the_embedded_run(cluster, landing, embedded_lake, tmp_path):
    # the README's line but Delta's package (Maven is out of reach here): delta-rs commits
    options = "-XX:-DontCompileHugeMethods -XX:+UseParallelGC"
    submit = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster.url,
              "--conf", f"spark.driver.extraJavaOptions={options}",
              "--conf", f"spark.executor.extraJavaOptions={options}", "--conf", "spark.ui.enabled=false",
              str(Path(console.__file__))]  # fmt: skip
    before = _applications(cluster)
    done = _run(submit, landing, tmp_path / "lake")
    assert f"Spark master: {cluster.url}" in done.stdout
    (application,) = _applications(cluster) - before
    _assert_executors_ran_the_packed_environment(cluster, application)
    _assert_same_lakes(tmp_path / "lake", embedded_lake)
