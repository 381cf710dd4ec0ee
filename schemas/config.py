"""Configuration of an OffsetLake deployment (pydantic models, loaded from TOML).

Every setting has a default that works on one machine; a TOML file given with
``--config`` overrides any of them, for example::

    [spark]
    master = "spark://spark-master:7077"
    delta_engine = "spark"

    [clusters.prod-a]
    broker_log_timezone = "Asia/Shanghai"
"""

from __future__ import annotations

import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from schemas.quality import QualitySettings


class ConfigError(ValueError):
    """The configuration cannot be used; the message says what to fix."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SparkSettings(_Model):
    """How the job reaches Spark. ``master=None`` keeps whatever spark-submit or the
    cluster set, and falls back to the embedded ``local[*]`` only when nothing did."""

    master: str | None = None
    app_name: str = "offsetlake"
    driver_memory: str = "4g"
    # Shuffles start with this many partitions; adaptive execution merges neighbours up to
    # ``partition_bytes`` of shuffled (compressed) data each, so a small input runs as one
    # task and a large one in tasks whose sorts and windows fit in memory.
    shuffle_partitions: int = Field(default=64, ge=1)
    partition_bytes: str = Field(
        default="8m", pattern=r"(?i)^[0-9]+([kmgt]b?)?$"
    )  # Spark's size form: 8m, 512k, 1g
    # auto: native Spark Delta when its extension is on the classpath, else delta-rs.
    delta_engine: Literal["auto", "spark", "delta-rs"] = "auto"
    # For a master that is not local: the packed Python environment executors run (a tar.gz
    # whose bin/python runs it, e.g. venv-pack's or conda-pack's; a path or URL Spark fetches).
    # None: built from the driver's packages and cached (jobs.runtime.shipping); "none": ship
    # none, executors run their own PYSPARK_PYTHON (an image with the dependencies installed).
    executor_environment: str | None = None
    conf: dict[str, str] = Field(default_factory=dict)


class ClusterSettings(_Model):
    """Per-cluster facts the files themselves do not carry."""

    # The shipped logback pattern renders broker and 5.x client logs in GMT+8.
    broker_log_timezone: str = "Asia/Shanghai"
    client_log_timezone: str = "Asia/Shanghai"
    # mqadmin prints LastTime / Last Updated in the admin host's local zone.
    admin_timezone: str = "UTC"

    @field_validator("broker_log_timezone", "client_log_timezone", "admin_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise ValueError(
                f"unknown time zone {value!r}; use an IANA name such as 'Asia/Shanghai'"
            ) from error
        return value


class ReplaySettings(_Model):
    throughput_window: timedelta = timedelta(hours=1)
    # Checkpoints older than this many runs are pruned; late data older than every
    # kept checkpoint makes the next run replay from the beginning.
    checkpoints_kept: int = Field(default=200, ge=1)
    # Log-told commits (broker and client log lines) up to this many are sent to every
    # executor to find those the canonical commit log repeats, so the canonical commits are
    # not shuffled for it; above it, an anti-join of Spark's choosing (a sort-merge join on
    # large inputs, which shuffles and sorts every canonical commit).
    broadcast_logged_commits: int = Field(default=2_000_000, ge=0)

    @field_validator("throughput_window")
    @classmethod
    def _whole_minutes(cls, value: timedelta) -> timedelta:
        if value.total_seconds() < 60 or value.total_seconds() % 60:
            raise ValueError("throughput_window must be a whole number of minutes, at least one")
        return value


class LogSettings(_Model):
    # a run's log file (every log record, and everything the JVM prints) goes here as
    # <run_id>.log; default: <lake>/logs
    directory: Path | None = None


class Settings(_Model):
    spark: SparkSettings = SparkSettings()
    logs: LogSettings = LogSettings()
    # where each source kind's files land, relative to the landing root (jobs.sources declares
    # the kinds and their default patterns): ``{cluster}``, ``{broker}``, ``{time}`` (ISO-8601
    # UTC or epoch ms) each match one path segment; ``**`` any number of segments; ``*`` within one
    patterns: dict[str, str] = Field(default_factory=dict)
    clusters: dict[str, ClusterSettings] = Field(default_factory=dict)
    replay: ReplaySettings = ReplaySettings()
    quality: QualitySettings = QualitySettings()

    def cluster(self, name: str) -> ClusterSettings:
        return self.clusters.get(name, ClusterSettings())


def load_settings(path: Path | None) -> Settings:
    """Read settings from a TOML file, or the defaults when ``path`` is None."""
    if path is None:
        return Settings()
    if not path.is_file():
        raise ConfigError(f"configuration file {path} does not exist")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"configuration file {path} is not valid TOML: {error}") from error
    try:
        return Settings.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(f"configuration file {path} is invalid:\n{error}") from error
