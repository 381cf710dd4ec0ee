"""A class-data archive for the embedded driver JVM: Spark's classes loaded and verified once.

Every stage run in a fresh JVM (each Airflow task is one) first loads and verifies the
thousands of classes Spark needs to start and to plan its first queries. HotSpot can archive
the classes a run loaded (``-XX:ArchiveClassesAtExit``, Java 13+) and map that archive into
later JVMs (``-XX:SharedArchiveFile``), which then skip the parsing and verification. On the
2-core machine of the README's performance section a session's start (build_session) went
from 6.7-7.2 s to 4.9-5.2 s and its first small query from 3.2-3.8 s to 2.1-2.2 s.

The archive belongs to one Java build and one Spark install, so its name carries both
(:func:`archive_path`). It is built by ``python -m jobs.jvm_archive`` (``make demo``, ``make
test`` and ``make bench`` run it; it does nothing once built): a child process runs every
stage on an hour of simulated data in a JVM that writes the archive as it exits (:func:`build`
says when the file is kept). The embedded session maps it when it is there
(:func:`java_options`); a JVM that cannot use it (another Java, another class path) starts as
it would without one. ``OFFSETLAKE_JVM_ARCHIVE=off`` turns it off. Nothing here may stop a
session from starting: without a home directory, or where the cache cannot be written, there
is no archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

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
    import pyspark

    from jobs.spark import check_java

    try:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no home directory to be found
        return None
    key = hashlib.sha256(f"{check_java()}\n{pyspark.__version__}\n{Path(pyspark.__file__).parent}".encode()).hexdigest()[:16]
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


def build(path: Path, train: list[str] | None = None) -> bool:
    """Write the archive at ``path`` from a run of ``train`` (default: every stage on
    simulated data, see _train). True when the archive is in place; a build that fails
    leaves no file behind.

    ``train`` runs a JVM with java_options(), exits with that JVM's exit code (the JVM
    writes the archive as it exits) and prints the JVM's class path on its last line. The
    archive is kept only if that JVM exited normally and a JVM with the same class path maps
    it (a truncated archive would crash every JVM given it, not be ignored).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    command = train or [sys.executable, "-m", "jobs.jvm_archive", "--train"]
    try:
        done = subprocess.run(command, env={**os.environ, DUMP_VARIABLE: str(partial)}, capture_output=True, text=True, check=False)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines or not partial.is_file():
            print(f"jvm archive: the training run failed (exit {done.returncode}):\n{done.stderr[-2000:]}", file=sys.stderr)
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
    from jobs.spark import java_executable

    java = java_executable()
    if java is None:
        return False
    trial = [java, "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", class_path, "-version"]
    # (a JVM that crashes on it leaves its error report in its working directory)
    return subprocess.run(trial, capture_output=True, cwd=archive.parent, check=False).returncode == 0


def _train() -> int:
    """Every stage on an hour of simulated data, in a scratch directory; exits with the JVM's
    exit code once it has written the archive, having printed its class path."""
    from jobs.cli import new_run_id
    from jobs.commands import run_stages
    from jobs.simulator import SimulationSpec, simulate
    from schemas.config import Settings

    with tempfile.TemporaryDirectory(prefix="offsetlake-jvm-archive-") as scratch:
        landing, lake = Path(scratch) / "landing", Path(scratch) / "lake"
        spec = SimulationSpec.demo(datetime(2026, 11, 21, tzinfo=timezone.utc)).model_copy(update={"duration": timedelta(hours=1)})
        simulate(spec, landing)
        with contextlib.redirect_stdout(io.StringIO()):
            outcome = run_stages(Settings(), lake, landing, None, None, new_run_id(), ("ingest", "replay", "marts", "audit", "publish"))
        return _exit_jvm(outcome.lake.spark)


def _exit_jvm(spark) -> int:
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


def main(argv: list[str]) -> int:
    if argv == ["--train"]:
        return _train()
    path = archive_path()
    if path is None or path.is_file():
        return 0
    began = time.perf_counter()
    try:
        built = build(path)
    except OSError as error:  # e.g. a cache directory that cannot be written
        print(f"jvm archive: {error}", file=sys.stderr)
        built = False
    if built:
        print(f"Spark's classes archived for faster JVM starts in {time.perf_counter() - began:.0f}s: {path}")
    else:
        print("Spark's classes were not archived; Spark starts as it would without the archive", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
