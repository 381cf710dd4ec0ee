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

import json
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from schemas.quality import QualitySettings


class ConfigError(ValueError):
    """The configuration cannot be used; the message says what to fix."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_SIZE = re.compile(r"(?i)[1-9][0-9]*([kmgt]b?)?")
_MASTER = re.compile(
    r"local(\[([1-9][0-9]*|\*)(,[1-9][0-9]*)?\])?|local-cluster\[[0-9, ]+\]|yarn|(spark|k8s|mesos)://\S+"
)


class SparkSettings(_Model):
    """How the job reaches Spark. ``master=None`` keeps whatever spark-submit or the
    cluster set, and falls back to the embedded ``local[*]`` only when nothing did."""

    master: str | None = None
    app_name: str = Field(default="offsetlake", min_length=1)
    driver_memory: str = "4g"
    # The ingest's shuffles start with this many partitions, the later stages' with at most this
    # many; adaptive execution merges neighbours up to ``partition_bytes`` of shuffled
    # (compressed) data each, so a small input runs as one task and a large one in tasks whose
    # sorts and windows fit in memory.
    shuffle_partitions: int = Field(default=64, ge=1)
    # On the embedded lake (delta-rs) the replay, marts, audit and publish start their shuffles
    # with one partition per this many events (bronze commit and snapshot rows) of their
    # interval, at least two a core and at most ``shuffle_partitions``: an hour's shuffles in a
    # few partitions (jobs.stages.shuffles). ``spark.sql.shuffle.partitions`` (or adaptive
    # execution's ``initialPartitionNum``) given in ``conf`` fixes the number for every stage.
    shuffle_partition_rows: int = Field(default=100_000, ge=1)
    partition_bytes: str = "8m"  # Spark's size form: 8m, 512k, 1g
    # auto: native Spark Delta when its extension is on the classpath, else delta-rs.
    delta_engine: Literal["auto", "spark", "delta-rs"] = "auto"
    # For a master that is not local: the packed Python environment executors run (a tar.gz
    # whose bin/python runs it, e.g. venv-pack's or conda-pack's; a path or URL Spark fetches).
    # None: built from the driver's packages and cached (jobs.runtime.shipping); "none": ship
    # none, executors run their own PYSPARK_PYTHON (an image with the dependencies installed).
    executor_environment: str | None = None
    # The just-in-time compiler of a driver JVM started here (the embedded master). "startup"
    # stops at its quick tier (C1): a process over little data spends most of its life warming
    # up, and the optimising tier competes with the work for the cores. "throughput" compiles
    # hot code fully, which a large input needs. "auto": "startup" for a run or stage given an
    # interval of at most ``startup_jit_interval`` (an hourly task run alone), unless its replay
    # takes more than ``startup_jit_rows`` rows of the lake (a busy cluster's hour, or an hour of a
    # wider run replayed again: the replay's shuffle, sort and rewrite are the JVM's work that
    # the quick tier slows most); "throughput" otherwise and for a shared session, which serves
    # interval after interval (docs/experiments.md, "A quick-start compiler for short intervals",
    # "The kept session compiles fully", "A short interval over many rows compiles fully").
    jit: Literal["auto", "startup", "throughput"] = "auto"
    startup_jit_interval: timedelta = Field(default=timedelta(hours=2), ge=timedelta(0))
    startup_jit_rows: int = Field(default=2_000_000, ge=0)
    conf: dict[str, str] = Field(default_factory=dict)

    @field_validator("master")
    @classmethod
    def _known_master(cls, value: str | None) -> str | None:
        if value is not None and not _MASTER.fullmatch(value):
            raise ValueError(
                f"{value!r} is no Spark master URL; use local[*], local[4], spark://host:7077, yarn or k8s://..."
            )
        return value

    @field_validator("driver_memory", "partition_bytes")
    @classmethod
    def _size(cls, value: str) -> str:
        if not _SIZE.fullmatch(value):
            raise ValueError(f"{value!r} is no size; use Spark's form such as 512m, 4g or 8m")
        return value


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
    throughput_window: timedelta = Field(default=timedelta(hours=1), le=timedelta(days=366))
    # How far back the marts read a queue's max-offset history (lag in seconds, produce
    # increments): an offset older than the first observation within it gets a bounded lag.
    lag_history: timedelta = Field(default=timedelta(days=1), le=timedelta(days=366))
    # Checkpoints older than this many runs are pruned; late data older than every
    # kept checkpoint makes the next run replay from the beginning.
    checkpoints_kept: int = Field(default=200, ge=1)
    # Log-told commits (broker and client log lines) up to this many are sent to every
    # executor to find those the canonical commit log repeats, so the canonical commits are
    # not shuffled for it; above it, an anti-join of Spark's choosing (a sort-merge join on
    # large inputs, which shuffles and sorts every canonical commit).
    broadcast_logged_commits: int = Field(default=2_000_000, ge=0)

    @field_validator("lag_history")
    @classmethod
    def _positive(cls, value: timedelta) -> timedelta:
        if value.total_seconds() < 1:
            raise ValueError("lag_history must be at least a second")
        return value

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


class StatusSettings(_Model):
    """The consumer status rules' thresholds (``[status]``; the rules: pipelines.marts.status)."""

    # the status is decided per tumbling window of this length
    window: timedelta = Field(default=timedelta(hours=1), le=timedelta(days=366))
    # a lag of at most this many messages is no lag: no STOP, STALL or WARN for it
    allowed_lag_messages: int = Field(default=100, ge=0)
    # WARN needs the lag to grow over at least this many observations of the window
    min_lag_observations: int = Field(default=3, ge=2)

    @field_validator("window")
    @classmethod
    def _whole_minutes(cls, value: timedelta) -> timedelta:
        if value.total_seconds() < 60 or value.total_seconds() % 60:
            raise ValueError("the status window must be a whole number of minutes, at least one")
        return value


class Settings(_Model):
    spark: SparkSettings = SparkSettings()
    logs: LogSettings = LogSettings()
    # where each source kind's files land, relative to the landing root (jobs.sources declares
    # the kinds and their default patterns): ``{cluster}``, ``{broker}``, ``{time}`` (ISO-8601
    # UTC or epoch ms) each match one path segment; ``**`` any number of segments; ``*`` within one
    patterns: dict[str, str] = Field(default_factory=dict)
    clusters: dict[str, ClusterSettings] = Field(default_factory=dict)
    replay: ReplaySettings = ReplaySettings()
    status: StatusSettings = StatusSettings()
    quality: QualitySettings = QualitySettings()

    def cluster(self, name: str) -> ClusterSettings:
        return self.clusters.get(name, ClusterSettings())

    @model_validator(mode="after")
    def _lookback_covers_a_status_window(self) -> Settings:
        # a status change compares a window with the one before it, read from the look-back
        if self.quality.lookback < self.status.window:
            raise ValueError(
                f"[quality] lookback ({self.quality.lookback}) must cover the status window ({self.status.window})"
            )
        return self


def load_settings(path: Path | None, environ: Mapping[str, str] = os.environ) -> Settings:
    """Read settings from a TOML file, or the defaults when ``path`` is None.

    A string value may name environment variables, ``"Bearer ${OFFSETLAKE_WEBHOOK_TOKEN}"``,
    resolved here (``$${`` keeps a literal ``${``); a variable that is not set is a ConfigError.
    Every error is one line naming the file and the setting.
    """
    if path is None:
        return Settings()
    if path.is_dir():
        raise ConfigError(f"configuration file {path} is a directory: give --config a TOML file")
    if not path.is_file():
        raise ConfigError(f"configuration file {path} does not exist")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"configuration file {path} cannot be read: {error.strerror or error}") from error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"configuration file {path} is not valid TOML: {error}") from error
    resolved = _with_environment(raw, (), environ, path)
    try:
        return Settings.model_validate(resolved)
    except ValidationError as error:
        problems = "; ".join(_problem(e) for e in error.errors(include_url=False))
        raise ConfigError(f"configuration file {path}: {problems}") from error


_VARIABLE = re.compile(r"\$(\$?)\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_KEYS = frozenset({"url", "headers", "conf"})


def _with_environment(value: object, where: tuple, environ: Mapping[str, str], path: Path) -> object:
    """``value`` with each ``${NAME}`` in its strings replaced by that environment variable."""
    if isinstance(value, dict):
        return {key: _with_environment(item, (*where, key), environ, path) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_environment(item, (*where, n), environ, path) for n, item in enumerate(value)]
    if not isinstance(value, str):
        return value

    def resolve(match: re.Match) -> str:
        escaped, name = match.groups()
        if escaped:
            return "${" + name + "}"
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"configuration file {path}: {_key(where)}: ${{{name}}} names no environment variable"
            )
        if name not in environ:
            raise ConfigError(
                f"configuration file {path}: {_key(where)}: environment variable {name} is not set"
            )
        return environ[name]

    return _VARIABLE.sub(resolve, value)


def _key(where: tuple) -> str:
    """A setting's dotted name (``quality.sink.url``); odd keys quoted, as TOML would."""
    return (
        ".".join(
            part if isinstance(part, str) and re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(str(part))
            for part in where
        )
        or "(top level)"
    )


def _problem(error: dict) -> str:
    """One pydantic error as ``key: what is wrong`` (the value shown unless it may be a secret)."""
    where = tuple(part for part in error["loc"] if not str(part).startswith("function-"))
    if error["type"] == "extra_forbidden":
        return f"{_key(where)}: unknown setting (see schemas/config.py for the known ones)"
    message = error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    value = error.get("input")
    shown = not _SECRET_KEYS & {str(part) for part in where} and isinstance(value, (str, int, float, bool))
    if shown and error["type"] not in ("value_error", "missing"):
        message += f" (got {json.dumps(value)[:60]})"
    return f"{_key(where)}: {message}"
