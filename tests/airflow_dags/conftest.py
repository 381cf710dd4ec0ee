"""A real Airflow for the DAG tests: a temporary AIRFLOW_HOME with a migrated SQLite metadata DB.

Airflow reads its configuration when it is first imported, so nothing in these tests
imports it at module level: the ``airflow`` fixture sets the environment, then imports.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DAGS_FOLDER = REPO_ROOT / "airflow_dags"
DAG_ID = "offsetlake"


@pytest.fixture(scope="session")
def airflow(tmp_path_factory):
    """Airflow configured by environment variables, its metadata DB migrated; yields timings."""
    if "airflow" in sys.modules:
        raise RuntimeError(
            "airflow was imported before the test environment was set; import it inside tests only"
        )
    home = tmp_path_factory.mktemp("airflow-home")
    os.environ.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        }
    )
    began = time.perf_counter()
    from airflow.utils import db

    imported = time.perf_counter()
    db.upgradedb()
    timings = {"import_seconds": imported - began, "migrate_seconds": time.perf_counter() - imported}
    print(
        f"\nairflow setup: import {timings['import_seconds']:.1f}s, metadata DB migration {timings['migrate_seconds']:.1f}s"
    )
    yield timings


@pytest.fixture
def dagbag(airflow):
    """Parse the dags folder now (so environment set by the test applies); returns a function."""

    def parse():
        from airflow.dag_processing.dagbag import DagBag

        return DagBag(dag_folder=str(DAGS_FOLDER))

    return parse


@pytest.fixture
def stage_recorder(tmp_path):
    """A command prefix that records each stage's arguments (one JSON line) and exits with
    the code given for that stage in ``exit_codes.json`` (0 when absent)."""
    log, codes = tmp_path / "stages.jsonl", tmp_path / "exit_codes.json"
    script = tmp_path / "record_stage.py"
    script.write_text(
        "import json, sys\n"
        f"with open({str(log)!r}, 'a') as out:\n"
        "    out.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"try:\n    codes = json.load(open({str(codes)!r}))\nexcept FileNotFoundError:\n    codes = {{}}\n"
        "sys.exit(codes.get(sys.argv[1], 0))\n"
    )
    return f"{sys.executable} {script}", log, codes
