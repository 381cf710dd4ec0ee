"""The monitoring checks, each declared once: its name, what it means, its severity and its function.

A check looks over several observations (the transforms of :mod:`pipelines.monitoring.checks`);
each offending row it returns is an alert, whose time is ``time_column`` and whose measured
value is ``value_column`` (in ``unit``). ``inputs`` name the tables it reads and how much of
each: the audited interval, or the interval with the look-back before it
(``QualitySettings.lookback``), or, for the replay's commits, the rows after the replay's latest
checkpoint at or before ``checkpoint_before``, with that checkpoint's rows summing up those before
it; the audit (jobs.quality.monitoring) reads them and calls ``find``.
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
    REPLAY_CHECKPOINTS,
    TableSpec,
)


@dataclass(frozen=True)
class CheckInput:
    """A table a check reads: the audited interval only, or the look-back before it too; or the rows
    from the check's checkpoint on (``since_checkpoint``: the look-back's when there is none), and
    that checkpoint's rows (``checkpoint``, silver/replay_checkpoints: none when there is none)."""

    table: TableSpec
    span: Literal["interval", "with_lookback", "since_checkpoint", "checkpoint"] = "interval"


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
    # the time at or before which the replay's latest checkpoint (within the look-back) is the
    # check's: its ``since_checkpoint`` and ``checkpoint`` inputs (the rows after it need not be
    # read from the start of the look-back)
    checkpoint_before: Callable[[CheckContext], datetime] | None = None

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
        (
            CheckInput(OFFSET_SNAPSHOTS), CheckInput(OFFSET_COMMITS_REPLAYED, "since_checkpoint"),
            CheckInput(REPLAY_CHECKPOINTS, "checkpoint"),
        ),
        "snapshot_at", "offset_difference", "messages",
        lambda inputs, c: checks.find_snapshot_commit_mismatches(
            inputs[0], inputs[1], **_interval(c), tolerance=c.quality.snapshot_commit_tolerance,
            last_commits=inputs[2], since=c.interval_start - c.quality.lookback,
        ), found_in=0,
        # its snapshots judge each queue's last commit at or before their time less the tolerance
        checkpoint_before=lambda c: c.interval_start - c.quality.snapshot_commit_tolerance,
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
