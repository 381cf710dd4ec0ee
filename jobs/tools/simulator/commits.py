"""The commit-event stream: ``commits/<cluster>/<broker>/<yyyy-mm-dd>/<hh>.jsonl[.gz]``.

One JSON object per line in the order of :class:`schemas.records.CommitEvent`, e.g.::

    {"committed_at":"2026-11-21T10:05:00.123Z","broker":"broker-a","client_host":"10.10.1.11:53211",
     "topic":"order-events","consumer_group":"order-service","queue_id":3,"offset":1234567,"path":"update_offset"}

(on one line). Each file holds one broker's commits of one UTC hour, in time order.
"""

from __future__ import annotations

import gzip
import json
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np
import pyarrow as pa

from jobs.tools.simulator.effects import PATHS
from jobs.tools.simulator.events import Events
from jobs.tools.simulator.model import Model
from jobs.tools.simulator.textfmt import as_text, concatenated_bytes, format_instants, join_columns

HOUR_MS = 3_600_000
GZIP_LEVEL = 1  # fast: repetitive JSON still shrinks about 12 times
IN_FLIGHT = 4


def _json(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class CommitLines:
    """Builds the JSON lines (with ``\\n``) of commit events; the static parts are built once."""

    def __init__(self, model: Model):
        topology, inc = model.topology, model.incarnations
        self.brokers = [_json(broker.name) for broker in topology.brokers]
        self.hosts = pa.array(
            [f'","client_host":"{_json(inc.client_host(i))}' for i in range(len(inc.group))]
        )
        topics = [_json(topology.topics[t].name) for t in topology.queue_topic]
        groups = [_json(group.name) for group in topology.groups]
        self.pair_parts = pa.array(
            [
                f'","topic":"{topics[q]}","consumer_group":"{groups[g]}","queue_id":{topology.queue_id[q]},"offset":'
                for q, g in zip(topology.pair_queue, topology.pair_group)
            ]
        )
        self.paths = pa.array([f',"path":"{path}"}}\n' for path in PATHS])

    def render(self, events: Events, broker: int) -> pa.Array:
        """Lines of ``events``, all committed to ``broker``."""
        return join_columns(
            '{"committed_at":"',
            format_instants(events.at_ms, suffix="Z"),
            f'","broker":"{self.brokers[broker]}',
            self.hosts.take(events.incarnation),
            self.pair_parts.take(events.pair),
            as_text(events.offset),
            self.paths.take(events.path),
        )


def _store(path: Path, data: memoryview, compress: bool) -> None:
    path.write_bytes(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0) if compress else data)


def write_commits(model: Model, landing: Path, events: Events) -> int:
    """Write ``events`` (sorted by broker, then time) as hourly files; returns the number of files.

    Compressing and writing run in two threads (zlib and file writes release the GIL)
    while the next hour is rendered; at most ``IN_FLIGHT`` rendered hours wait in memory.
    """
    topology = model.topology
    broker_of = topology.pair_broker[events.pair]
    lines = CommitLines(model)
    suffix = ".jsonl.gz" if model.spec.gzip_commits else ".jsonl"
    pending: list[Future] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for b, broker in enumerate(topology.brokers):
            lo, hi = np.searchsorted(broker_of, [b, b + 1])  # events are grouped by broker
            hours = events.at_ms[lo:hi] // HOUR_MS
            cuts = np.flatnonzero(np.diff(hours)) + 1
            for begin, end in zip(np.r_[0, cuts], np.r_[cuts, hi - lo]) if hi > lo else ():
                stamp = np.datetime64(int(hours[begin]) * 3600, "s").astype(object)
                folder = landing / "commits" / broker.cluster / broker.name / stamp.strftime("%Y-%m-%d")
                folder.mkdir(parents=True, exist_ok=True)
                data = concatenated_bytes(lines.render(events.take(np.arange(lo + begin, lo + end)), b))
                path = folder / f"{stamp.strftime('%H')}{suffix}"
                pending.append(pool.submit(_store, path, data, model.spec.gzip_commits))
                running = [task for task in pending if not task.done()]
                if len(running) >= IN_FLIGHT:
                    wait(running, return_when=FIRST_COMPLETED)
        for task in pending:
            task.result()  # re-raise a failed write
    return len(pending)
