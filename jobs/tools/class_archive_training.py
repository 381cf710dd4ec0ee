"""Build the driver JVM's class archive once (``make`` runs ``python -m jobs.tools.class_archive_training``).

The training run is every stage of the pipeline over an hour of simulated data, in a scratch
directory, in a JVM that writes the archive as it exits (:func:`jobs.runtime.class_archive.build`
keeps it only if that JVM exited normally and a JVM with the same class path maps it). Once the
archive of this Java and this Spark install is built, this does nothing.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jobs.cli.settings import new_run_id
from jobs.runtime import class_archive
from jobs.stages.runner import run_stages
from jobs.tools.simulator import SimulationSpec, simulate
from schemas.config import Settings

TRAINING_START = datetime(2026, 11, 21, tzinfo=UTC)


def train() -> int:
    """Every stage on an hour of simulated data; exits with the JVM's exit code once it has
    written the archive, having printed its class path."""
    with tempfile.TemporaryDirectory(prefix="offsetlake-jvm-archive-") as scratch:
        landing, lake = Path(scratch) / "landing", Path(scratch) / "lake"
        spec = SimulationSpec.demo(TRAINING_START).model_copy(update={"duration": timedelta(hours=1)})
        simulate(spec, landing)
        with contextlib.redirect_stdout(io.StringIO()):
            outcome = run_stages(Settings(), lake, landing, None, None, new_run_id())
        return class_archive.exit_jvm(outcome.lake.spark)


def main(argv: list[str]) -> int:
    if argv == ["--train"]:
        return train()
    path = class_archive.archive_path()
    if path is None or path.is_file():
        return 0
    # one line: what it does now, and how it went and how long it took once done
    print(
        "Archiving Spark's classes once, for faster JVM starts (a training run of every stage) ...",
        end=" ",
        flush=True,
    )
    began = time.perf_counter()
    try:
        built = class_archive.build(
            path, [sys.executable, "-m", "jobs.tools.class_archive_training", "--train"]
        )
    except OSError as error:  # e.g. a cache directory that cannot be written
        print(f"jvm archive: {error}", file=sys.stderr)
        built = False
    took = time.perf_counter() - began
    if built:
        print(f"done in {took:.0f}s: {path}")
    else:
        print(f"not archived after {took:.0f}s; Spark starts as it would without the archive")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
