"""The simulated estate: brokers, topics, queues, consumer groups and their clients.

Everything here is static for a run except client membership, which is a list of
client incarnations (a process from its start to its stop); a restart ends one
incarnation and begins another with a new pid and a new connection port.
Arrays are indexed by a global position: ``queue_*`` by message queue (one queue id of
one topic on one broker), ``pair_*`` by (message queue, consumer group).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jobs.tools.simulator.spec import SimulationSpec

TOPIC_STEMS = (
    "order-events", "payment-callback", "inventory-sync", "user-activity", "sms-notify",
    "audit-log", "search-index", "coupon-issue", "shipping-status", "risk-score",
)  # fmt: skip
GROUP_STEMS = (
    "order-service", "payment-service", "inventory-worker", "activity-analytics", "sms-sender",
    "audit-archiver", "search-indexer", "coupon-service", "shipping-tracker", "risk-engine",
)  # fmt: skip
# (pattern, messages per second for the whole topic) cycled over a cluster's topics.
TOPIC_PROFILES = (("steady", 40.0), ("steady", 6.0), ("bursty", 25.0), ("steady", 1.5), ("idle", 0.0))
RETRY_RATE = 0.004
NAMESRV = "10.0.0.10:9876"
ADMIN_HOST = "10.0.9.5"


@dataclass(frozen=True)
class Broker:
    cluster: str
    name: str
    version: str
    address: str
    slave_address: str

    @property
    def is_5x(self) -> bool:
        return self.version.startswith("5.")


@dataclass(frozen=True)
class Topic:
    cluster: int
    name: str
    pattern: str  # steady | bursty | idle | retry
    rate: float  # messages per second over all its queues
    queues: int  # queues on each broker


@dataclass(frozen=True)
class Group:
    cluster: int
    name: str
    topic: int
    retry_topic: int | None
    hosts: tuple[str, ...]  # client IPs; empty for an abandoned group
    capacity_factor: float  # consume capacity relative to the topic's peak rate


@dataclass
class Incarnations:
    """One row per client process: which group, which host, when it ran."""

    group: list[int] = field(default_factory=list)
    host: list[str] = field(default_factory=list)
    port: list[int] = field(default_factory=list)
    pid: list[int] = field(default_factory=list)
    start_tick: list[int] = field(default_factory=list)
    end_tick: list[int] = field(default_factory=list)
    phase_ms: list[int] = field(default_factory=list)

    def add(self, rng: np.random.Generator, group: int, host: str, start: int, end: int, step_ms: int) -> int:
        self.group.append(group)
        self.host.append(host)
        self.port.append(int(rng.integers(30000, 65000)))
        self.pid.append(int(rng.integers(1000, 65000)))
        self.start_tick.append(start)
        self.end_tick.append(end)
        self.phase_ms.append(int(rng.integers(150, max(151, step_ms - 150))))
        return len(self.group) - 1

    def client_host(self, index: int) -> str:
        return f"{self.host[index]}:{self.port[index]}"

    def client_id(self, index: int) -> str:
        return f"{self.host[index]}@{self.pid[index]}"


@dataclass
class Topology:
    brokers: list[Broker]
    topics: list[Topic]
    groups: list[Group]
    queue_broker: np.ndarray
    queue_topic: np.ndarray
    queue_id: np.ndarray
    pair_queue: np.ndarray
    pair_group: np.ndarray
    static_entries: list[tuple[int, str, dict[int, int]]]  # (broker, key, {queue id: offset})
    cluster_names: list[str]

    @property
    def pair_broker(self) -> np.ndarray:
        return self.queue_broker[self.pair_queue]

    def key(self, pair: int) -> str:
        return f"{self.topics[self.queue_topic[self.pair_queue[pair]]].name}@{self.groups[self.pair_group[pair]].name}"

    def cluster_of_broker(self, broker: int) -> int:
        return self.cluster_names.index(self.brokers[broker].cluster)

    def queue_rate(self) -> np.ndarray:
        """Mean messages per second of each queue: its topic's rate shared by the topic's queues."""
        queues_of_topic = np.bincount(self.queue_topic, minlength=len(self.topics))
        return (
            np.array([topic.rate for topic in self.topics])[self.queue_topic]
            / queues_of_topic[self.queue_topic]
        )


def _name(stems: tuple[str, ...], index: int) -> str:
    return stems[index % len(stems)] + (f"-{index // len(stems) + 1}" if index >= len(stems) else "")


def _broker_name(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return f"broker-{letters}"


def build_topology(spec: SimulationSpec, rng: np.random.Generator) -> Topology:
    """Brokers, topics, groups, queues and (queue, group) pairs of every cluster."""
    brokers: list[Broker] = []
    topics: list[Topic] = []
    groups: list[Group] = []
    cluster_names = [f"prod-{c + 1}" for c in range(spec.clusters)]
    for c, cluster in enumerate(cluster_names):
        for b in range(spec.brokers_per_cluster):
            version = spec.broker_versions[b % len(spec.broker_versions)]
            address, slave = f"10.0.{c + 1}.{21 + b}:10911", f"10.0.{c + 1}.{121 + b}:10911"
            brokers.append(Broker(cluster, _broker_name(b), version, address, slave))
        first_topic = len(topics)
        for t in range(spec.topics):
            pattern, rate = TOPIC_PROFILES[t % len(TOPIC_PROFILES)]
            jitter = 1.0 if t < len(TOPIC_PROFILES) else float(rng.uniform(0.5, 1.5))
            queues = spec.queues_per_topic[t % len(spec.queues_per_topic)]
            topics.append(Topic(c, _name(TOPIC_STEMS, t), pattern, rate * jitter * spec.rate_scale, queues))
        host_counter = 0
        group_specs = [
            (g, spec.clients_per_group[g % len(spec.clients_per_group)]) for g in range(spec.groups)
        ]
        if spec.static_keys:
            group_specs.append((-1, 0))  # abandoned: the key stays, nobody commits
        for g, clients in group_specs:
            topic = first_topic + (g % spec.topics if g >= 0 else 0)
            name = _name(GROUP_STEMS, g) if g >= 0 else f"{groups[-spec.groups].name}-v1"
            retry = None
            if spec.retry_topics:
                topics.append(Topic(c, f"%RETRY%{name}", "retry", RETRY_RATE * spec.rate_scale, 1))
                retry = len(topics) - 1
            hosts = []
            for _ in range(clients):
                hosts.append(f"10.{10 + c}.{1 + host_counter // 240}.{11 + host_counter % 240}")
                host_counter += 1
            factor = 0.7 if topics[topic].pattern == "bursty" else float(rng.uniform(1.6, 3.0))
            groups.append(Group(c, name, topic, retry, tuple(hosts), factor))
    return _with_queues(spec, rng, brokers, topics, groups, cluster_names)


def _with_queues(spec, rng, brokers, topics, groups, cluster_names) -> Topology:
    queue_rows = []  # (broker, topic, queue id)
    for t, topic in enumerate(topics):
        for b, broker in enumerate(brokers):
            if broker.cluster == cluster_names[topic.cluster]:
                queue_rows.extend((b, t, q) for q in range(topic.queues))
    queues = np.array(queue_rows, dtype=np.int64).reshape(-1, 3)
    queues_of_topic: dict[int, list[int]] = {}
    for i, (_, t, _) in enumerate(queue_rows):
        queues_of_topic.setdefault(t, []).append(i)
    pair_rows = []
    for g, group in enumerate(groups):
        for t in (group.topic, group.retry_topic):
            if t is not None:
                pair_rows.extend((q, g) for q in queues_of_topic[t])
    pairs = np.array(pair_rows, dtype=np.int64).reshape(-1, 2)
    static_entries = _static_entries(spec, rng, brokers, groups, cluster_names) if spec.static_keys else []
    return Topology(
        brokers=brokers,
        topics=topics,
        groups=groups,
        queue_broker=queues[:, 0].astype(np.int32),
        queue_topic=queues[:, 1].astype(np.int32),
        queue_id=queues[:, 2].astype(np.int32),
        pair_queue=pairs[:, 0].astype(np.int32),
        pair_group=pairs[:, 1].astype(np.int32),
        static_entries=static_entries,
        cluster_names=cluster_names,
    )


def _static_entries(spec, rng, brokers, groups, cluster_names) -> list[tuple[int, str, dict[int, int]]]:
    """Keys every real broker carries that no simulated client commits to."""
    entries = []
    for b, broker in enumerate(brokers):
        entries.append((b, "OFFSET_MOVED_EVENT@__MONITOR_CONSUMER", {0: 0}))
        if broker.is_5x:
            revive = f"rmq_sys_REVIVE_LOG_{broker.cluster}@CID_RMQ_SYS_REVIVE_GROUP"
            entries.append((b, revive, {q: int(rng.integers(0, 40)) for q in range(8)}))
        else:
            entries.append(
                (b, "RMQ_SYS_TRANS_HALF_TOPIC@CID_RMQ_SYS_TRANS", {0: int(rng.integers(100, 5000))})
            )
        if broker.name == "broker-a":
            first_group = next(g for g in groups if g.cluster == cluster_names.index(broker.cluster))
            entries.append((b, f"%DLQ%{first_group.name}@dlq-auditor", {0: int(rng.integers(1, 30))}))
    return entries


def allocate_averagely(queues: list[int], clients: list[str]) -> list[int]:
    """RocketMQ's AllocateMessageQueueAveragely: for each queue, the index of its client.

    ``queues`` must be in MessageQueue order (topic, broker name, queue id) and ``clients``
    are client ids; they are sorted as the client sorts them.
    """
    owner = [-1] * len(queues)
    if not clients:
        return owner
    order = sorted(range(len(clients)), key=lambda i: clients[i])
    total, count = len(queues), len(clients)
    mod = total % count
    for rank, client in enumerate(order):
        average = 1 if total <= count else total // count + 1 if mod > 0 and rank < mod else total // count
        start = rank * average if mod > 0 and rank < mod else rank * average + mod
        for i in range(max(0, min(average, total - start))):
            owner[(start + i) % total] = client
    return owner
