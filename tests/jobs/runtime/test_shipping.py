"""What a session with a cluster master ships to executors: the code as a zip, the dependencies as
a packed environment whose bin/python runs them, and the settings that point Spark at both."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from pyspark import SparkConf

from jobs.runtime import session, shipping
from schemas.config import SparkSettings


def test_the_environment_holds_what_offsetlake_requires_but_spark_own_python_and_the_extras():
    names = {d.metadata["Name"].lower() for d in shipping.runtime_distributions()}
    assert {"pyarrow", "numpy", "pandas", "deltalake", "pydantic", "packaging"} <= names
    assert not names & {"pyspark", "py4j", "offsetlake", "pytest", "apache-airflow", "duckdb"}


def test_the_code_zip_holds_the_three_packages_and_is_named_by_its_content(tmp_path):
    path = shipping.code_zip(tmp_path)
    names = zipfile.ZipFile(path).namelist()
    assert {"jobs/__init__.py", "pipelines/__init__.py", "schemas/__init__.py"} <= set(names)
    assert "jobs/runtime/shipping.py" in names
    assert not [n for n in names if "__pycache__" in n or not n.endswith(".py")]
    assert shipping.code_zip(tmp_path) == path
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.fixture
def small_environment(tmp_path, monkeypatch) -> Path:
    """A packed environment of one small distribution (the real one is built by the cluster test)."""
    monkeypatch.setattr(shipping, "runtime_distributions", lambda: [metadata.distribution("annotated-types")])
    return shipping.packed_environment(tmp_path / "cache")


def test_a_packed_environment_runs_its_packages_with_a_python_outside_any_virtualenv(
    small_environment, tmp_path
):
    with tarfile.open(small_environment) as archive:
        members = {m.name: m for m in archive.getmembers()}
        archive.extractall(tmp_path / "environment", filter="tar")
    assert members["bin/python"].mode == 0o755
    assert "site-packages/annotated_types/__init__.py" in members
    assert not [n for n in members if n.endswith(".pyc")]
    bare = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        ["./environment/bin/python", "-c", "import annotated_types, sys; print(annotated_types.__file__, sys.prefix)"],
        cwd=tmp_path, env=bare, capture_output=True, text=True, check=True,
    )  # fmt: skip
    module, prefix = done.stdout.split()
    assert module == str(tmp_path / "environment" / "site-packages" / "annotated_types" / "__init__.py")
    assert prefix == sys.base_prefix


def test_a_packed_environment_is_built_once_per_python_and_set_of_packages(small_environment):
    built = small_environment.stat().st_mtime_ns
    assert shipping.packed_environment(small_environment.parent) == small_environment
    assert small_environment.stat().st_mtime_ns == built
    assert [p.name for p in small_environment.parent.iterdir()] == [small_environment.name]


def test_a_cluster_session_sends_executors_the_given_environment_beside_other_archives(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    conf = {"spark.archives": "hdfs:///shared/models.zip#models"}
    given = SparkSettings(executor_environment="hdfs:///envs/offsetlake.tar.gz")
    session._ship_environment(given, conf, SparkConf(loadDefaults=False))
    assert (
        conf["spark.archives"]
        == "hdfs:///shared/models.zip#models,hdfs:///envs/offsetlake.tar.gz#environment"
    )
    assert os.environ["PYSPARK_PYTHON"] == "./environment/bin/python"


def test_an_environment_submitted_with_spark_submit_is_kept(monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    submitted = SparkConf(loadDefaults=False).set("spark.archives", "env.tar.gz#environment")
    conf: dict[str, str] = {}
    session._ship_environment(SparkSettings(), conf, submitted)
    assert conf == {}
    assert os.environ["PYSPARK_PYTHON"] == "./environment/bin/python"


def test_executors_with_the_dependencies_installed_get_no_environment(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/python/bin/python3")
    conf: dict[str, str] = {}
    session._ship_environment(SparkSettings(executor_environment="none"), conf, SparkConf(loadDefaults=False))
    assert conf == {}
    assert os.environ["PYSPARK_PYTHON"] == "/opt/python/bin/python3"
