"""The cluster model on a time grid of ticks (one commit interval each), as numpy arrays.

Per message queue ``q`` and tick ``k``: ``max_offset[q, k]``, the queue's max offset
during the tick. Per (queue, group) pair ``p``: ``owner[p, k]`` (client incarnation or
-1), ``consumed[p, k]`` (what the owner commits during the tick, never above the max
offset) and ``stored_end[p, k]`` (the broker's stored offset at the end of the tick).
Consumption follows a queue with a capacity: the lag ``W`` obeys
``W[k] = max(0, W[k-1] + produced[k] - capacity[k])``, solved in closed form with
cumulative sums, so no Python loop runs per tick or per event.

Within a tick, admin resets and failovers happen in its first ``INSTANT_MAX_MS``, client
commits from ``ACTIVITY_FROM_MS`` on, and a stale commit last of all; a snapshot taken at a
tick's start therefore shows what the previous tick ended with.
"""

from __future__ import annotations

import itertools
import math
import zlib
from dataclasses import dataclass

import numpy as np

from jobs.tools.simulator.spec import SimulationSpec
from jobs.tools.simulator.topology import Incarnations, Topology, allocate_averagely

ACTIVITY_FROM_MS = 120
INSTANT_MAX_MS = 100
LOCAL_OFFSET_MS = 8 * 3_600_000  # producers follow the day in GMT+8


@dataclass
class Model:
    spec: SimulationSpec
    topology: Topology
    start_ms: int
    step_ms: int
    ticks: int
    incarnations: Incarnations
    owner: np.ndarray
    produced: np.ndarray
    max_offset_initial: np.ndarray
    consumed: np.ndarray
    consumed_initial: np.ndarray
    capacity: np.ndarray
    outage: np.ndarray  # [broker, tick]: broker unreachable, nothing committed or produced
    stored_end: np.ndarray | None = None

    def tick_ms(self, tick: int | np.ndarray) -> int | np.ndarray:
        return self.start_ms + tick * self.step_ms

    def tick_of(self, millis: int) -> int:
        return (millis - self.start_ms) // self.step_ms

    def stored_at_tick_start(self, tick: int) -> np.ndarray:
        """The broker's table (per pair) at the instant tick ``tick`` begins."""
        return self.consumed_initial if tick <= 0 else self.stored_end[:, tick - 1]


def generator(seed: int, purpose: str) -> np.random.Generator:
    """An independent random stream per purpose, so one feature never shifts another."""
    return np.random.default_rng([seed, zlib.crc32(purpose.encode())])


def schedule_clients(
    topology: Topology, restarts: list[tuple[int, int, int, int]], ticks: int, step_ms: int, seed: int
) -> Incarnations:
    """Client incarnations: each host runs the whole time except for its restarts.

    ``restarts`` holds (group, host index, stop tick, start tick) rows.
    """
    rng = generator(seed, "clients")
    incarnations = Incarnations()
    for g, group in enumerate(topology.groups):
        for h, host in enumerate(group.hosts):
            gaps = sorted((stop, start) for gg, hh, stop, start in restarts if gg == g and hh == h)
            begin = 0
            for stop, start in gaps:
                incarnations.add(rng, g, host, begin, stop, step_ms)
                begin = start
            incarnations.add(rng, g, host, begin, ticks, step_ms)
    return incarnations


def assign_owners(topology: Topology, incarnations: Incarnations, ticks: int) -> np.ndarray:
    """owner[p, k]: the incarnation that holds pair p's queue during tick k (-1: nobody)."""
    owner = np.full((len(topology.pair_queue), ticks), -1, dtype=np.int32)
    inc_group = np.array(incarnations.group, dtype=np.int64)
    starts, ends = np.array(incarnations.start_tick), np.array(incarnations.end_tick)
    pair_broker_name = [topology.brokers[b].name for b in topology.pair_broker]
    for g in range(len(topology.groups)):
        members = np.flatnonzero(inc_group == g)
        if members.size == 0:
            continue
        cuts = sorted({0, ticks, *starts[members].tolist(), *ends[members].tolist()})
        pairs = np.flatnonzero(topology.pair_group == g)
        queues = topology.pair_queue[pairs]
        for begin, end in itertools.pairwise(cuts):
            active = [int(i) for i in members if starts[i] <= begin and ends[i] >= end]
            ids = [incarnations.client_id(i) for i in active]
            for topic in np.unique(topology.queue_topic[queues]):
                in_topic = pairs[topology.queue_topic[queues] == topic]
                # MessageQueue order: topic, then broker name, then queue id.
                in_topic = sorted(
                    in_topic, key=lambda p: (pair_broker_name[p], topology.queue_id[topology.pair_queue[p]])
                )
                for p, slot in zip(in_topic, allocate_averagely(list(range(len(in_topic))), ids)):
                    owner[p, begin:end] = active[slot] if slot >= 0 else -1
    return owner


def _rate_factor(pattern: str, local_hour: np.ndarray) -> np.ndarray:
    if pattern == "steady":
        return 0.25 + 0.75 * (1 - np.cos(2 * np.pi * (local_hour - 3) / 24)) / 2
    if pattern == "bursty":
        return np.where((local_hour % 6 >= 2) & (local_hour % 6 < 2.25), 1.0, 0.01)
    return np.ones_like(local_hour)


def production(
    spec: SimulationSpec, topology: Topology, start_ms: int, step_ms: int, ticks: int
) -> tuple[np.ndarray, np.ndarray]:
    """Messages made visible per queue and tick, and each queue's max offset before the start."""
    rng = generator(spec.seed, "production")
    coarse = max(1, round(60_000 / step_ms))
    n_coarse = math.ceil(ticks / coarse)
    mid_ms = start_ms + (np.arange(n_coarse) * coarse + coarse / 2) * step_ms
    local_hour = ((mid_ms + LOCAL_OFFSET_MS) / 3_600_000) % 24
    topic_rate = np.zeros((len(topology.topics), n_coarse))
    for t, topic in enumerate(topology.topics):
        noise = rng.lognormal(0, 0.3, n_coarse) if topic.pattern in ("steady", "bursty") else 1.0
        topic_rate[t] = topic.rate * _rate_factor(topic.pattern, local_hour) * noise
    queues_of_topic = np.bincount(topology.queue_topic, minlength=len(topology.topics))
    weight = np.clip(1 + 0.1 * rng.standard_normal(len(topology.queue_topic)), 0.5, 1.5)
    queue_rate = topic_rate[topology.queue_topic] * (weight / queues_of_topic[topology.queue_topic])[:, None]
    expected = np.repeat(queue_rate, coarse, axis=1)[:, :ticks] * (step_ms / 1000)
    cumulative = np.floor(np.cumsum(expected, axis=1) + rng.random(len(weight))[:, None]).astype(np.int64)
    produced = np.diff(cumulative, axis=1, prepend=0)
    produced[:, 0] = cumulative[:, 0]
    days_of_history = rng.uniform(1, 20, len(weight))
    initial = (topology.queue_rate() * 0.6 * 86_400 * days_of_history).astype(np.int64)
    small = rng.integers(3, 400, len(weight))
    return produced, np.where(initial > 0, initial, small)


def capacity(
    spec: SimulationSpec, topology: Topology, owner: np.ndarray, step_ms: int, outage: np.ndarray
) -> np.ndarray:
    """Messages each pair's owner can consume per tick (0 with no owner or during an outage)."""
    rng = generator(spec.seed, "capacity")
    peak = topology.queue_rate()[topology.pair_queue]  # the diurnal curve peaks at the mean rate
    factor = np.array([group.capacity_factor for group in topology.groups])[topology.pair_group]
    per_tick = np.maximum(peak * factor, 0.5) * (step_ms / 1000)
    multiplier = np.ones(owner.shape, dtype=np.float32)
    ticks = owner.shape[1]
    if ticks * step_ms >= 2 * 3_600_000:  # a slow spell for about half of the groups
        for g in range(len(topology.groups)):
            if rng.random() < 0.5:
                length = int(rng.integers(20, 60) * 60_000 // step_ms)
                begin = int(rng.integers(0, max(1, ticks - length)))
                multiplier[np.flatnonzero(topology.pair_group == g), begin : begin + length] = 0.1
    cap = np.ceil(per_tick[:, None] * multiplier).astype(np.int64)
    cap[owner < 0] = 0
    cap[outage[topology.pair_broker]] = 0
    return cap


def min_offsets(topology: Topology, max_offset_initial: np.ndarray) -> np.ndarray:
    """Each queue's min offset: the broker keeps about three days of messages (fixed over a run)."""
    retained = (topology.queue_rate() * 0.6 * 86_400 * 3).astype(np.int64)
    return np.maximum(0, max_offset_initial - retained)


def initial_lag(spec: SimulationSpec, topology: Topology, max_offset_initial: np.ndarray) -> np.ndarray:
    """Messages each pair is behind at the start; an abandoned group is days behind."""
    rng = generator(spec.seed, "initial-lag")
    rate = topology.queue_rate()[topology.pair_queue]
    abandoned = np.array([not topology.groups[g].hosts for g in topology.pair_group])
    seconds = np.where(abandoned, rng.uniform(2, 4, len(rate)) * 86_400, rng.uniform(0.5, 5, len(rate)))
    return np.minimum((rate * seconds).astype(np.int64), max_offset_initial[topology.pair_queue])


def lag_after(produced: np.ndarray, cap: np.ndarray, lag_before: np.ndarray) -> np.ndarray:
    """Solve ``W[k] = max(0, W[k-1] + produced[k] - cap[k])`` for every row at once.

    >>> lag_after(np.array([[5, 5, 0, 0]]), np.array([[2, 2, 2, 2]]), np.array([1])).tolist()
    [[4, 7, 5, 3]]
    """
    walk = np.cumsum(produced - cap, axis=1)
    floor = np.minimum(np.minimum.accumulate(walk, axis=1), -lag_before[:, None])
    return walk - floor


def forward_fill_stored(consumed: np.ndarray, committed: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """Stored offset at each tick's end: the value committed in the latest tick with a commit.

    >>> forward_fill_stored(np.array([[5, 6, 7, 8]]), np.array([[False, True, False, True]]), np.array([4])).tolist()
    [[4, 6, 6, 8]]
    """
    ticks = np.arange(consumed.shape[1])
    latest = np.maximum.accumulate(np.where(committed, ticks, -1), axis=1)
    stored = np.take_along_axis(consumed, np.maximum(latest, 0), axis=1)
    return np.where(latest >= 0, stored, initial[:, None])
