"""A simulated RocketMQ estate that writes a landing directory in the real file formats.

:func:`simulate` models clusters of 4.x and 5.x brokers, producers, consumer groups
whose clients share queues and commit every 5 s, and injects regressions at known
times (stale commits after a rebalance, admin resets, failovers to a slave, a pull client's seek). It writes::

    <landing>/snapshots/<cluster>/<broker>/<time>/consumerOffset.json[.bak]
    <landing>/commits/<cluster>/<broker>/<yyyy-mm-dd>/<hh>.jsonl[.gz]
    <landing>/progress/<cluster>/<time>/consumerProgress-<group>.txt, topicStatus-<topic>.txt,
                                        consumerConnection-<group>.txt
    <landing>/broker_logs/<cluster>/<broker>/broker.log
    <landing>/client_logs/<cluster>/<client ip>/rocketmq_client.log
    <landing>/_simulation_manifest.json

The same spec and seed always give byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jobs.tools.simulator.commits import write_commits
from jobs.tools.simulator.connections import write_connections
from jobs.tools.simulator.effects import PATHS, mark_visibility
from jobs.tools.simulator.events import sort_for_writing
from jobs.tools.simulator.logs import notifyme_lines, write_broker_logs, write_client_logs
from jobs.tools.simulator.progress import write_progress
from jobs.tools.simulator.run import Run, SimulationError, build_run
from jobs.tools.simulator.snapshots import write_snapshots
from jobs.tools.simulator.spec import BrokerInfo, Incident, SimulationManifest, SimulationSpec

MANIFEST_NAME = "_simulation_manifest.json"

__all__ = ["MANIFEST_NAME", "Incident", "SimulationError", "SimulationManifest", "SimulationSpec", "simulate"]


def simulate(spec: SimulationSpec, landing: Path) -> SimulationManifest:
    """Write one simulated run under ``landing`` (created if missing) and return its manifest.

    Existing files with the same names are overwritten; nothing else is removed.
    """
    landing = Path(landing)
    landing.mkdir(parents=True, exist_ok=True)
    run = build_run(spec)
    model = run.model
    commit_files, commit_ms_by_broker, by_path, notify = 0, None, {}, []
    if run.events is not None:
        notify = notifyme_lines(model, run.events, run.regressing, run.stored_before)
        ordered = sort_for_writing(model, run.events)
        commit_files = write_commits(model, landing, ordered)
        commit_ms_by_broker = _times_by_broker(run, ordered)
        by_path = {PATHS[p]: int(n) for p, n in enumerate(np.bincount(ordered.path, minlength=len(PATHS)))}
    snapshot_files, bak_files = write_snapshots(model, landing, commit_ms_by_broker, run.committed)
    progress_files = write_progress(model, landing, run.max_offset)
    connection_files = write_connections(model, landing, run.plan.pull_groups)
    broker_logs = write_broker_logs(model, landing, run.effects.broker_lines + notify)
    client_logs = (
        write_client_logs(model, landing, run.events, run.effects.client_lines)
        if run.events is not None
        else 0
    )
    snapshot_ticks = np.arange(0, model.ticks, int(spec.snapshot_interval / spec.model_step))
    incidents = mark_visibility(model, run.effects.records, snapshot_ticks)
    incidents.sort(key=lambda i: (i.occurred_at, i.cluster, i.broker, i.topic, i.consumer_group, i.queue_id))
    manifest = SimulationManifest(
        spec=spec,
        brokers=[
            BrokerInfo(cluster=b.cluster, broker=b.name, version=b.version, address=b.address)
            for b in model.topology.brokers
        ],
        commit_events=sum(by_path.values()),
        commit_events_by_path=by_path,
        commit_files=commit_files,
        snapshot_files=snapshot_files,
        snapshot_bak_files=bak_files,
        progress_files=progress_files,
        connection_files=connection_files,
        broker_log_files=broker_logs,
        notifyme_lines=len(notify),
        client_log_files=client_logs,
        incidents=incidents,
    )
    (landing / MANIFEST_NAME).write_bytes(manifest.model_dump_json(indent=2).encode())
    return manifest


def _times_by_broker(run: Run, ordered) -> dict[int, np.ndarray]:
    broker_of = run.model.topology.pair_broker[ordered.pair]
    bounds = np.searchsorted(broker_of, np.arange(len(run.model.topology.brokers) + 1))
    return {b: ordered.at_ms[bounds[b] : bounds[b + 1]] for b in range(len(run.model.topology.brokers))}
