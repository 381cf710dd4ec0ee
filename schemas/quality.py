"""Data-quality contract: the expectations on every table, and the settings of the checks.

Each :class:`TableSuite` sits beside its table's :class:`~schemas.tables.TableSpec` and
states what must hold at the table's grain: keys not null and unique, offsets and queue
ids in range, codes from the documented sets, timestamps inside the run's interval.
``jobs.quality.gx_adapter`` turns them into Great Expectations; nothing here imports it.
A check's full name is ``<layer>.<table>.<expectation>`` (``gold.consumer_lag.keys_unique``)
or ``monitoring.<check>`` (``monitoring.large_regressions``: the monitoring checks are declared
with their functions in pipelines.monitoring). Results and alerts land in two tables of their
own, ``quality/check_results`` and ``quality/alerts`` (schemas.tables.quality).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schemas import tables as t
from schemas.keys import KEY_KINDS
from schemas.records import CONSUME_TYPES, MAX_QUEUE_ID, MESSAGE_MODELS, OFFSET_LIMIT

Severity = Literal["error", "warn"]


class Param(StrEnum):
    """Values an expectation refers to that are known only when a run validates."""

    INTERVAL_START = "interval_start"
    INTERVAL_END = "interval_end"  # exclusive
    FIRST_DATE = "first_date"  # date of the interval's first instant
    LAST_DATE = "last_date"  # date of the interval's last instant
    MAX_QUEUE_ID = "max_queue_id"
    # start of the throughput window holding the interval's start (throughput is rebuilt from there)
    THROUGHPUT_FROM = "throughput_from"
    THROUGHPUT_FIRST_DATE = "throughput_first_date"
    # start of the status window holding the interval's start (the status is rebuilt from there)
    STATUS_FROM = "status_from"
    STATUS_FIRST_DATE = "status_first_date"
    # start of the UTC day holding the interval's start (daily marts are rebuilt from there)
    DAY_FROM = "day_from"
    DAY_FIRST_DATE = "day_first_date"


def resolve(value: object, params: Mapping[Param, object]) -> object:
    """``value``, or the run's value of it when it is a :class:`Param`."""
    return params[value] if isinstance(value, Param) else value


@dataclass(frozen=True)
class Expectation:
    """One check on a table; ``between`` bounds are inclusive unless ``strict_max``; nulls pass
    every kind but ``not_null``. ``pair_at_least``: ``columns[0] >= columns[1]`` (``>`` when strict)."""

    name: str
    kind: Literal["not_null", "unique", "between", "in_set", "pair_at_least"]
    columns: tuple[str, ...]
    min_value: object = None
    max_value: object = None
    strict_max: bool = False
    values: tuple[str, ...] = ()
    severity: Severity = "error"


@dataclass(frozen=True)
class TableSuite:
    table: t.TableSpec
    expectations: tuple[Expectation, ...]

    @property
    def table_name(self) -> str:
        return f"{self.table.layer}.{self.table.name}"

    def check_name(self, expectation: Expectation) -> str:
        return f"{self.table_name}.{expectation.name}"


def _contract(
    spec: t.TableSpec,
    *extra: Expectation,
    offsets: tuple[str, ...] = (),
    queue: str | None = "queue_id",
    first_date: Param = Param.FIRST_DATE,
) -> TableSuite:
    """Keys, queue ids, offsets and date partition of ``spec``, plus ``extra``."""
    found = [
        Expectation("keys_not_null", "not_null", spec.keys),
        Expectation("keys_unique", "unique", spec.keys),
    ]
    if queue:
        found.append(Expectation("queue_ids_in_range", "between", (queue,), 0, Param.MAX_QUEUE_ID))
    if offsets:
        found.append(Expectation("offsets_in_range", "between", offsets, 0, OFFSET_LIMIT))
    if spec.partition_by:
        found.append(
            Expectation("partition_in_interval", "between", spec.partition_by, first_date, Param.LAST_DATE)
        )
    return TableSuite(spec, (*found, *extra))


def _codes(column: str, *values: str) -> Expectation:
    return Expectation(f"{column}_known", "in_set", (column,), values=values)


def _in_interval(spec: t.TableSpec, since: Param = Param.INTERVAL_START) -> Expectation:
    return Expectation(
        "event_time_in_interval", "between", (spec.event_time,), since, Param.INTERVAL_END, strict_max=True
    )


_KEY_KIND = _codes("key_kind", *KEY_KINDS)
# pipelines.marts.status.STATUSES, and pipelines.replay.explain.CAUSES (schemas import no pipeline: tests
# hold them together)
CONSUMER_STATUSES = ("OK", "WARN", "STALL", "STOP", "REWIND", "ERR")
REGRESSION_CAUSES = (
    "admin_reset",
    "server_correction",
    "rewind_to_min",
    "client_seek",
    "stale_commit",
    "failover",
    "unexplained",
)
_POSITIVE_SIZE = Expectation("regression_sizes_positive", "between", ("regression_size",), 1, OFFSET_LIMIT)

_EVIDENCE = _codes("evidence", "commit_log", "broker_notifyme", "client_persist")
_RESET_KINDS = ("reset_success", "reset_started", "pull_offset_moved", "offset_too_small", "offset_overflow")

SUITES = (
    _contract(t.OFFSET_SNAPSHOTS, _codes("snapshot_source", "main", "bak", "lmq", "lmq_bak", "client_offsets"), _KEY_KIND,
              offsets=("offset",)),
    _contract(t.SNAPSHOT_FILES, _codes("document_kind", "consumer_offsets", "lmq", "delay_offsets"),
              _codes("snapshot_source", "main", "bak"),
              _codes("selection", "main", "bak_fallback", "bak_older", "bak_duplicate", "superseded"), queue=None),
    _contract(t.OFFSET_COMMITS, _EVIDENCE, _codes("commit_path", "update_offset", "pull_piggyback"), _KEY_KIND,
              offsets=("offset", "reported_store_offset")),
    _contract(t.QUEUE_OFFSETS, _codes("evidence", "consumer_progress", "topic_status"),
              offsets=("max_offset", "min_offset", "consumer_offset", "inflight")),
    _contract(t.OFFSET_RESETS, _codes("reset_kind", *_RESET_KINDS)),
    # Levels 1..18 are the broker's default messageDelayLevel; a custom list may define more.
    _contract(t.GROUP_CONNECTIONS, _codes("consume_type", *CONSUME_TYPES),
              _codes("message_model", *MESSAGE_MODELS), queue=None),
    _contract(t.DELAY_OFFSETS, Expectation("delay_levels_in_range", "between", ("delay_level",), 1, 18, severity="warn"),
              offsets=("offset",), queue=None),
    _contract(t.OFFSET_COMMITS_REPLAYED, _POSITIVE_SIZE, _EVIDENCE, _codes("stored_before_source", "commit", "snapshot"), _KEY_KIND,
              offsets=("offset", "stored_offset_before", "client_offset_after")),
    _contract(t.STORED_OFFSET_TIMELINE, _codes("observation", "commit", "snapshot"),
              offsets=("stored_offset", "previous_stored_offset", "consumed_increment")),
    _contract(t.OFFSET_REGRESSIONS, _POSITIVE_SIZE,
              Expectation("exposure_at_least_the_size", "pair_at_least", ("messages_consumed_twice", "regression_size")),
              _codes("evidence", "commit", "snapshot_pair", "snapshot_behind_commit"), _KEY_KIND, _codes("cause", *REGRESSION_CAUSES),
              Expectation("regression_below_stored", "pair_at_least", ("stored_offset", "offset"), strict_max=True),
              offsets=("offset", "stored_offset")),
    _contract(t.REPLAY_CHECKPOINTS, _KEY_KIND,
              offsets=("last_commit_offset", "client_offset_hwm", "last_snapshot_offset", "last_stored_offset")),
    _contract(t.CONSUMER_LAG, _in_interval(t.CONSUMER_LAG),
              Expectation("consumer_offset_not_after_observation", "pair_at_least", ("observed_at", "consumer_offset_at")),
              offsets=("broker_offset", "broker_min_offset", "consumer_offset", "reported_consumer_offset")),
    _contract(t.CONSUMER_LAG_BY_GROUP, _in_interval(t.CONSUMER_LAG_BY_GROUP),
              Expectation("queue_counts_positive", "between", ("queues",), 1, None), queue="worst_queue_id"),
    # Throughput is rebuilt from the start of the window holding the interval's start.
    _contract(t.CONSUME_THROUGHPUT, _in_interval(t.CONSUME_THROUGHPUT, since=Param.THROUGHPUT_FROM),
              Expectation("window_ordered", "pair_at_least", ("window_end", "window_start"), strict_max=True),
              Expectation("counts_in_range", "between", ("messages_consumed", "messages_per_second", "observations",
                                                         "messages_produced", "produced_per_second"), 0, None),
              queue=None, first_date=Param.THROUGHPUT_FIRST_DATE),
    _contract(t.PRODUCE_THROUGHPUT, _in_interval(t.PRODUCE_THROUGHPUT, since=Param.THROUGHPUT_FROM),
              Expectation("window_ordered", "pair_at_least", ("window_end", "window_start"), strict_max=True),
              Expectation("counts_in_range", "between", ("messages_produced", "messages_per_second", "max_offset_decreases"), 0, None),
              Expectation("observed", "between", ("observations",), 1, None),
              offsets=("max_offset",), first_date=Param.THROUGHPUT_FIRST_DATE),
    _contract(t.CONSUMER_STATUS, _in_interval(t.CONSUMER_STATUS, since=Param.STATUS_FROM),
              _codes("status", *CONSUMER_STATUSES),
              Expectation("counts_in_range", "between", ("lag_observations", "commits", "messages_consumed", "regressions",
                                                         "expired_messages"), 0, None),
              queue=None, first_date=Param.STATUS_FIRST_DATE),
    _contract(t.DUPLICATE_EXPOSURE, _in_interval(t.DUPLICATE_EXPOSURE, since=Param.DAY_FROM),
              Expectation("counts_positive", "between", ("regressions", "queues", "extra_deliveries"), 1, None),
              Expectation("deliveries_cover_the_unintended", "pair_at_least", ("extra_deliveries", "unintended_extra_deliveries")),
              queue=None, first_date=Param.DAY_FIRST_DATE),
)  # fmt: skip


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_YEAR = timedelta(days=366)
_BREAKS = re.compile(r"[\x00-\x1f\x7f]")


def _host(url: str) -> str | None:
    try:
        return urllib.parse.urlsplit(url).hostname
    except ValueError:  # an unbalanced IPv6 bracket, a port that is no number
        return None


class AlertSinkSettings(_Model):
    """Where a run's alerts go besides ``quality/alerts``: the log, a JSON-lines file, or a webhook."""

    kind: Literal["log", "file", "webhook"] = "log"
    path: Path | None = None  # file: one JSON object per alert, appended
    # webhook: one JSON POST per run with alerts. The URL and the headers may hold secrets (a token):
    # never in a repr, and masked in what the sink logs (jobs.quality.alerts)
    url: str | None = Field(default=None, repr=False)
    headers: dict[str, str] = Field(default_factory=dict, repr=False)
    timeout_seconds: float = Field(default=10.0, gt=0)
    retries: int = Field(default=3, ge=0)  # attempts after the first
    backoff_seconds: float = Field(default=1.0, ge=0)  # first wait; doubles after each failure
    max_alerts_per_check: int = Field(default=20, ge=1)
    top_findings: int = Field(default=5, ge=1)  # the largest findings an alert carries
    # a webhook body's bound; alerts beyond it are counted, not sent
    max_payload_bytes: int = Field(default=256 * 1024, ge=4096)

    @model_validator(mode="after")
    def _target_given(self) -> AlertSinkSettings:
        if self.kind == "file" and self.path is None:
            raise ValueError("the file alert sink needs 'path' (a JSON-lines file to append to)")
        if self.kind == "webhook" and not (self.url or "").startswith(("http://", "https://")):
            raise ValueError("the webhook alert sink needs 'url' starting with http:// or https://")
        if self.kind == "webhook" and not _host(self.url):
            raise ValueError("the webhook alert sink's 'url' names no host")
        if any(_BREAKS.search(text) for item in self.headers.items() for text in item) or _BREAKS.search(
            self.url or ""
        ):
            raise ValueError("a webhook header or url holds a line break or control character")
        return self


class QualitySettings(_Model):
    """Thresholds of the monitoring checks, severities and the alert sink (``[quality]`` in TOML)."""

    snapshot_interval: timedelta = Field(default=timedelta(minutes=5), gt=timedelta(0), le=_YEAR)
    max_missed_snapshots: int = Field(default=3, ge=1, le=100_000)
    stalled_after: timedelta = Field(default=timedelta(hours=1), gt=timedelta(0), le=_YEAR)
    # a regression that makes its group consume more messages than this again is a finding of
    # large_regressions; smaller ones (a rebalance's in-flight batch) are routine and stay
    # queryable in silver/offset_regressions only
    regression_alert_above: int = Field(default=100, ge=0)
    # A snapshot may hold any commit of this long before it (the broker persists every five seconds).
    snapshot_commit_tolerance: timedelta = Field(default=timedelta(seconds=10), ge=timedelta(0), le=_YEAR)
    # History before the interval the monitoring checks read (gaps, stalls, last commits).
    lookback: timedelta = Field(default=timedelta(hours=6), gt=timedelta(0), le=_YEAR * 10)
    max_queue_id: int = Field(default=MAX_QUEUE_ID, ge=0)
    # severity per check name (jobs.quality.checks checks the names when the settings load)
    severities: dict[str, Severity] = Field(default_factory=dict)
    # how the table suites are measured: one aggregation per table (jobs.quality.one_pass), or
    # Great Expectations' own Spark engine, a job per expectation and column (the same outcomes;
    # docs/experiments.md, "The audit in one pass")
    expectation_engine: Literal["one_pass", "great_expectations"] = "one_pass"
    sink: AlertSinkSettings = AlertSinkSettings()

    @model_validator(mode="after")
    def _lookback_covers_checks(self) -> QualitySettings:
        needed = max(
            self.stalled_after,
            self.snapshot_interval * self.max_missed_snapshots,
            self.snapshot_commit_tolerance,
        )
        if self.lookback < needed:
            raise ValueError(
                f"lookback ({self.lookback}) must cover stalled_after, the snapshot gap and the tolerance ({needed})"
            )
        return self

    @property
    def max_snapshot_gap(self) -> timedelta:
        return self.snapshot_interval * self.max_missed_snapshots

    def severity(self, check_name: str, default: Severity) -> Severity:
        return self.severities.get(check_name, default)
