"""``mqadmin consumerProgress -g <group>`` and ``mqadmin topicStatus -t <topic>`` output (5.x layouts).

The column layout is the printf format of RocketMQ's ConsumerProgressSubCommand and
TopicStatusSubCommand: topic names cut to 64 characters, broker names to 32; times in
the admin host's zone (UTC here). Written to
``progress/<cluster>/<observed time>/consumerProgress-<group>.txt`` and ``topicStatus-<topic>.txt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

from jobs.tools.simulator.model import Model, min_offsets
from jobs.tools.simulator.textfmt import format_instants, iso_second

PROGRESS_HEADER = (
    "#Topic",
    "#Broker Name",
    "#QID",
    "#Broker Offset",
    "#Consumer Offset",
    "#Diff",
    "#Inflight",
    "#LastTime",
)
STATUS_HEADER = ("#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated")
MAX_PAST_MS = 30 * 86_400_000


@dataclass(frozen=True)
class ProgressRow:
    topic: str
    broker: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    inflight: int
    last_time: str  # "N/A" when nothing was consumed


@dataclass(frozen=True)
class StatusRow:
    broker: str
    queue_id: int
    min_offset: int
    max_offset: int
    last_updated: str  # "" when the queue never had a message


def java_fixed2(value: float) -> str:
    """Java's ``%.2f``: the shortest decimal of the double, rounded half up."""
    return str(Decimal(repr(float(value))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def render_consumer_progress(rows: Sequence[ProgressRow], consume_tps: float) -> str:
    """Rows sorted as MessageQueue sorts (topic, broker, queue id), then the three totals."""
    out = ["%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s%s\n" % PROGRESS_HEADER]
    for row in sorted(rows, key=lambda r: (r.topic, r.broker, r.queue_id)):
        diff = row.broker_offset - row.consumer_offset
        out.append(
            "%-64s  %-32s  %-4d  %-20d  %-20d  %-20d %-20d %s\n"
            % (
                row.topic[:64],
                row.broker[:32],
                row.queue_id,
                row.broker_offset,
                row.consumer_offset,
                diff,
                row.inflight,
                row.last_time,
            )
        )
    diff_total = sum(r.broker_offset - r.consumer_offset for r in rows)
    inflight_total = sum(r.inflight for r in rows)
    out.append(f"\nConsume TPS: {java_fixed2(consume_tps)}\n")
    out.append(f"Consume Diff Total: {diff_total}\nConsume Inflight Total: {inflight_total}\n")
    return "".join(out)


def render_topic_status(rows: Sequence[StatusRow], put_tps: float) -> str:
    """Rows sorted by broker and queue id; ``Topic Put TPS`` printed as Java prints a double."""
    out = ["%-32s  %-4s  %-20s  %-20s    %s\n" % STATUS_HEADER]
    for row in sorted(rows, key=lambda r: (r.broker, r.queue_id)):
        cells = (row.broker[:32], row.queue_id, row.min_offset, row.max_offset, row.last_updated)
        out.append("%-32s  %-4d  %-20d  %-20d    %s\n" % cells)
    out.append(f"\nTopic Put TPS: {float(put_tps)!r}\n")
    return "".join(out)


def _admin_times(millis: np.ndarray, with_millis: bool) -> list[str]:
    return format_instants(millis, date_time_sep=" ", fraction_sep="," if with_millis else None).to_pylist()


class QueueHistory:
    """When each message of a queue was stored, from the model's max offsets."""

    def __init__(self, model: Model, max_offset: np.ndarray):
        self.model, self.max_offset = model, max_offset
        self.rate = model.topology.queue_rate()
        self.min_offset = min_offsets(model.topology, model.max_offset_initial)
        # Rows are non-decreasing, so shifting row q by q << 40 makes one sorted array of all.
        self._flat = ((np.arange(len(max_offset), dtype=np.int64) << 40)[:, None] + max_offset).ravel()

    def stored_ms(self, queues: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Store time of message ``offsets[i]`` of queue ``queues[i]`` (each must exist)."""
        model = self.model
        initial = model.max_offset_initial[queues]
        back = np.minimum((initial - offsets) * 1000 / np.maximum(self.rate[queues], 0.001), MAX_PAST_MS)
        found = np.searchsorted(self._flat, (queues.astype(np.int64) << 40) + offsets + 1, side="left")
        tick = found - queues.astype(np.int64) * model.ticks
        during = model.start_ms + tick * model.step_ms - 1 - (offsets * 7919) % (model.step_ms - 1)
        return np.where(offsets < initial, model.start_ms - back.astype(np.int64) - 1, during)


def write_progress(model: Model, landing: Path, max_offset: np.ndarray) -> int:
    """Both reports for every group and topic of every cluster at every progress time; returns the file count."""
    spec, topology = model.spec, model.topology
    if spec.progress_interval is None:
        return 0
    history = QueueHistory(model, max_offset)
    every, minute = int(spec.progress_interval / spec.model_step), max(1, 60_000 // model.step_ms)
    names = _Names(model)
    files = 0
    for tick in range(0, model.ticks, every):
        folder_name = iso_second(int(model.tick_ms(tick)))
        progress = _progress_rows(model, history, names, tick)
        stored, earlier = model.stored_at_tick_start(tick), model.stored_at_tick_start(tick - minute)
        status = _status_rows(model, history, names, tick)
        for g, group in enumerate(topology.groups):
            pairs = names.group_pairs[g]
            tps = float(np.maximum(stored[pairs] - earlier[pairs], 0).sum()) / (minute * model.step_ms / 1000)
            text = render_consumer_progress([progress[p] for p in pairs], tps)
            cluster = topology.cluster_names[group.cluster]
            files += _write(
                landing / "progress" / cluster / folder_name, f"consumerProgress-{group.name}.txt", text
            )
        for t, queues in names.topic_queues.items():
            topic = topology.topics[t]
            produced = model.produced[queues, max(0, tick - minute + 1) : tick + 1].sum()
            text = render_topic_status(
                [status[q] for q in queues], float(produced) / (minute * model.step_ms / 1000)
            )
            cluster = topology.cluster_names[topic.cluster]
            files += _write(
                landing / "progress" / cluster / folder_name, f"topicStatus-{topic.name}.txt", text
            )
    return files


def _write(folder: Path, name: str, text: str) -> int:
    if not folder.is_dir():
        folder.mkdir(parents=True)
    (folder / name).write_bytes(text.encode())
    return 1


class _Names:
    """Static names and the pairs of each group, the queues of each (non-retry) topic."""

    def __init__(self, model: Model):
        topology = model.topology
        self.topic = [topology.topics[t].name for t in topology.queue_topic]
        self.broker = [topology.brokers[b].name for b in topology.queue_broker]
        self.group_pairs = [np.flatnonzero(topology.pair_group == g) for g in range(len(topology.groups))]
        self.topic_queues = {
            t: np.flatnonzero(topology.queue_topic == t)
            for t, topic in enumerate(topology.topics)
            if topic.pattern != "retry"
        }


def _progress_rows(model: Model, history: QueueHistory, names: _Names, tick: int) -> list[ProgressRow]:
    topology = model.topology
    queues = topology.pair_queue
    consumer = model.stored_at_tick_start(tick)
    broker_offset = history.max_offset[queues, tick]
    diff = broker_offset - consumer
    holder = model.owner[:, max(0, tick - 1)]
    pair = np.arange(len(queues))
    inflight = np.where((holder >= 0) & (diff > 0), np.minimum(diff, 1 + (pair * 131 + tick * 17) % 64), 0)
    consumed = consumer > 0
    last = np.full(len(queues), "N/A", dtype=object)
    last[consumed] = _admin_times(
        history.stored_ms(queues[consumed], consumer[consumed] - 1), with_millis=False
    )
    return [
        ProgressRow(names.topic[q], names.broker[q], int(topology.queue_id[q]), int(b), int(c), int(i), s)
        for q, b, c, i, s in zip(
            queues.tolist(), broker_offset.tolist(), consumer.tolist(), inflight.tolist(), last.tolist()
        )
    ]


def _status_rows(model: Model, history: QueueHistory, names: _Names, tick: int) -> list[StatusRow]:
    topology = model.topology
    queues = np.arange(len(topology.queue_topic))
    max_offset = history.max_offset[:, tick]
    stored = max_offset > 0
    last = np.full(len(queues), "", dtype=object)
    last[stored] = _admin_times(history.stored_ms(queues[stored], max_offset[stored] - 1), with_millis=True)
    return [
        StatusRow(names.broker[q], int(topology.queue_id[q]), int(m), int(x), s)
        for q, m, x, s in zip(
            queues.tolist(), history.min_offset.tolist(), max_offset.tolist(), last.tolist()
        )
    ]
