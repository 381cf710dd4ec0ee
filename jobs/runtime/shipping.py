"""What executors on other machines need to run OffsetLake's Python: its code and its dependencies.

A local master runs its Python workers with the driver's own interpreter and packages. A
cluster's executors have only Python and Spark, so a session with another master ships, the
way PySpark's "Python Package Management" guide documents it:

- the packages ``pipelines``, ``schemas`` and ``jobs`` as one zip (:func:`code_zip`), which the
  session adds with ``SparkContext.addPyFile`` (what ``--py-files``/``spark.submit.pyFiles``
  does under spark-submit) so that it is on every Python worker's path;
- the dependencies as a packed environment in ``spark.archives`` (``<archive>#environment``),
  which each executor unpacks in its working directory and runs as
  ``PYSPARK_PYTHON=./environment/bin/python``.

The environment is either given (``[spark] executor_environment``: a tar.gz of venv-pack or
conda-pack whose ``bin/python`` runs it) or built here from the driver's installed packages
(:func:`packed_environment`): every distribution the ``offsetlake`` distribution requires,
transitively, but Spark's own Python (``pyspark``, ``py4j``), which each executor takes from its
Spark. Its ``bin/python`` is a shell script that puts the packed ``site-packages`` on the path
and runs the driver's Python version: the driver's interpreter path where the executor has it,
else ``pythonX.Y`` from the executor's ``PATH``. A build is cached under
``$XDG_CACHE_HOME/offsetlake`` (default ``~/.cache/offsetlake``), named by the Python version and
the exact versions of its packages, so a driver builds it once per set of dependencies.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import importlib.util
import io
import os
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# what executors unpack the environment as, and the interpreter they run (PySpark's guide)
ENVIRONMENT_NAME = "environment"
EXECUTOR_PYTHON = f"./{ENVIRONMENT_NAME}/bin/python"
# executor_environment's value for "ship no environment": executors run their own
# PYSPARK_PYTHON (an image with the dependencies installed)
NO_ENVIRONMENT = "none"
DISTRIBUTION = "offsetlake"
CODE_PACKAGES = ("pipelines", "schemas", "jobs")
# Spark's Python comes with each executor's Spark (its python/lib/pyspark.zip), in its version
PROVIDED_BY_SPARK = frozenset({"pyspark", "py4j"})
# a change of the archive's layout changes every cache key
LAYOUT_VERSION = "1"
LAUNCHER = """#!/bin/sh
# OffsetLake's packed environment (jobs/runtime/shipping.py): the packages of site-packages/
# for Python {version}, run by the driver's interpreter where this machine has it, else by
# python{version} from PATH. Spark's own entries of PYTHONPATH (its pyspark) stay first.
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
python={interpreter}
[ -x "$python" ] || python=python{version}
PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}$here/site-packages" exec "$python" "$@"
"""


@contextmanager
def _replaced(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` that replaces it when the block succeeds (two drivers
    building at once each write their own, and the last rename wins whole)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(handle)
    partial = Path(name)
    try:
        yield partial
        os.chmod(partial, 0o644)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


class ShippingError(RuntimeError):
    """What executors need cannot be prepared; the message says what to do."""


def cache_dir() -> Path:
    """Where built archives are kept: ``$XDG_CACHE_HOME/offsetlake`` (``~/.cache/offsetlake``)."""
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "offsetlake"
    except RuntimeError as error:  # no home directory to be found
        raise ShippingError(
            "no cache directory for the executors' environment: set XDG_CACHE_HOME, or give a packed "
            "environment as [spark] executor_environment"
        ) from error


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ShippingError(f"the package {name!r} is not importable here; install OffsetLake (make env)")
    return Path(next(iter(spec.submodule_search_locations)))


def _code_files() -> Iterator[tuple[Path, str]]:
    for name in CODE_PACKAGES:
        root = _package_dir(name)
        for file in sorted(root.rglob("*.py")):
            if "__pycache__" not in file.parts:
                yield file, f"{name}/{file.relative_to(root).as_posix()}"


def code_zip(directory: Path) -> Path:
    """A zip of the packages ``pipelines``, ``schemas`` and ``jobs`` under ``directory``, named by
    its content (Spark refuses a second file of one name with other content)."""
    files = list(_code_files())
    digest = hashlib.sha256()
    for file, name in files:
        digest.update(name.encode() + b"\0" + file.read_bytes() + b"\0")
    path = directory / f"offsetlake-code-{digest.hexdigest()[:16]}.zip"
    if not path.is_file():
        with _replaced(path) as partial, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for file, name in files:
                archive.write(file, name)
    return path


def runtime_distributions(root: str = DISTRIBUTION) -> list[metadata.Distribution]:
    """The installed distributions ``root`` requires, transitively (markers and extras
    evaluated here), but those Spark provides; sorted by name."""
    found: dict[str, tuple[metadata.Distribution, set[str]]] = {}
    pending: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while pending:
        name, extras = pending.pop()
        key = canonicalize_name(name)
        if key in found and extras <= found[key][1]:
            continue
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError as error:
            raise ShippingError(f"{name} is required but not installed; run `make env`") from error
        found.setdefault(key, (distribution, set()))[1].update(extras)
        for text in distribution.requires or ():
            requirement = Requirement(text)
            environments = [{"extra": extra} for extra in (extras or {""})]
            if requirement.marker and not any(requirement.marker.evaluate(e) for e in environments):
                continue
            if canonicalize_name(requirement.name) not in PROVIDED_BY_SPARK:
                pending.append((requirement.name, frozenset(requirement.extras)))
    found.pop(canonicalize_name(root), None)
    return [found[key][0] for key in sorted(found)]


def base_interpreter() -> Path:
    """The driver's base interpreter (outside any virtual environment)."""
    version = "%d.%d" % sys.version_info[:2]
    base = Path(sys.base_prefix) / "bin" / f"python{version}"
    return base if base.is_file() else Path(os.path.realpath(sys.executable))


def _launcher() -> bytes:
    version = "%d.%d" % sys.version_info[:2]
    return LAUNCHER.format(version=version, interpreter=base_interpreter()).encode()


def _site_files(distribution: metadata.Distribution) -> Iterator[tuple[Path, str]]:
    """(installed file, its path under site-packages) of ``distribution``, without compiled
    bytecode or anything it installed outside site-packages (scripts)."""
    for file in distribution.files or ():
        if file.suffix == ".pyc" or ".." in file.parts:
            continue
        path = Path(str(distribution.locate_file(file)))
        if path.is_file():
            yield path, file.as_posix()


def packed_environment(directory: Path) -> Path:
    """The packed environment of :func:`runtime_distributions` under ``directory`` (built when
    this Python and these package versions have none yet): a tar.gz of ``bin/python`` (the
    launcher) and ``site-packages/``."""
    distributions = runtime_distributions()
    key = hashlib.sha256(
        "\n".join(
            [LAYOUT_VERSION, sys.version, str(base_interpreter())]
            + [f"{d.metadata['Name']}=={d.version}" for d in distributions]
        ).encode()
    ).hexdigest()[:16]
    path = directory / f"executor-environment-{key}.tar.gz"
    if path.is_file():
        return path
    with _replaced(path) as partial, tarfile.open(partial, "w:gz", compresslevel=6) as archive:
        launcher = _launcher()
        info = tarfile.TarInfo("bin/python")
        info.size, info.mode = len(launcher), 0o755
        archive.addfile(info, io.BytesIO(launcher))
        for distribution in distributions:
            for file, name in _site_files(distribution):
                archive.add(file, f"site-packages/{name}", recursive=False)
    return path
