"""Every commit the brokers receive, as columns, and the regressions among them.

Columns are numpy arrays of equal length, never a Python object per event: 10M events
take a few hundred MB and a few seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jobs.tools.simulator.effects import KIND_REGULAR, PATH_PULL, PATH_UPDATE, Effects
from jobs.tools.simulator.model import ACTIVITY_FROM_MS, Model, generator

PULL_LATEST_MS = 200  # pull commits end this long before the tick does
JITTER_MS = 40


@dataclass
class Events:
    at_ms: np.ndarray  # int64 epoch milliseconds
    pair: np.ndarray  # int32
    incarnation: np.ndarray  # int32
    offset: np.ndarray  # int64
    path: np.ndarray  # int8: PATH_UPDATE | PATH_PULL
    kind: np.ndarray  # int8: KIND_REGULAR | KIND_STALE | KIND_RESET

    def __len__(self) -> int:
        return len(self.at_ms)

    def take(self, index: np.ndarray) -> Events:
        return Events(
            *(
                getattr(self, name)[index]
                for name in ("at_ms", "pair", "incarnation", "offset", "path", "kind")
            )
        )


def committed_mask(model: Model) -> np.ndarray:
    """Ticks in which a pair's owner commits: it has an owner and its broker is reachable."""
    return (model.owner >= 0) & ~model.outage[model.topology.pair_broker]


def regular_events(model: Model, committed: np.ndarray) -> Events:
    """One persistAll commit per owned pair and tick, plus pull commits at ``pull_commit_ratio``."""
    rng = generator(model.spec.seed, "events")
    pairs, ticks = np.nonzero(committed)
    owners = model.owner[pairs, ticks]
    phase = np.asarray(model.incarnations.phase_ms, dtype=np.int64)
    tick_ms = model.start_ms + ticks.astype(np.int64) * model.step_ms
    update_ms = tick_ms + phase[owners] + rng.integers(0, JITTER_MS, len(pairs))
    offsets = model.consumed[pairs, ticks]
    # The pull request carries the commit offset only when it is above 0.
    pulls = (offsets > 0) & (rng.random(len(pairs)) < model.spec.pull_commit_ratio)
    pull_ms = tick_ms[pulls] + rng.integers(
        ACTIVITY_FROM_MS, model.step_ms - PULL_LATEST_MS, int(pulls.sum())
    )
    count_pull = int(pulls.sum())
    return Events(
        at_ms=np.concatenate([update_ms, pull_ms]),
        pair=np.concatenate([pairs, pairs[pulls]]).astype(np.int32),
        incarnation=np.concatenate([owners, owners[pulls]]).astype(np.int32),
        offset=np.concatenate([offsets, offsets[pulls]]),
        path=np.concatenate(
            [np.full(len(pairs), PATH_UPDATE, np.int8), np.full(count_pull, PATH_PULL, np.int8)]
        ),
        kind=np.full(len(pairs) + count_pull, KIND_REGULAR, np.int8),
    )


def with_incident_events(events: Events, effects: Effects) -> Events:
    """``events`` followed by the commits the incidents add (stale and 4.x reset commits)."""
    if not effects.events:
        return events
    extra = np.array(effects.events, dtype=np.int64)
    return Events(
        at_ms=np.concatenate([events.at_ms, extra[:, 0]]),
        pair=np.concatenate([events.pair, extra[:, 1].astype(np.int32)]),
        incarnation=np.concatenate([events.incarnation, extra[:, 2].astype(np.int32)]),
        offset=np.concatenate([events.offset, extra[:, 3]]),
        path=np.concatenate([events.path, extra[:, 4].astype(np.int8)]),
        kind=np.concatenate([events.kind, extra[:, 5].astype(np.int8)]),
    )


def ordering(*columns: np.ndarray) -> np.ndarray:
    """Indices that sort by the non-negative integer ``columns``, the first column most significant.

    Packs the columns into one int64 key when they fit (one sort instead of several).
    """
    widths = [max(1, int(column.max()).bit_length()) if len(column) else 1 for column in columns]
    if sum(widths) > 63:
        return np.lexsort(columns[::-1])
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column, width in zip(columns, widths):
        key = (key << width) | column.astype(np.int64)
    return np.argsort(key, kind="stable")


def sort_for_writing(model: Model, events: Events) -> Events:
    """Order by broker, then time (then pair, for a stable file layout)."""
    broker = model.topology.pair_broker[events.pair]
    return events.take(ordering(broker, events.at_ms - model.start_ms, events.pair))


def find_regressions(model: Model, events: Events, effects: Effects) -> tuple[np.ndarray, np.ndarray]:
    """Replay with broker semantics: which commits are below the offset stored before them.

    Commits and table changes without a commit (5.x resets, failovers) are replayed per
    pair in time order; returns the indices of the regressing commits in ``events`` and
    the stored offset before each.
    """
    sets = np.array(effects.table_sets, dtype=np.int64).reshape(-1, 3)
    at_ms = np.concatenate([events.at_ms, sets[:, 0]])
    pair = np.concatenate([events.pair.astype(np.int64), sets[:, 1]])
    value = np.concatenate([events.offset, sets[:, 2]])
    is_commit = np.concatenate([np.ones(len(events), bool), np.zeros(len(sets), bool)])
    order = ordering(pair, at_ms - model.start_ms)
    pair, value, is_commit = pair[order], value[order], is_commit[order]
    before = np.empty_like(value)
    before[1:] = value[:-1]
    first = np.ones(len(pair), bool)
    first[1:] = pair[1:] != pair[:-1]
    before[first] = model.consumed_initial[pair[first]]
    regressing = is_commit & (value < before)
    return order[regressing], before[regressing]
