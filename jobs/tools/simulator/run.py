"""Build a whole simulated run in memory: the model, its incidents and its commit events."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jobs.tools.simulator.effects import Effects, apply_failovers, apply_resets, apply_stale
from jobs.tools.simulator.events import (
    Events,
    committed_mask,
    find_regressions,
    regular_events,
    with_incident_events,
)
from jobs.tools.simulator.incidents import IncidentPlan, plan_incidents
from jobs.tools.simulator.model import (
    Model,
    assign_owners,
    capacity,
    forward_fill_stored,
    generator,
    initial_lag,
    lag_after,
    production,
    schedule_clients,
)
from jobs.tools.simulator.spec import SimulationSpec
from jobs.tools.simulator.topology import build_topology


class SimulationError(RuntimeError):
    """The simulated run contradicts itself; the message says where."""


@dataclass
class Run:
    model: Model
    plan: IncidentPlan
    effects: Effects
    max_offset: np.ndarray  # [queue, tick]
    committed: np.ndarray  # [pair, tick]: the owner committed during the tick
    events: Events | None  # unsorted; None when commits are not written
    regressing: np.ndarray  # indices into events of commits below the stored offset
    stored_before: np.ndarray  # the stored offset before each of them


def build_run(spec: SimulationSpec) -> Run:
    """Everything :func:`jobs.tools.simulator.simulate` writes, before it is written."""
    step_ms = int(spec.model_step.total_seconds() * 1000)
    ticks = int(spec.duration / spec.model_step)
    start_ms = int(spec.start.timestamp() * 1000)
    topology = build_topology(spec, generator(spec.seed, "topology"))
    plan = plan_incidents(spec, topology, ticks, step_ms, start_ms)
    incarnations = schedule_clients(topology, plan.restarts, ticks, step_ms, spec.seed)
    owner = assign_owners(topology, incarnations, ticks)
    outage = np.zeros((len(topology.brokers), ticks), dtype=bool)
    for failover in plan.failovers:
        outage[failover.broker, failover.tick : failover.tick + failover.outage_ticks] = True
    produced, max_offset_initial = production(spec, topology, start_ms, step_ms, ticks)
    produced[outage[topology.queue_broker]] = 0  # producers send to the other brokers meanwhile
    cap = capacity(spec, topology, owner, step_ms, outage)
    lag_initial = initial_lag(spec, topology, max_offset_initial)
    max_offset = max_offset_initial[:, None] + np.cumsum(produced, axis=1)
    consumed = max_offset[topology.pair_queue] - lag_after(produced[topology.pair_queue], cap, lag_initial)
    model = Model(
        spec=spec,
        topology=topology,
        start_ms=start_ms,
        step_ms=step_ms,
        ticks=ticks,
        incarnations=incarnations,
        owner=owner,
        produced=produced,
        max_offset_initial=max_offset_initial,
        consumed=consumed,
        consumed_initial=max_offset_initial[topology.pair_queue] - lag_initial,
        capacity=cap,
        outage=outage,
    )
    committed = committed_mask(model)
    changed = committed.copy()
    effects = Effects()
    apply_resets(model, plan.resets, max_offset, changed, effects, plan.rewinds)
    model.stored_end = forward_fill_stored(model.consumed, changed, model.consumed_initial)
    apply_stale(model, plan.stale, committed, effects)
    apply_failovers(model, plan.failovers, effects)
    events, regressing, before = None, np.empty(0, np.int64), np.empty(0, np.int64)
    if spec.write_commits:
        events = with_incident_events(regular_events(model, committed), effects)
        regressing, before = find_regressions(model, events, effects)
        _check_regressions(model, events, regressing, effects)
    return Run(model, plan, effects, max_offset, committed, events, regressing, before)


def _check_regressions(model: Model, events: Events, regressing: np.ndarray, effects: Effects) -> None:
    """Every commit below the stored offset must be an injected incident, and the reverse."""
    topology = model.topology
    found = {
        (topology.brokers[topology.pair_broker[events.pair[i]]].name, topology.key(int(events.pair[i])),
         int(topology.queue_id[topology.pair_queue[events.pair[i]]]), int(events.at_ms[i]), int(events.offset[i]))
        for i in regressing.tolist()
    }  # fmt: skip
    injected = {
        (
            r.broker,
            f"{r.topic}@{r.consumer_group}",
            r.queue_id,
            round(r.occurred_at.timestamp() * 1000),
            r.offset,
        )
        for r in effects.records
        if r.has_notifyme
    }
    if found != injected:
        raise SimulationError(
            "commit regressions differ from the injected incidents: "
            f"unexpected {sorted(found - injected)[:5]}, missing {sorted(injected - found)[:5]}"
        )
