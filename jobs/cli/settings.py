"""Settings and arguments checked before any table is touched: a bad one is a clear error, exit 2 or 3."""

from __future__ import annotations

import argparse
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

from jobs.io.lake import LakeError
from jobs.quality.checks import check_severities
from jobs.sources import check_patterns
from schemas.config import ConfigError, Settings, load_settings


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings file (``--config``), then the command line's overrides; every name checked."""
    settings = load_settings(getattr(args, "config", None))
    check_patterns(settings.patterns)
    check_severities(settings.quality.severities)
    spark = settings.spark
    if getattr(args, "master", None):
        spark = spark.model_copy(update={"master": args.master})
    if getattr(args, "delta_engine", None):
        spark = spark.model_copy(update={"delta_engine": args.delta_engine})
    return settings.model_copy(update={"spark": spark})


def new_run_id() -> str:
    """A run id: its start in UTC and a random suffix (``20261121T100000Z-1a2b3c4d``)."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def check_lake(root: Path) -> None:
    """The lake must be a writable directory, or creatable."""
    probe = root
    while not probe.exists():
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
