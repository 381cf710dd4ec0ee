"""``consumerOffset.json`` exactly as a broker's fastjson pretty format writes it.

4.x (one field)::

    {
    \t"offsetTable":{
    \t\t"TopicTest@group_a":{0:543,1:543
    \t\t}
    \t}
    }

5.x adds ``dataVersion`` and ``groupTopicMap`` before it (fields in alphabetical order).
TAB indent, bare integer queue keys, the inner map's ``}`` on its own line, no trailing
newline; keys in Java hash order (see :mod:`jobs.tools.simulator.javaorder`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jobs.tools.simulator.javaorder import hash_order_ints, hash_order_strings
from jobs.tools.simulator.model import Model, generator
from jobs.tools.simulator.textfmt import iso_second

VERSION_STEP = 500  # 5.x moves dataVersion once per this many commits


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _java_split(key: str) -> list[str]:
    parts = key.split("@")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def render_group_topic_map(keys: Sequence[str]) -> str:
    """5.x ``groupTopicMap``: group -> topics of the two-part keys, in HashMap/HashSet order."""
    topics_of: dict[str, list[str]] = {}
    for key in keys:
        parts = _java_split(key)
        if len(parts) == 2:
            topics = topics_of.setdefault(parts[1], [])
            if parts[0] not in topics:
                topics.append(parts[0])
    if not topics_of:
        return "{}"
    groups = hash_order_strings(topics_of, initial=128, concurrent=False)
    rows = []
    for group in groups:
        topics = hash_order_strings(topics_of[group], initial=8, concurrent=False)
        rows.append(f"\t\t{_quoted(group)}:[{','.join(_quoted(t) for t in topics)}]")
    return "{\n" + ",\n".join(rows) + "\n\t}"


def render_offset_table(
    entries: Sequence[tuple[str, Sequence[tuple[int, int]]]], data_version: tuple[int, int] | None = None
) -> str:
    """A whole ``consumerOffset.json``.

    ``entries`` are (key, [(queue id, offset)]) in table order; ``data_version`` is
    (counter, timestamp) for the 5.x shape, None for the 4.x shape.
    """
    if entries:
        rows = [
            f"\t\t{_quoted(key)}:{{{','.join(f'{q}:{v}' for q, v in queues)}\n\t\t}}"
            for key, queues in entries
        ]
        table = "{\n" + ",\n".join(rows) + "\n\t}"
    else:
        table = "{}"
    if data_version is None:
        return '{\n\t"offsetTable":' + table + "\n}"
    counter, timestamp = data_version
    return (
        '{\n\t"dataVersion":{\n'
        f'\t\t"counter":{counter},\n\t\t"stateVersion":0,\n\t\t"timestamp":{timestamp}\n\t}},\n'
        f'\t"groupTopicMap":{render_group_topic_map([key for key, _ in entries])},\n'
        f'\t"offsetTable":{table}\n}}'
    )


class BrokerTableLayout:
    """One broker's keys and queues in table order, and where each value comes from."""

    def __init__(self, model: Model, broker: int):
        topology = model.topology
        pairs_by_key: dict[str, dict[int, int]] = {}
        for p in np.flatnonzero(topology.pair_broker == broker):
            pairs_by_key.setdefault(topology.key(int(p)), {})[
                int(topology.queue_id[topology.pair_queue[p]])
            ] = int(p)
        static = {key: values for b, key, values in topology.static_entries if b == broker}
        self.entries: list[tuple[str, list[int], list[int] | None, list[int] | None]] = []
        for key in hash_order_strings([*static, *pairs_by_key]):
            source = static.get(key) or pairs_by_key[key]
            queues = hash_order_ints(source)
            if key in static:
                self.entries.append((key, queues, None, [static[key][q] for q in queues]))
            else:
                self.entries.append((key, queues, [pairs_by_key[key][q] for q in queues], None))

    def render(self, stored: np.ndarray, data_version: tuple[int, int] | None) -> str:
        rows = []
        for key, queues, pairs, fixed in self.entries:
            values = fixed if fixed is not None else stored[pairs].tolist()
            rows.append((key, list(zip(queues, values))))
        return render_offset_table(rows, data_version)


class DataVersionClock:
    """5.x ``dataVersion``: counter + 1 and timestamp = now on every 500th commit since the broker started."""

    def __init__(self, model: Model, broker: int, commit_ms: np.ndarray | None, committed: np.ndarray):
        rng = generator(model.spec.seed, f"data-version-{broker}")
        self.counter0 = int(rng.integers(0, 5000))
        self.timestamp0 = model.start_ms - int(rng.integers(3_600_000, 72 * 3_600_000))
        if commit_ms is None:  # no commit stream: count one commit per owned pair and tick
            per_tick = committed[model.topology.pair_broker == broker].sum(axis=0)
            ticks = np.repeat(np.arange(model.ticks), per_tick)
            commit_ms = model.start_ms + ticks.astype(np.int64) * model.step_ms + model.step_ms // 2
        self.commit_ms = commit_ms

    def at(self, millis: int) -> tuple[int, int]:
        """(counter, timestamp) as of ``millis`` (commits strictly later are not counted)."""
        seen = int(np.searchsorted(self.commit_ms, millis, side="right"))
        steps = seen // VERSION_STEP
        if steps == 0:
            return self.counter0, self.timestamp0
        return self.counter0 + steps, int(self.commit_ms[steps * VERSION_STEP - 1])


def write_snapshots(
    model: Model, landing: Path, commit_ms_by_broker: dict[int, np.ndarray] | None, committed: np.ndarray
) -> tuple[int, int]:
    """Every broker's table at every snapshot time (and sometimes its ``.bak``); returns (files, bak files)."""
    spec = model.spec
    every = int(spec.snapshot_interval / spec.model_step)
    files = baks = 0
    for b, broker in enumerate(model.topology.brokers):
        layout = BrokerTableLayout(model, b)
        clock = None
        if broker.is_5x:
            commit_ms = None if commit_ms_by_broker is None else commit_ms_by_broker[b]
            clock = DataVersionClock(model, b, commit_ms, committed)
        for n, tick in enumerate(range(0, model.ticks, every)):
            at_ms = int(model.tick_ms(tick))
            folder = landing / "snapshots" / broker.cluster / broker.name / iso_second(at_ms)
            folder.mkdir(parents=True, exist_ok=True)
            version = clock.at(at_ms) if clock else None
            (folder / "consumerOffset.json").write_bytes(
                layout.render(model.stored_at_tick_start(tick), version).encode()
            )
            files += 1
            if spec.bak_every and n % spec.bak_every == spec.bak_every - 1 and tick >= 1:
                previous_ms = int(model.tick_ms(tick - 1))
                bak = layout.render(
                    model.stored_at_tick_start(tick - 1), clock.at(previous_ms) if clock else None
                )
                (folder / "consumerOffset.json.bak").write_bytes(bak.encode())
                baks += 1
    return files, baks
