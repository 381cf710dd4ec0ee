"""Apply the planned incidents to the model and describe what each one leaves behind.

Order matters and is fixed by :func:`jobs.tools.simulator.simulate`: resets change what the
clients consume, so they go first; then the stored table is derived; then stale commits
and failovers patch the stored table at their ticks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np

from jobs.tools.simulator.incidents import (
    CLIENT_RESET_DELAY_MS,
    CORRECTION_BACK_MS,
    SEEK_BACK_MS,
    FailoverPlan,
    ResetPlan,
    RewindPlan,
    StalePlan,
)
from jobs.tools.simulator.model import INSTANT_MAX_MS, Model, generator, lag_after, min_offsets
from jobs.tools.simulator.spec import Incident
from jobs.tools.simulator.topology import ADMIN_HOST

KIND_REGULAR, KIND_STALE, KIND_RESET = 0, 1, 2
PATH_UPDATE, PATH_PULL = 0, 1
PATHS = ("update_offset", "pull_piggyback")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Effects:
    records: list[Incident] = field(default_factory=list)
    # (at_ms, pair, incarnation, offset, path, kind): commits the incidents add
    events: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)
    # (at_ms, pair, value): the broker's table changed without a commit
    table_sets: list[tuple[int, int, int]] = field(default_factory=list)
    # (broker, at_ms, level, thread, message)
    broker_lines: list[tuple[int, int, str, str, str]] = field(default_factory=list)
    # (incarnation, at_ms, message)
    client_lines: list[tuple[int, int, str]] = field(default_factory=list)


def _utc(millis: int) -> datetime:
    return EPOCH + timedelta(milliseconds=millis)


def _record(
    model: Model, incident_id: str, kind: str, pair: int, at_ms: int, offset: int, before: int, **extra
) -> Incident:
    topology = model.topology
    broker = topology.brokers[topology.pair_broker[pair]]
    group = topology.groups[topology.pair_group[pair]]
    return Incident(
        incident_id=incident_id,
        kind=kind,
        cluster=broker.cluster,
        broker=broker.name,
        topic=topology.topics[topology.queue_topic[topology.pair_queue[pair]]].name,
        consumer_group=group.name,
        queue_id=int(topology.queue_id[topology.pair_queue[pair]]),
        occurred_at=_utc(at_ms),
        offset=int(offset),
        stored_offset_before=int(before),
        **extra,
    )


def _stored_before(model: Model, changed: np.ndarray, pair: int, tick: int) -> int:
    """The broker's stored offset for ``pair`` when tick ``tick`` begins (before any of its commits)."""
    earlier = np.flatnonzero(changed[pair, :tick])
    return int(model.consumed[pair, earlier[-1]]) if earlier.size else int(model.consumed_initial[pair])


def _restart_consumption(model: Model, max_offset: np.ndarray, pair: int, tick: int, value: int) -> None:
    """From ``tick`` on, the pair consumes from ``value`` (a reset target, at most the max offset)."""
    queue = model.topology.pair_queue[pair]
    lag_at_reset = np.array([max_offset[queue, tick] - value])
    tail = lag_after(
        model.produced[queue, tick + 1 :][None, :], model.capacity[pair, tick + 1 :][None, :], lag_at_reset
    )[0]
    model.consumed[pair, tick] = value
    model.consumed[pair, tick + 1 :] = max_offset[queue, tick + 1 :] - tail


def _reset_log_lines(
    model: Model, plan: ResetPlan, active: list[int], effects: Effects, rng: np.random.Generator
) -> None:
    """Every broker logs who started the reset; a 4.x broker also logs each client it told to reset."""
    topology, inc = model.topology, model.incarnations
    group = topology.groups[plan.group]
    topic = topology.topics[group.topic].name
    thread = f"AdminBrokerThread_{int(rng.integers(1, 17))}"
    for b, broker in enumerate(topology.brokers):
        if topology.cluster_of_broker(b) != plan.cluster:
            continue
        admin = f"{ADMIN_HOST}:{int(rng.integers(40000, 65000))}"
        effects.broker_lines.append((b, plan.admin_ms, "INFO", thread, (
            f"[reset-offset] reset offset started by {admin}. topic={topic}, group={group.name}, "
            f"timestamp={plan.reset_to_ms}, isForce=true")))  # fmt: skip
        if broker.is_5x:
            continue
        for i in active:
            message = f"[reset-offset] reset offset success. topic={topic}, group={group.name}, clientId={inc.client_id(i)}"
            effects.broker_lines.append((b, plan.admin_ms, "INFO", thread, message))
            effects.client_lines.append((i, plan.admin_ms + int(rng.integers(1, 30)), (
                f"invoke reset offset operation from broker. brokerAddr={broker.address}, topic={topic}, "
                f"group={group.name}, timestamp={plan.reset_to_ms}")))  # fmt: skip


def apply_resets(
    model: Model,
    plans: list[ResetPlan],
    max_offset: np.ndarray,
    changed: np.ndarray,
    effects: Effects,
    rewinds: list[RewindPlan] = (),
) -> None:
    """Admin resets to an earlier time, per queue of the group's topic, and the rewinds of one
    queue (:func:`_apply_rewind`), in time order: each changes what the clients consume next.

    A 5.x broker overwrites its table at once (a table change without a commit); a 4.x
    broker asks the clients, and the client holding the queue commits the older offset
    ``CLIENT_RESET_DELAY_MS`` later. Either way the group consumes again from there.
    ``changed`` (pair x tick: the stored offset changed during the tick) is updated.
    """
    rng, rewind_rng = generator(model.spec.seed, "resets"), generator(model.spec.seed, "rewinds")
    seek_rng = generator(model.spec.seed, "seeks")  # its own stream: the other rewinds choose as before
    timed = [(p.admin_ms, 0, p) for p in plans] + [(p.at_ms, 1, p) for p in rewinds]
    for _, kind, plan in sorted(timed, key=lambda item: item[:2]):
        if kind:
            chooser = seek_rng if plan.kind == "client_seek" else rewind_rng
            _apply_rewind(model, plan, max_offset, changed, effects, chooser)
        else:
            _apply_reset(model, plan, max_offset, changed, effects, rng)


def _apply_reset(
    model: Model, plan: ResetPlan, max_offset: np.ndarray, changed: np.ndarray, effects: Effects, rng
) -> None:
    topology, inc = model.topology, model.incarnations
    delay_ticks = math.ceil(CLIENT_RESET_DELAY_MS / model.step_ms)
    admin_tick, target_tick = model.tick_of(plan.admin_ms), model.tick_of(plan.reset_to_ms)
    active = [
        i
        for i, g in enumerate(inc.group)
        if g == plan.group and inc.start_tick[i] <= admin_tick < inc.end_tick[i]
    ]
    _reset_log_lines(model, plan, active, effects, rng)
    topic = topology.groups[plan.group].topic
    commit_ms = model.tick_ms(admin_tick + delay_ticks) + int(rng.integers(1, INSTANT_MAX_MS + 1))
    for p in np.flatnonzero(
        (topology.pair_group == plan.group) & (topology.queue_topic[topology.pair_queue] == topic)
    ):
        p = int(p)
        value = int(max_offset[topology.pair_queue[p], target_tick])
        if topology.brokers[topology.pair_broker[p]].is_5x:
            tick, at_ms, kind = admin_tick, plan.admin_ms, "server_reset"
            before = _stored_before(model, changed, p, tick)
            effects.table_sets.append((at_ms, p, value))
            changed[p, tick] = True
            extra = {"has_notifyme": False}
        else:
            tick, at_ms, kind = admin_tick + delay_ticks, commit_ms, "client_reset"
            owner = int(model.owner[p, tick]) if tick < model.ticks else -1
            if owner < 0 or not changed[p, tick]:
                continue  # no client holds the queue: nobody resets it
            before = _stored_before(model, changed, p, tick)
            effects.events.append((at_ms, p, owner, value, PATH_UPDATE, KIND_RESET))
            extra = {
                "has_notifyme": value < before,
                "client_host": inc.client_host(owner),
                "commit_path": PATHS[PATH_UPDATE],
            }
        _restart_consumption(model, max_offset, p, tick, value)
        if value < before:
            effects.records.append(_record(model, plan.incident_id, kind, p, at_ms, value, before, **extra))


def _apply_rewind(
    model: Model, plan: RewindPlan, max_offset: np.ndarray, changed: np.ndarray, effects: Effects, rng
) -> None:
    """The client holding one queue of the group commits an older offset (``increaseOnly=false``)
    and consumes from it: the broker's ``PULL_OFFSET_MOVED`` correction to where the queue was
    ``CORRECTION_BACK_MS`` earlier (logged by the broker first), the queue's min offset, or a
    pull client's own seek to where the queue was ``SEEK_BACK_MS`` earlier (nothing logged)."""
    topology, inc = model.topology, model.incarnations
    tick = model.tick_of(plan.at_ms)
    topic = topology.groups[plan.group].topic
    pairs = np.flatnonzero(
        (topology.pair_group == plan.group) & (topology.queue_topic[topology.pair_queue] == topic)
    )
    queues = topology.pair_queue[pairs]
    if plan.kind == "rewind_to_min":
        targets = min_offsets(topology, model.max_offset_initial)[queues]
    else:
        back = SEEK_BACK_MS if plan.kind == "client_seek" else CORRECTION_BACK_MS
        targets = max_offset[queues, max(0, tick - math.ceil(back / model.step_ms))]
    before = np.array([_stored_before(model, changed, int(p), tick) for p in pairs], dtype=np.int64)
    held = (model.owner[pairs, tick] >= 0) & changed[pairs, tick] & (targets < before)
    if not held.any():
        return
    chosen = int(rng.choice(np.flatnonzero(held)))
    p, value, stored = int(pairs[chosen]), int(targets[chosen]), int(before[chosen])
    owner = int(model.owner[p, tick])
    if plan.kind == "pull_offset_moved":
        group = topology.groups[plan.group]
        message = (
            f"PULL_OFFSET_MOVED:correction offset. topic={topology.topics[topic].name}, groupId={group.name}, "
            f"requestOffset={stored}, newOffset={value}, suggestBrokerId=0"
        )
        thread = f"PullMessageThread_{int(rng.integers(1, 49))}"
        effects.broker_lines.append((int(topology.pair_broker[p]), plan.at_ms, "WARN", thread, message))
    effects.events.append((plan.at_ms, p, owner, value, PATH_UPDATE, KIND_RESET))
    _restart_consumption(model, max_offset, p, tick, value)
    effects.records.append(
        _record(model, plan.incident_id, plan.kind, p, plan.at_ms, value, stored, has_notifyme=True,
                client_host=inc.client_host(owner), commit_path=PATHS[PATH_UPDATE])
    )  # fmt: skip


def apply_stale(model: Model, plans: list[StalePlan], changed: np.ndarray, effects: Effects) -> None:
    """At a rejoin, the previous owner of a moved queue commits its older offset after the new owner."""
    rng = generator(model.spec.seed, "stale")
    topology, inc = model.topology, model.incarnations
    for plan in plans:
        group = topology.groups[plan.group]
        topic_of_pair = topology.queue_topic[topology.pair_queue]
        pairs = np.flatnonzero((topology.pair_group == plan.group) & (topic_of_pair == group.topic))
        for tick in plan.joins:
            before_owner, after_owner = model.owner[pairs, tick - 1], model.owner[pairs, tick]
            alive = np.array([o >= 0 and inc.end_tick[o] > tick for o in before_owner])
            moved = (after_owner >= 0) & (before_owner != after_owner) & alive
            moved &= changed[pairs, tick - 1] & changed[pairs, tick]
            moved &= model.consumed[pairs, tick] > model.consumed[pairs, tick - 1]
            if not moved.any():
                continue
            p = int(rng.choice(pairs[moved]))
            stale_from, value = int(model.owner[p, tick - 1]), int(model.consumed[p, tick - 1])
            before = int(model.consumed[p, tick])
            at_ms = model.tick_ms(tick) + model.step_ms - int(rng.integers(20, 101))
            path = int(rng.integers(0, 2))
            effects.events.append((at_ms, p, stale_from, value, path, KIND_STALE))
            model.stored_end[p, tick] = value
            effects.records.append(_record(model, plan.incident_id, "stale_commit", p, at_ms, value, before,
                has_notifyme=True, client_host=inc.client_host(stale_from), commit_path=PATHS[path]))  # fmt: skip
            break


def apply_failovers(model: Model, plans: list[FailoverPlan], effects: Effects) -> None:
    """The slave's older table becomes the broker's table until clients commit again."""
    topology = model.topology
    snapshot_ms = (
        model.start_ms + np.array([plan.snapshot_tick for plan in plans], dtype=np.int64) * model.step_ms
    )
    for plan, visible_ms in zip(plans, snapshot_ms):
        broker = topology.brokers[plan.broker]
        pairs = np.flatnonzero(topology.pair_broker == plan.broker)
        before = model.stored_end[pairs, plan.tick - 1]
        sync_tick = plan.tick - plan.sync_lag_ticks
        slave = model.stored_end[pairs, sync_tick - 1] if sync_tick >= 1 else model.consumed_initial[pairs]
        model.stored_end[pairs, plan.tick : plan.tick + plan.outage_ticks] = slave[:, None]
        for p, old, new in zip(pairs, before, slave):
            effects.table_sets.append((plan.at_ms, int(p), int(new)))
            if new < old:
                effects.records.append(_record(model, plan.incident_id, "failover", int(p), plan.at_ms, new, old,
                    has_notifyme=False, visible_in_snapshot_at=_utc(int(visible_ms))))  # fmt: skip
        message = (
            f"Begin to change to master, brokerName:{broker.name}, replicas:{broker.slave_address}, new Epoch:2"
            if broker.is_5x
            else f"Begin to change to master brokerName={broker.name}"
        )
        effects.broker_lines.append((plan.broker, plan.at_ms + 2000, "INFO", "RoleChangeHandler_1", message))


def mark_visibility(model: Model, records: list[Incident], snapshot_ticks: np.ndarray) -> list[Incident]:
    """Fill ``visible_in_snapshot_at``: the first snapshot after the incident, when it still shows the lower offset."""
    topology = model.topology
    key_to_pair = {
        (topology.brokers[topology.pair_broker[p]].cluster, topology.brokers[topology.pair_broker[p]].name, topology.key(p),
         int(topology.queue_id[topology.pair_queue[p]])): p
        for p in range(len(topology.pair_queue))
    }  # fmt: skip
    marked = []
    for record in records:
        if record.visible_in_snapshot_at is not None:
            marked.append(record)
            continue
        at_ms = int(record.occurred_at.timestamp() * 1000)
        later = snapshot_ticks[model.start_ms + snapshot_ticks * model.step_ms > at_ms]
        pair = key_to_pair[
            (record.cluster, record.broker, f"{record.topic}@{record.consumer_group}", record.queue_id)
        ]
        if later.size and model.stored_at_tick_start(int(later[0]))[pair] < record.stored_offset_before:
            marked.append(
                record.model_copy(update={"visible_in_snapshot_at": _utc(int(model.tick_ms(int(later[0]))))})
            )
        else:
            marked.append(record)
    return marked
