"""When and where regressions are injected, decided before the model runs.

Each incident round (``spec.incident_rounds`` equal windows of the run) places, per
cluster, at fixed fractions of its window:

- 20%: a rolling restart of a group; at a rejoin, a client that lost a queue sends its
  older offset after the new owner committed a higher one (``stale_commit``);
- 40% and 60%: an admin reset of a group to an hour earlier (half the time since the
  start in short runs), 30 s before a snapshot (``client_reset`` on 4.x brokers,
  ``server_reset`` on 5.x brokers);
- 80%: a failover of one broker to a slave with an older table, 15 s before a snapshot,
  with clients unable to reach it for 35 s (``failover``);
- 30%: the broker corrects a client's pull offset (``PULL_OFFSET_MOVED``) to where the queue
  was 20 minutes earlier, and the client commits it (``pull_offset_moved``);
- 70%: a client commits the queue's min offset (a timed-out offset fetch read as -1, as in
  RocketMQ issue 2708) and consumes everything the broker keeps again (``rewind_to_min``);
- 50%: in the cluster's pull group (one group no stale commit touches, whose consumerConnection
  outputs say ``CONSUME_ACTIVELY``), a client seeks one queue back ten minutes and commits it
  (``client_seek``: a pull consumer commits with ``increaseOnly=false``).

Each incident's kind names the cause the pipeline should find for it (``Incident.cause``).

Longer runs also get one clean rolling restart per group, away from the incidents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from jobs.tools.simulator.model import INSTANT_MAX_MS, generator
from jobs.tools.simulator.spec import SimulationSpec
from jobs.tools.simulator.topology import Topology

RESTART_SPACING_MS = 60_000  # between two hosts of a rolling restart
RESTART_DOWN_MS = 20_000  # a host is away this long
CLIENT_RESET_DELAY_MS = 10_000  # the 4.x client sleeps before committing the reset offset
FAILOVER_BEFORE_SNAPSHOT_MS = 15_000
FAILOVER_OUTAGE_MS = 35_000  # until clients find the new master through the name server
SLAVE_SYNC_MS = {"4": 10_000, "5": 60_000}
RESET_BACK_MS = 3_600_000
RESET_BEFORE_SNAPSHOT_MS = 30_000
STALE_AT, RESETS_AT, FAILOVER_AT = 0.2, (0.4, 0.6), 0.8  # fractions of a round
CORRECTION_AT, REWIND_AT = 0.3, 0.7
CORRECTION_BACK_MS = 20 * 60_000
SEEK_AT = 0.5
SEEK_BACK_MS = 10 * 60_000


@dataclass(frozen=True)
class StalePlan:
    incident_id: str
    group: int
    joins: tuple[int, ...]  # ticks at which a restarted host rejoins


@dataclass(frozen=True)
class ResetPlan:
    incident_id: str
    cluster: int
    group: int
    admin_ms: int
    reset_to_ms: int  # the time the group is reset to, a whole second


@dataclass(frozen=True)
class RewindPlan:
    """A client commits an older offset of one queue of ``group``: the broker's correction, the min offset, or a seek."""

    incident_id: str
    kind: str  # pull_offset_moved | rewind_to_min | client_seek
    group: int
    at_ms: int


@dataclass(frozen=True)
class FailoverPlan:
    incident_id: str
    broker: int
    tick: int
    at_ms: int
    outage_ticks: int
    sync_lag_ticks: int
    snapshot_tick: int


@dataclass
class IncidentPlan:
    restarts: list[tuple[int, int, int, int]] = field(default_factory=list)  # (group, host, stop, start)
    stale: list[StalePlan] = field(default_factory=list)
    resets: list[ResetPlan] = field(default_factory=list)
    rewinds: list[RewindPlan] = field(default_factory=list)
    failovers: list[FailoverPlan] = field(default_factory=list)
    pull_groups: list[int] = field(default_factory=list)  # groups consuming by pull (CONSUME_ACTIVELY)
    busy_ticks: dict[int, list[int]] = field(default_factory=dict)  # cluster -> incident ticks


@dataclass(frozen=True)
class Grid:
    """The run's time grid."""

    ticks: int
    step_ms: int
    start_ms: int
    snapshot_ticks: int  # ticks between two snapshots

    def ticks_for(self, millis: int) -> int:
        return math.ceil(millis / self.step_ms)

    def next_snapshot(self, tick: float) -> int:
        return math.ceil(tick / self.snapshot_ticks) * self.snapshot_ticks

    def instant_ms(self, tick: int, rng) -> int:
        """An instant in the first ``INSTANT_MAX_MS`` of ``tick``, before any client commit of it."""
        return self.start_ms + tick * self.step_ms + int(rng.integers(1, INSTANT_MAX_MS + 1))


def _rolling_restart(
    plan: IncidentPlan, grid: Grid, group: int, hosts: int, begin: int
) -> tuple[int, ...] | None:
    """Restart the group's hosts one after the other; the ticks at which they rejoin, or None if it does not fit."""
    spacing, down = grid.ticks_for(RESTART_SPACING_MS), grid.ticks_for(RESTART_DOWN_MS)
    if begin < 1 or begin + (hosts - 1) * spacing + down >= grid.ticks:
        return None
    stops = [begin + host * spacing for host in range(hosts)]
    plan.restarts += [(group, host, stop, stop + down) for host, stop in enumerate(stops)]
    return tuple(stop + down for stop in stops)


def _busy_groups(topology: Topology, cluster: int) -> list[int]:
    """Groups of the cluster that have clients and read a topic with traffic."""
    return [
        g for g, group in enumerate(topology.groups)
        if group.cluster == cluster and group.hosts and topology.topics[group.topic].rate > 0
    ]  # fmt: skip


def plan_incidents(
    spec: SimulationSpec, topology: Topology, ticks: int, step_ms: int, start_ms: int
) -> IncidentPlan:
    """Every incident and client restart of the run, at ticks derived from the spec."""
    rng = generator(spec.seed, "incidents")
    rewind_rng = generator(spec.seed, "rewinds")  # its own stream: the other incidents stay where they were
    grid = Grid(ticks, step_ms, start_ms, int(spec.snapshot_interval / spec.model_step))
    plan = IncidentPlan()
    rounds = spec.incident_rounds if spec.incidents else 0
    window = ticks // max(1, rounds)
    for r in range(rounds):
        for c in range(len(topology.cluster_names)):
            busy = plan.busy_ticks.setdefault(c, [])
            groups = _busy_groups(topology, c)
            shared = [g for g in groups if len(topology.groups[g].hosts) >= 2]
            if shared:
                group = shared[r % len(shared)]
                # The first host rejoins one tick before a snapshot, which then shows the stale offset.
                begin = (
                    grid.next_snapshot(r * window + STALE_AT * window) - 1 - grid.ticks_for(RESTART_DOWN_MS)
                )
                joins = _rolling_restart(plan, grid, group, len(topology.groups[group].hosts), begin)
                if joins:
                    plan.stale.append(StalePlan(f"stale-{c + 1}-{r + 1}", group, joins))
                    busy.append(begin)
            for n, fraction in enumerate(RESETS_AT if groups else ()):
                # Shortly before a snapshot, so that the snapshot still shows the lower offsets.
                tick = max(
                    1,
                    grid.next_snapshot(r * window + fraction * window)
                    - grid.ticks_for(RESET_BEFORE_SNAPSHOT_MS),
                )
                admin_ms = grid.instant_ms(tick, rng)
                reset_to_ms = (admin_ms - min(RESET_BACK_MS, (admin_ms - start_ms) // 2)) // 1000 * 1000
                group = groups[(2 * r + n) % len(groups)]
                plan.resets.append(
                    ResetPlan(f"reset-{c + 1}-{r + 1}{'ab'[n]}", c, group, admin_ms, reset_to_ms)
                )
                busy.append(tick)
            for n, (kind, fraction) in enumerate(
                (("pull_offset_moved", CORRECTION_AT), ("rewind_to_min", REWIND_AT))
            ):
                if not groups:
                    break
                tick = max(1, int(r * window + fraction * window))
                # groups the round's resets leave alone, where there are enough
                group = groups[(2 * r + 2 + n) % len(groups)]
                plan.rewinds.append(
                    RewindPlan(
                        f"{kind.split('_')[0]}-{c + 1}-{r + 1}",
                        kind,
                        group,
                        grid.instant_ms(tick, rewind_rng),
                    )
                )
                busy.append(tick)
            failover = _failover(topology, grid, rng, c, r, r * window + FAILOVER_AT * window)
            if failover is not None:
                plan.failovers.append(failover)
                busy.append(failover.tick)
    _seeks(spec, topology, plan, grid, rounds, window)
    _clean_restarts(spec, topology, plan, grid)
    return plan


def _seeks(
    spec: SimulationSpec, topology: Topology, plan: IncidentPlan, grid: Grid, rounds: int, window: int
) -> None:
    """Each cluster's pull group (the last busy group no stale commit touches: a pull group's
    backward commits are seeks) and a seek of one of its queues per round (their own random
    stream: the other incidents stay where they were)."""
    rng = generator(spec.seed, "seeks")
    stale = {p.group for p in plan.stale}
    for c in range(len(topology.cluster_names)):
        candidates = [g for g in _busy_groups(topology, c) if g not in stale]
        if not rounds or not candidates:
            continue
        group = candidates[-1]
        plan.pull_groups.append(group)
        for r in range(rounds):
            tick = max(1, int(r * window + SEEK_AT * window))
            plan.rewinds.append(
                RewindPlan(f"seek-{c + 1}-{r + 1}", "client_seek", group, grid.instant_ms(tick, rng))
            )
            plan.busy_ticks.setdefault(c, []).append(tick)


def _failover(
    topology: Topology, grid: Grid, rng, cluster: int, round_no: int, target: float
) -> FailoverPlan | None:
    """A 5.x broker of the cluster (any broker when none is 5.x) fails over 15 s before a snapshot."""
    brokers = [b for b in range(len(topology.brokers)) if topology.cluster_of_broker(b) == cluster]
    candidates = [b for b in brokers if topology.brokers[b].is_5x] or brokers
    broker = candidates[round_no % len(candidates)]
    snapshot_tick = grid.next_snapshot(target)
    tick = snapshot_tick - grid.ticks_for(FAILOVER_BEFORE_SNAPSHOT_MS)
    outage = grid.ticks_for(FAILOVER_OUTAGE_MS)
    if tick < 2 or tick + outage >= grid.ticks:
        return None
    sync_ticks = max(1, SLAVE_SYNC_MS[topology.brokers[broker].version[0]] // grid.step_ms)
    lag = min(int(rng.integers(1, sync_ticks + 1)), tick - 1)
    at_ms = grid.instant_ms(tick, rng)
    return FailoverPlan(
        f"failover-{cluster + 1}-{round_no + 1}", broker, tick, at_ms, outage, lag, snapshot_tick
    )


def _clean_restarts(spec: SimulationSpec, topology: Topology, plan: IncidentPlan, grid: Grid) -> None:
    """One rolling restart per multi-client group in runs of two hours or more, away from incidents."""
    if grid.ticks * grid.step_ms < 2 * 3_600_000:
        return
    rng = generator(spec.seed, "clean-restarts")
    margin = grid.ticks_for(15 * 60_000)
    restarted = {g for g, *_ in plan.restarts}
    for g, group in enumerate(topology.groups):
        if len(group.hosts) < 2 or g in restarted:
            continue
        busy = plan.busy_ticks.get(group.cluster, [])
        span = grid.ticks_for(len(group.hosts) * RESTART_SPACING_MS + RESTART_DOWN_MS)
        for _ in range(20):
            begin = int(rng.integers(int(0.05 * grid.ticks), int(0.9 * grid.ticks)))
            if all(begin + span + margin < t or begin > t + margin for t in busy):
                _rolling_restart(plan, grid, g, len(group.hosts), begin)
                break
