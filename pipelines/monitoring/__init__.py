"""The monitoring checks, each declared once: its name, what it means, its severity and its function.

A check looks over several observations (the transforms of :mod:`pipelines.monitoring.checks`);
each offending row it returns is an alert, whose time is ``time_column`` and whose measured
value is ``value_column`` (in ``unit``). ``inputs`` name the tables it reads and how much of
each: the audited interval, or the interval with the look-back before it
(``QualitySettings.lookback``); the audit (jobs.quality.monitoring) reads them and calls ``find``.
A check's full name is ``monitoring.<name>``; its severity may be overridden in the settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pyspark.sql import DataFrame

from pipelines.monitoring import checks
from schemas.quality import QualitySettings, Severity
from schemas.tables import (
    CONSUMER_LAG,
    CONSUMER_STATUS,
    OFFSET_COMMITS_REPLAYED,
    OFFSET_REGRESSIONS,
    OFFSET_SNAPSHOTS,
    QUEUE_OFFSETS,
    TableSpec,
)


@dataclass(frozen=True)
class CheckInput:
    """A table a check reads: the audited interval only, or the look-back before it too."""

    table: TableSpec
    span: Literal["interval", "with_lookback"] = "interval"


@dataclass(frozen=True)
class CheckContext:
    """What a check's function is given besides its inputs."""

    interval_start: datetime
    interval_end: datetime
    quality: QualitySettings


@dataclass(frozen=True)
class MonitoringCheck:
    name: str
    description: str
    inputs: tuple[CheckInput, ...]
    time_column: str
    value_column: str
    unit: str
    find: Callable[[list[DataFrame], CheckContext], DataFrame]
    # the input every finding comes from a row of in the audited interval: with none there, the
    # check finds nothing, and its other inputs (a look-back over every commit) need not be read
    found_in: int | None = None
    severity: Severity = "warn"
    # every finding is an event to tell on its own (a status change), not grouped by consumer group
    alert_per_finding: bool = False

    @property
    def check_name(self) -> str:
        return f"monitoring.{self.name}"


def _interval(c: CheckContext) -> dict[str, datetime]:
    return {"interval_start": c.interval_start, "interval_end": c.interval_end}


CHECKS: tuple[MonitoringCheck, ...] = (
    MonitoringCheck(
        "snapshot_gaps", "a broker's snapshots stopped, or arrived with a gap longer than the allowed missed intervals",
        (CheckInput(OFFSET_SNAPSHOTS, "with_lookback"),), "gap_started_at", "gap_seconds", "seconds",
        lambda inputs, c: checks.find_snapshot_gaps(inputs[0], **_interval(c), max_gap=c.quality.max_snapshot_gap),
    ),
    MonitoringCheck(
        "negative_lag", "a consumer offset above the broker's max offset (topic recreated or store wiped)",
        (CheckInput(CONSUMER_LAG),), "observed_at", "excess_messages", "messages",
        lambda inputs, c: checks.find_negative_lag(inputs[0]),
    ),
    MonitoringCheck(
        "expired_before_consumed", "a consumer offset below the broker's min offset (messages expired unconsumed)",
        (CheckInput(CONSUMER_LAG),), "observed_at", "expired_messages", "messages",
        lambda inputs, c: checks.find_expired_before_consumed(inputs[0]),
    ),
    MonitoringCheck(
        "abandoned_groups", "a topic@group whose offsets have not moved for the stall time while its lag grew",
        (CheckInput(CONSUMER_LAG, "with_lookback"),), "last_observed_at", "lag_growth", "messages",
        lambda inputs, c: checks.find_abandoned_groups(inputs[0], **_interval(c), stalled_after=c.quality.stalled_after),
    ),
    MonitoringCheck(
        "snapshot_commit_mismatch", "a broker snapshot that does not hold the last commit at or before it",
        (CheckInput(OFFSET_SNAPSHOTS, "with_lookback"), CheckInput(OFFSET_COMMITS_REPLAYED, "with_lookback")),
        "snapshot_at", "offset_difference", "messages",
        lambda inputs, c: checks.find_snapshot_commit_mismatches(
            inputs[0], inputs[1], **_interval(c), tolerance=c.quality.snapshot_commit_tolerance
        ), found_in=0,
    ),
    MonitoringCheck(
        "large_regressions", "a regression detected in the interval larger than the alert size",
        (CheckInput(OFFSET_REGRESSIONS),), "detected_at", "regression_size", "messages",
        lambda inputs, c: checks.find_large_regressions(inputs[0], above=c.quality.regression_alert_above),
    ),
    MonitoringCheck(
        "dead_letter_growth", "a group's dead-letter topic (%DLQ%<group>) grew: messages it gave up on after its retries",
        (CheckInput(QUEUE_OFFSETS, "with_lookback"),), "last_grown_at", "dead_lettered", "messages",
        lambda inputs, c: checks.find_dead_letter_growth(inputs[0], **_interval(c)),
    ),
    MonitoringCheck(
        "status_changes", "a consumer group's status changed from one window to the next (one alert per change)",
        (CheckInput(CONSUMER_STATUS, "with_lookback"),), "window_start", "last_lag_messages", "messages",
        lambda inputs, c: checks.find_status_changes(inputs[0], **_interval(c)), alert_per_finding=True,
    ),
)  # fmt: skip
