"""``mqadmin consumerConnection -g <group>`` outputs: who was in each group at each progress time.

Saved beside the consumerProgress outputs (``progress/<cluster>/<time>/consumerConnection-<group>.txt``),
in the layout of the cluster's newest broker version's tools. A group's members at a tick are
its client incarnations running then (a host restarting is away, and comes back with a new
port and pid); an abandoned group, or one whose hosts are all away, is "not online".
"""

from __future__ import annotations

from pathlib import Path

from jobs.tools.simulator.model import Model
from jobs.tools.simulator.textfmt import iso_second
from pipelines.ingest.consumer_connection import (
    ConnectionClient,
    ConnectionDocument,
    render_consumer_connection,
)
from schemas.records import PULL, PUSH

CLIENT_VERSION = {"4": "V4_9_7", "5": "V5_3_2"}


def _document(model: Model, group: int, tick: int, layout: str, pull: bool) -> ConnectionDocument:
    topology, inc = model.topology, model.incarnations
    spec = topology.groups[group]
    members = [
        i for i, g in enumerate(inc.group) if g == group and inc.start_tick[i] <= tick < inc.end_tick[i]
    ]
    topics = [topology.topics[spec.topic].name]
    if spec.retry_topic is not None:
        topics.append(topology.topics[spec.retry_topic].name)
    clients = tuple(
        ConnectionClient(0, inc.client_id(i), inc.client_host(i), "JAVA", CLIENT_VERSION[layout])
        for i in members
    )
    return ConnectionDocument(
        consumer_group=spec.name,
        clients=clients,
        topics=tuple(topics),
        consume_type=PULL if pull else PUSH,
        message_model="CLUSTERING",
        consume_from_where="CONSUME_FROM_LAST_OFFSET",
        is_online=bool(clients),
        rejected=(),
    )


def write_connections(model: Model, landing: Path, pull_groups: list[int]) -> int:
    """Every group's consumerConnection output at every progress time (``pull_groups`` consume
    by pull, the others by push); returns the file count."""
    spec, topology = model.spec, model.topology
    if spec.progress_interval is None:
        return 0
    every = int(spec.progress_interval / spec.model_step)
    layouts = {
        c: "5" if any(b.is_5x for b in topology.brokers if b.cluster == cluster) else "4"
        for c, cluster in enumerate(topology.cluster_names)
    }
    files = 0
    for tick in range(0, model.ticks, every):
        folder_name = iso_second(int(model.tick_ms(tick)))
        for g, group in enumerate(topology.groups):
            layout = layouts[group.cluster]
            text = render_consumer_connection(_document(model, g, tick, layout, g in pull_groups), layout)
            folder = landing / "progress" / topology.cluster_names[group.cluster] / folder_name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"consumerConnection-{group.name}.txt").write_bytes(text.encode())
            files += 1
    return files
