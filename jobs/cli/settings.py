"""Settings and arguments checked before any table is touched: a bad one is a clear error, exit 2 or 3."""

from __future__ import annotations

import argparse
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from jobs.io.lake import LakeError
from jobs.quality.checks import check_severities
from jobs.sources import check_patterns
from schemas.config import ConfigError, Settings, SparkSettings, load_settings


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings file (``--config``), then the command line's overrides; every name checked."""
    settings = load_settings(getattr(args, "config", None))
    check_patterns(settings.patterns)
    check_severities(settings.quality.severities)
    check_writable_file(settings.quality.sink.path, "[quality.sink] path")
    if settings.logs.directory is not None:
        check_directory(settings.logs.directory, "[logs] directory")
    overrides = {
        key: value
        for key, value in (("master", getattr(args, "master", None)),
                           ("delta_engine", getattr(args, "delta_engine", None)))
        if value
    }  # fmt: skip
    try:
        spark = SparkSettings.model_validate({**settings.spark.model_dump(), **overrides})
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        option = "--" + str(first["loc"][0]).replace("_", "-")
        raise ConfigError(f"{option}: {first['msg'].removeprefix('Value error, ')}") from error
    return settings.model_copy(update={"spark": spark})


def check_directory(path: Path, name: str) -> None:
    """``path`` must be a directory that can be written, or creatable (a ConfigError naming ``name``)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"{name} {path} is not a directory ({probe} is a file)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"{name} {path} is not writable ({probe})")


def check_writable_file(path: Path | None, name: str) -> None:
    """``path`` (when given) must be a file that can be written, or creatable in its directory."""
    if path is None:
        return
    if path.is_dir():
        raise ConfigError(f"{name} {path} is a directory: name a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"{name} {path} is not writable")
    check_directory(path.parent, name + "'s directory")


def new_run_id() -> str:
    """A run id: its start in UTC and a random suffix (``20261121T100000Z-1a2b3c4d``)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def check_lake(root: Path) -> None:
    """The lake must be a writable directory, or creatable."""
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise LakeError(f"lake path {root} is not a directory ({probe} is a file): choose another --lake")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise LakeError(
            f"lake path {root} is not writable ({probe}): fix its permissions or choose another --lake"
        )


def check_interval(args: argparse.Namespace) -> None:
    if args.start and args.end and not args.start < args.end:
        raise ConfigError(f"--from ({args.start.isoformat()}) must be before --to ({args.end.isoformat()})")
