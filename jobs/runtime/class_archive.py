"""A class-data archive for the embedded driver JVM: Spark's classes loaded and verified once.

Every stage run in a fresh JVM (each Airflow task is one) first loads and verifies the
thousands of classes Spark needs to start and to plan its first queries. HotSpot can archive
the classes a run loaded (``-XX:ArchiveClassesAtExit``, Java 13+) and map that archive into
later JVMs (``-XX:SharedArchiveFile``), which then skip the parsing and verification (the
figures are in docs/performance.md, "JVM start-up").

The archive belongs to one Java build and one Spark install, so its name carries both
(:func:`archive_path`). :func:`build` writes it from a training run that the caller gives
(``python -m jobs.tools.class_archive_training``, which ``make`` runs once, trains on every
stage over an hour of simulated data). The embedded session maps it when it is there
(:func:`java_options`); a JVM that cannot use it (another Java, another class path) starts as
it would without one. ``OFFSETLAKE_JVM_ARCHIVE=off`` turns it off. Nothing here may stop a
session from starting: without a home directory, or where the cache cannot be written, there
is no archive.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pyspark

from jobs.runtime.java import check_java, java_executable

# set by build() for its child: where that child's JVM writes the archive when it exits
DUMP_VARIABLE = "OFFSETLAKE_JVM_ARCHIVE_DUMP"
SWITCH_VARIABLE = "OFFSETLAKE_JVM_ARCHIVE"
# the archive is optional: HotSpot's notes about it (a class it cannot archive, an archive
# it cannot map) are not the user's concern, its other warnings still print
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
JVM_EXIT_WAIT_SECONDS = 300


def archive_path() -> Path | None:
    """Where the archive of this Java and this Spark install lives (None when turned off)."""
    if os.environ.get(SWITCH_VARIABLE, "").lower() in ("off", "0", "false"):
        return None
    try:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no home directory to be found
        return None
    key = hashlib.sha256(
        f"{check_java()}\n{pyspark.__version__}\n{Path(pyspark.__file__).parent}".encode()
    ).hexdigest()[:16]
    return cache / "offsetlake" / f"spark-classes-{key}.jsa"


def built_archive() -> Path | None:
    """The archive of this Java and this Spark install, if it was built (and not turned off)."""
    path = archive_path()
    return path if path is not None and path.is_file() else None


def java_options(path: Path | None) -> str:
    """The driver JVM's options for the archive at ``path``: write it at exit (in build()'s
    child), map it when it exists, nothing otherwise."""
    dump = os.environ.get(DUMP_VARIABLE)
    if dump:
        return f"-XX:ArchiveClassesAtExit={dump} {QUIET}"
    if path is not None and path.is_file():
        return f"-XX:SharedArchiveFile={path} {QUIET}"
    return ""


def build(path: Path, train: list[str]) -> bool:
    """Write the archive at ``path`` from a run of the command ``train``. True when the archive is in place; a build that fails
    leaves no file behind.

    ``train`` runs a JVM with java_options(), exits with that JVM's exit code (the JVM
    writes the archive as it exits) and prints the JVM's class path on its last line. The
    archive is kept only if that JVM exited normally and a JVM with the same class path maps
    it (a truncated archive would crash every JVM given it, not be ignored).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        done = subprocess.run(
            train,
            env={**os.environ, DUMP_VARIABLE: str(partial)},
            capture_output=True,
            text=True,
            check=False,
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines or not partial.is_file():
            print(
                f"jvm archive: the training run failed (exit {done.returncode}):\n{done.stderr[-2000:]}",
                file=sys.stderr,
            )
            return False
        if not _maps(partial, lines[-1]):
            print("jvm archive: a JVM could not map the archive written", file=sys.stderr)
            return False
        os.replace(partial, path)
        return True
    finally:
        partial.unlink(missing_ok=True)


def _maps(archive: Path, class_path: str) -> bool:
    """True when a JVM with ``class_path`` maps ``archive`` (``-Xshare:on`` fails otherwise)."""
    java = java_executable()
    if java is None:
        return False
    trial = [java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", class_path, "-version"]
    # (a JVM that crashes on it leaves its error report in its working directory)
    return subprocess.run(trial, capture_output=True, cwd=archive.parent, check=False).returncode == 0


def exit_jvm(spark) -> int:
    """Stop ``spark`` and its JVM (which exits when its stdin closes, as when its Python
    process ends); the JVM's exit code."""
    jvm = spark.sparkContext._jvm  # type: ignore[union-attr]
    class_path = jvm.java.lang.System.getProperty("java.class.path")
    process = spark.sparkContext._gateway.proc  # type: ignore[union-attr]
    spark.stop()
    process.stdin.close()
    code = process.wait(timeout=JVM_EXIT_WAIT_SECONDS)
    print(class_path)
    return code
