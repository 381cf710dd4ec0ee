"""The driver JVM's class-data archive: when the session maps it, and how it is built."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from jobs.runtime import class_archive
from jobs.tools import class_archive_training

# a training run as small as one: a session (given java_options() by build_session), a job, the JVM's exit
TINY_TRAIN = [
    sys.executable,
    "-c",
    "from jobs.runtime.class_archive import exit_jvm; from jobs.runtime.session import build_session; from schemas.config import SparkSettings; "
    "s = build_session(SparkSettings(master='local[1]')); s.range(3).count(); raise SystemExit(exit_jvm(s))",
]


def test_the_session_maps_an_archive_that_is_there_and_writes_one_only_when_building(tmp_path, monkeypatch):
    monkeypatch.delenv(class_archive.DUMP_VARIABLE, raising=False)
    archive = tmp_path / "spark-classes.jsa"
    assert class_archive.java_options(archive) == ""
    assert class_archive.java_options(None) == ""
    archive.write_bytes(b"archived classes")
    assert class_archive.java_options(archive).startswith(f"-XX:SharedArchiveFile={archive} ")
    monkeypatch.setenv(class_archive.DUMP_VARIABLE, str(tmp_path / "out.jsa"))
    assert class_archive.java_options(archive).startswith(f"-XX:ArchiveClassesAtExit={tmp_path / 'out.jsa'} ")


def test_the_archive_is_named_for_this_java_and_spark_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = class_archive.archive_path()
    assert path is not None and path.parent == tmp_path / "offsetlake" and path.suffix == ".jsa"
    monkeypatch.setenv(class_archive.SWITCH_VARIABLE, "off")
    assert class_archive.archive_path() is None


@pytest.mark.slow  # starts two more JVMs: one that writes an archive, one that maps it
def test_an_archive_built_from_a_run_is_kept_only_if_a_jvm_maps_it(spark, tmp_path, monkeypatch):
    monkeypatch.delenv(class_archive.DUMP_VARIABLE, raising=False)
    monkeypatch.chdir(Path(__file__).resolve().parents[3])  # the child imports the project's modules
    archive = tmp_path / "cache" / "spark-classes.jsa"
    assert class_archive.build(archive, TINY_TRAIN)
    assert archive.stat().st_size > 0
    assert not list(archive.parent.glob("*.partial"))
    # a JVM with Spark's class path (the test session's: the same install) maps it; the same
    # archive cut short would crash HotSpot, so a build that left it is refused
    class_path = spark.sparkContext._jvm.java.lang.System.getProperty("java.class.path")  # type: ignore[union-attr]
    assert class_archive._maps(archive, class_path)
    truncated = tmp_path / "truncated.jsa"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    assert not class_archive._maps(truncated, class_path)


def test_a_failed_training_run_leaves_no_archive(tmp_path):
    archive = tmp_path / "spark-classes.jsa"
    assert not class_archive.build(archive, [sys.executable, "-c", "raise SystemExit(3)"])
    assert list(tmp_path.iterdir()) == []


def test_a_cache_that_cannot_be_written_leaves_spark_without_an_archive_not_failing(
    tmp_path, monkeypatch, capsys
):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert class_archive_training.main([]) == 0
    captured = capsys.readouterr()
    # one line says what is done and how it went; the error's detail goes to standard error
    assert re.fullmatch(
        r"Archiving Spark's classes once, .* \.\.\. not archived after \d+s; .*\n", captured.out
    )
    assert "jvm archive:" in captured.err
    assert class_archive.java_options(class_archive.archive_path()) == ""
