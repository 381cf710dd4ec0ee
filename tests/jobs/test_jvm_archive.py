"""The driver JVM's class-data archive: when the session maps it, and how it is built."""

from __future__ import annotations

import sys
from pathlib import Path

from jobs import jvm_archive

# a training run as small as one: a session (given java_options() by build_session), a job, the JVM's exit
TINY_TRAIN = [
    sys.executable,
    "-c",
    "from jobs.jvm_archive import _exit_jvm; from jobs.spark import build_session; from schemas.config import SparkSettings; "
    "s = build_session(SparkSettings(master='local[1]')); s.range(3).count(); raise SystemExit(_exit_jvm(s))",
]


def test_the_session_maps_an_archive_that_is_there_and_writes_one_only_when_building(tmp_path, monkeypatch):
    monkeypatch.delenv(jvm_archive.DUMP_VARIABLE, raising=False)
    archive = tmp_path / "spark-classes.jsa"
    assert jvm_archive.java_options(archive) == ""
    assert jvm_archive.java_options(None) == ""
    archive.write_bytes(b"archived classes")
    assert jvm_archive.java_options(archive).startswith(f"-XX:SharedArchiveFile={archive} ")
    monkeypatch.setenv(jvm_archive.DUMP_VARIABLE, str(tmp_path / "out.jsa"))
    assert jvm_archive.java_options(archive).startswith(f"-XX:ArchiveClassesAtExit={tmp_path / 'out.jsa'} ")


def test_the_archive_is_named_for_this_java_and_spark_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = jvm_archive.archive_path()
    assert path is not None and path.parent == tmp_path / "offsetlake" and path.suffix == ".jsa"
    monkeypatch.setenv(jvm_archive.SWITCH_VARIABLE, "off")
    assert jvm_archive.archive_path() is None


def test_an_archive_built_from_a_run_is_kept_only_if_a_jvm_maps_it(spark, tmp_path, monkeypatch):
    monkeypatch.delenv(jvm_archive.DUMP_VARIABLE, raising=False)
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the child imports the project's modules
    archive = tmp_path / "cache" / "spark-classes.jsa"
    assert jvm_archive.build(archive, TINY_TRAIN)
    assert archive.stat().st_size > 0
    assert not list(archive.parent.glob("*.partial"))
    # a JVM with Spark's class path (the test session's: the same install) maps it; the same
    # archive cut short would crash HotSpot, so a build that left it is refused
    class_path = spark.sparkContext._jvm.java.lang.System.getProperty("java.class.path")  # type: ignore[union-attr]
    assert jvm_archive._maps(archive, class_path)
    truncated = tmp_path / "truncated.jsa"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    assert not jvm_archive._maps(truncated, class_path)


def test_a_failed_training_run_leaves_no_archive(tmp_path):
    archive = tmp_path / "spark-classes.jsa"
    assert not jvm_archive.build(archive, [sys.executable, "-c", "raise SystemExit(3)"])
    assert list(tmp_path.iterdir()) == []


def test_a_cache_that_cannot_be_written_leaves_spark_without_an_archive_not_failing(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert jvm_archive.main([]) == 0
    assert "not archived" in capsys.readouterr().err
    assert jvm_archive.java_options(jvm_archive.archive_path()) == ""
