"""What to simulate (:class:`SimulationSpec`) and what was written (:class:`SimulationManifest`).

A spec describes a RocketMQ estate: clusters of brokers (4.x and 5.x), topics with
queues, consumer groups with several clients, and how often the evidence is collected.
Three constructors cover the usual sizes::

    SimulationSpec.demo(start)                  # a day, ~0.5-1M commit events
    SimulationSpec.for_commit_events(10_000_000, start)
    SimulationSpec.busy_broker_day(start)       # 288 snapshots of 2,000 keys x 8 queues
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

BrokerVersion = Literal["4.9.8", "5.3.3"]
IncidentKind = Literal[
    "stale_commit",
    "client_reset",
    "server_reset",
    "failover",
    "pull_offset_moved",
    "rewind_to_min",
    "client_seek",
]
# the cause the pipeline should find for each kind (pipelines.replay.explain's codes)
CAUSE_OF_KIND = {
    "stale_commit": "stale_commit",
    "client_reset": "admin_reset",
    "server_reset": "admin_reset",
    "failover": "failover",
    "pull_offset_moved": "server_correction",
    "rewind_to_min": "rewind_to_min",
    "client_seek": "client_seek",
}
# Pairs committed per group: 8 queues on each of 2 brokers plus the retry queue on each.
_PAIRS_PER_BENCH_GROUP = 18
MIN_COMMIT_EVENTS = 2000  # for_commit_events: ten minutes of the smallest bench cluster


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SimulationSpec(_Model):
    """Scale, timing and behaviour of one simulated run (deterministic for a seed)."""

    seed: int = 20261121
    start: datetime = datetime(2026, 11, 21, tzinfo=UTC)
    duration: timedelta = timedelta(days=1)
    clusters: int = Field(default=1, ge=1, le=9)
    brokers_per_cluster: int = Field(default=2, ge=1, le=26)
    # Cycled over each cluster's brokers: broker-a gets the first, broker-b the second, ...
    broker_versions: tuple[BrokerVersion, ...] = ("4.9.8", "5.3.3")
    topics: int = Field(default=3, ge=1, description="topics per cluster, each on every broker")
    queues_per_topic: tuple[int, ...] = (8, 4, 6)
    groups: int = Field(
        default=3, ge=1, description="active consumer groups per cluster; group i reads topic i % topics"
    )
    clients_per_group: tuple[int, ...] = (3, 2, 2)
    rate_scale: float = Field(default=1.0, ge=0.0, description="multiplies every producer rate")
    commit_interval: timedelta = timedelta(seconds=5)
    # Chance per commit interval that an owned queue also commits through a pull request.
    pull_commit_ratio: float = Field(default=0.2, ge=0.0, le=1.0)
    snapshot_interval: timedelta = timedelta(minutes=5)
    # Every n-th snapshot also lands consumerOffset.json.bak (the previous persist); 0: never.
    bak_every: int = Field(default=3, ge=0)
    progress_interval: timedelta | None = timedelta(minutes=5)
    write_commits: bool = True
    gzip_commits: bool = False
    # Clients per cluster whose rocketmq_client.log is written (0: none).
    client_logs_for: int = Field(default=1, ge=0)
    retry_topics: bool = True
    # DLQ, system and abandoned-group keys that no client commits to.
    static_keys: bool = True
    incidents: bool = True
    incident_rounds: int = Field(default=1, ge=1)

    @field_validator("start")
    @classmethod
    def _utc_whole_seconds(cls, value: datetime) -> datetime:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if value.microsecond:
            raise ValueError("start must be a whole second")
        return value

    @field_validator("queues_per_topic", "clients_per_group", "broker_versions")
    @classmethod
    def _not_empty(cls, value: tuple) -> tuple:
        if not value:
            raise ValueError("give at least one value; the list is cycled")
        return value

    @field_validator("queues_per_topic")
    @classmethod
    def _queue_counts(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 1 <= count <= 1024 for count in value):
            raise ValueError("queues per topic must be between 1 and 1024")
        return value

    @field_validator("clients_per_group")
    @classmethod
    def _client_counts(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 1 <= count <= 200 for count in value):
            raise ValueError("clients per group must be between 1 and 200")
        return value

    @model_validator(mode="after")
    def _consistent_intervals(self) -> SimulationSpec:
        if self.commit_interval.total_seconds() < 1 or self.commit_interval.total_seconds() % 1:
            raise ValueError("commit_interval must be a whole number of seconds, at least 1")
        step = self.model_step
        for name in ("snapshot_interval", "progress_interval", "duration"):
            interval = getattr(self, name)
            if interval is not None and (interval < step or interval % step):
                raise ValueError(
                    f"{name} ({interval}) must be a positive multiple of the model step ({step})"
                )
        if self.incidents and not self.write_commits:
            raise ValueError("incidents need commits: set write_commits=True or incidents=False")
        return self

    @property
    def model_step(self) -> timedelta:
        """Time resolution of the model: the commit interval, or one minute when no commits are written."""
        if self.write_commits:
            return self.commit_interval
        intervals = [
            self.snapshot_interval,
            self.progress_interval or self.snapshot_interval,
            timedelta(minutes=1),
        ]
        return timedelta(seconds=math.gcd(*(int(i.total_seconds()) for i in intervals)))

    @property
    def end(self) -> datetime:
        return self.start + self.duration

    @classmethod
    def demo(cls, start: datetime, seed: int = 20261121) -> SimulationSpec:
        """A day of one cluster with two brokers (4.x and 5.x), three topics and three groups."""
        return cls(seed=seed, start=start)

    @classmethod
    def small_cluster(
        cls, start: datetime, duration: timedelta, progress_interval: timedelta
    ) -> SimulationSpec:
        """A small cluster with every kind of evidence and of incident: 2 topics (4 + 2 queues),
        2 groups, a commit every 30 seconds, a snapshot every 10 minutes."""
        return cls(start=start, duration=duration, topics=2, queues_per_topic=(4, 2), groups=2,
                   clients_per_group=(2, 1), commit_interval=timedelta(seconds=30),
                   snapshot_interval=timedelta(minutes=10), progress_interval=progress_interval)  # fmt: skip

    @classmethod
    def for_commit_events(cls, events: int, start: datetime, seed: int = 20261121) -> SimulationSpec:
        """About ``events`` commit events (within 5%): a topic and a group per ~370k events a day, 8 queues on 2 brokers."""
        if events < MIN_COMMIT_EVENTS:
            # (a shorter run, five minutes, has no room for its incidents before the end)
            raise ValueError(f"ask for at least {MIN_COMMIT_EVENTS} commit events")
        per_tick = (1 + 0.2) * _PAIRS_PER_BENCH_GROUP
        groups = max(1, round(events / (per_tick * 17_280)))
        ticks = math.ceil(events / (per_tick * groups) / 60) * 60  # whole 5-minute blocks
        return cls(
            seed=seed,
            start=start,
            duration=timedelta(seconds=5 * ticks),
            topics=groups,
            queues_per_topic=(8,),
            groups=groups,
            clients_per_group=(2,),
        )

    @classmethod
    def busy_broker_day(
        cls, start: datetime, version: BrokerVersion = "4.9.8", seed: int = 20261121
    ) -> SimulationSpec:
        """One broker's snapshots for a day: 2,000 topic@group keys with 8 queues each, no other evidence."""
        return cls(
            seed=seed,
            start=start,
            brokers_per_cluster=1,
            broker_versions=(version,),
            topics=1000,
            queues_per_topic=(8,),
            groups=2000,
            clients_per_group=(1,),
            bak_every=0,
            progress_interval=None,
            write_commits=False,
            client_logs_for=0,
            retry_topics=False,
            static_keys=False,
            incidents=False,
        )


class BrokerInfo(_Model):
    cluster: str
    broker: str
    version: BrokerVersion
    address: str


class Incident(_Model):
    """One queue's regression that the simulation injected.

    ``offset`` is what the broker received or stored (the committed offset, the reset
    target, or the slave's older offset); ``stored_offset_before`` is what the broker had
    stored just before. Commit regressions (``has_notifyme``) have a NOTIFYME line in
    broker.log; the others are visible only in snapshots (``visible_in_snapshot_at``).
    """

    incident_id: str
    kind: IncidentKind
    cluster: str
    broker: str
    topic: str
    consumer_group: str
    queue_id: int
    occurred_at: datetime
    offset: int
    stored_offset_before: int
    client_host: str | None = None
    commit_path: Literal["update_offset", "pull_piggyback"] | None = None
    has_notifyme: bool
    visible_in_snapshot_at: datetime | None = None
    # the cause the pipeline should give the regression it leaves (CAUSE_OF_KIND, from the kind)
    cause: str

    @model_validator(mode="before")
    @classmethod
    def _cause_of_kind(cls, data):
        if isinstance(data, dict) and "kind" in data:
            expected = CAUSE_OF_KIND.get(data["kind"])
            if data.setdefault("cause", expected) != expected:
                raise ValueError(
                    f"an incident of kind {data['kind']} has cause {expected}, not {data['cause']}"
                )
        return data


class SimulationManifest(_Model):
    """What :func:`jobs.tools.simulator.simulate` wrote, and every incident it injected."""

    spec: SimulationSpec
    brokers: list[BrokerInfo]
    commit_events: int
    commit_events_by_path: dict[str, int]
    commit_files: int
    snapshot_files: int
    snapshot_bak_files: int
    progress_files: int
    # mqadmin consumerConnection outputs, written at the progress times
    connection_files: int = 0
    broker_log_files: int
    notifyme_lines: int
    client_log_files: int
    incidents: list[Incident]
