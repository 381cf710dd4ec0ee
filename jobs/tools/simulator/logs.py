"""``broker.log`` and ``rocketmq_client.log`` lines in the layouts RocketMQ ships.

Broker: ``yyyy-MM-dd HH:mm:ss LEVEL thread - message`` in GMT+8, no millis, ``\\n``.
Client (4.x): ``yyyy-MM-dd HH:mm:ss,SSS LEVEL RocketmqClient - message`` in GMT+8, ``\\r\\n``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa

from jobs.tools.simulator.effects import KIND_RESET, PATH_UPDATE, PATHS
from jobs.tools.simulator.events import Events
from jobs.tools.simulator.model import LOCAL_OFFSET_MS, Model, generator
from jobs.tools.simulator.textfmt import as_text, concatenated_bytes, format_instants, join_columns
from jobs.tools.simulator.topology import NAMESRV

THREAD_OF_PATH = {"update_offset": "ConsumerManageThread", "pull_piggyback": "PullMessageThread"}
THREAD_POOL = {"update_offset": 32, "pull_piggyback": 48}


def broker_time(millis: int) -> str:
    return datetime.fromtimestamp((millis + LOCAL_OFFSET_MS) // 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def broker_line(millis: int, level: str, thread: str, message: str) -> str:
    return f"{broker_time(millis)} {level} {thread} - {message}\n"


def notifyme_message(
    client_host: str, key: str, queue_id: int, request_offset: int, store_offset: int
) -> str:
    """The broker's WARN when a commit is below the stored offset (ConsumerOffsetManager.commitOffset)."""
    return (
        f"[NOTIFYME]update consumer offset less than store. clientHost={client_host}, key={key}, "
        f"queueId={queue_id}, requestOffset={request_offset}, storeOffset={store_offset}"
    )


def notifyme_lines(
    model: Model, events: Events, regressing: np.ndarray, before: np.ndarray
) -> list[tuple[int, int, str, str, str]]:
    """(broker, at_ms, level, thread, message) for every regressing commit; the thread tells the path."""
    rng = generator(model.spec.seed, "notifyme")
    topology, inc = model.topology, model.incarnations
    lines = []
    for index, stored in zip(regressing.tolist(), before.tolist()):
        pair, path = int(events.pair[index]), PATHS[events.path[index]]
        thread = f"{THREAD_OF_PATH[path]}_{int(rng.integers(1, THREAD_POOL[path] + 1))}"
        message = notifyme_message(
            inc.client_host(int(events.incarnation[index])), topology.key(pair),
            int(topology.queue_id[topology.pair_queue[pair]]), int(events.offset[index]), int(stored),
        )  # fmt: skip
        lines.append((int(topology.pair_broker[pair]), int(events.at_ms[index]), "WARN", thread, message))
    return lines


def _routine_lines(model: Model, broker: int) -> list[tuple[int, str, str, str]]:
    """Name-server registration every 30 s and dispatch checks every minute."""
    rng = generator(model.spec.seed, f"broker-noise-{broker}")
    is_5x = model.topology.brokers[broker].is_5x
    end_ms = model.start_ms + model.ticks * model.step_ms
    lines = []
    for n, at in enumerate(range(model.start_ms + int(rng.integers(0, 30_000)), end_ms, 30_000)):
        thread = f"brokerOutApi_thread_{n % 4 + 1}"
        if is_5x:
            text = f"Registering current broker to name server completed. TargetHost={NAMESRV}"
        else:
            text = f"register broker[0]to name server {NAMESRV} OK"
        lines.append((at, "INFO", thread, text))
    for at in range(model.start_ms + int(rng.integers(0, 60_000)), end_ms, 60_000):
        if is_5x:
            lines.append(
                (
                    at,
                    "INFO",
                    "BrokerControllerScheduledThread1",
                    "Dispatch task fall behind commit log 0bytes",
                )
            )
        else:
            lines.append(
                (at, "INFO", "BrokerControllerScheduledThread1", "dispatch behind commit log 0 bytes")
            )
            lines.append(
                (at, "INFO", "BrokerControllerScheduledThread1", "Slave fall behind master: 0 bytes")
            )
    return lines


def write_broker_logs(model: Model, landing: Path, special: list[tuple[int, int, str, str, str]]) -> int:
    """One ``broker.log`` per broker: routine lines plus the incident and NOTIFYME lines, in time order."""
    for b, broker in enumerate(model.topology.brokers):
        lines = _routine_lines(model, b) + [
            (at, level, thread, text) for bb, at, level, thread, text in special if bb == b
        ]
        lines.sort(key=lambda line: line[0])
        folder = landing / "broker_logs" / broker.cluster / broker.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "broker.log").write_bytes("".join(broker_line(*line) for line in lines).encode())
    return len(model.topology.brokers)


def logged_hosts(model: Model) -> list[tuple[str, str]]:
    """(cluster, host) of the first ``client_logs_for`` client hosts of each cluster, in group order."""
    chosen = []
    for c, cluster in enumerate(model.topology.cluster_names):
        hosts = [h for g in model.topology.groups if g.cluster == c for h in g.hosts]
        chosen += [(cluster, h) for h in hosts[: model.spec.client_logs_for]]
    return chosen


def write_client_logs(
    model: Model, landing: Path, events: Events, special: list[tuple[int, int, str]]
) -> int:
    """``rocketmq_client.log`` of each logged host: a ``[persistAll]`` line per queue every 5 s, a
    ``[persist]`` line per reset queue, and start, shutdown and reset lines."""
    topology, inc = model.topology, model.incarnations
    group_names = pa.array([topology.groups[g].name for g in topology.pair_group])
    queue_text = [
        f"{topology.topics[t].name}, brokerName={topology.brokers[b].name}, queueId={q}"
        for t, b, q in zip(topology.queue_topic, topology.queue_broker, topology.queue_id)
    ]
    queues = pa.array(queue_text).take(topology.pair_queue)
    client_ids = pa.array([inc.client_id(i) for i in range(len(inc.group))])
    host_of = np.array(inc.host)
    markers = pa.array(["[persistAll]", "[persist]"])
    files = 0
    for cluster, host in logged_hosts(model):
        mine = np.flatnonzero((host_of[events.incarnation] == host) & (events.path == PATH_UPDATE))
        chunk = events.take(mine)
        # A reset is committed by persist(mq), outside the 5-second persistAll.
        marker = markers.take((chunk.kind == KIND_RESET).astype(np.int8))
        persist = join_columns(
            " INFO RocketmqClient - ", marker, " Group: ", group_names.take(chunk.pair), " ClientId: ",
            client_ids.take(chunk.incarnation), " updateConsumeOffsetToBroker MessageQueue [topic=",
            queues.take(chunk.pair), "] ", as_text(chunk.offset), "\r\n",
        )  # fmt: skip
        other_ms, other_text = _lifecycle_lines(model, host, special)
        at_ms = np.concatenate([chunk.at_ms, np.array(other_ms, dtype=np.int64)])
        bodies = pa.concat_arrays([persist, pa.array(other_text, pa.string())])
        order = np.argsort(at_ms, kind="stable")
        stamps = format_instants(at_ms[order], offset_ms=LOCAL_OFFSET_MS, date_time_sep=" ", fraction_sep=",")
        folder = landing / "client_logs" / cluster / host
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "rocketmq_client.log").write_bytes(
            concatenated_bytes(join_columns(stamps, bodies.take(order)))
        )
        files += 1
    return files


def _lifecycle_lines(
    model: Model, host: str, special: list[tuple[int, int, str]]
) -> tuple[list[int], list[str]]:
    inc, topology = model.incarnations, model.topology
    at_ms, texts = [], []
    for i in (i for i, h in enumerate(inc.host) if h == host):
        group = topology.groups[inc.group[i]].name
        if inc.start_tick[i] > 0:
            begin = int(model.tick_ms(inc.start_tick[i]))
            at_ms += [begin, begin + 3]
            texts += [
                f" INFO RocketmqClient - the consumer [{group}] start beginning. messageModel=CLUSTERING, isUnitMode=false\r\n",
                f" INFO RocketmqClient - the consumer [{group}] start OK.\r\n",
            ]
        if inc.end_tick[i] < model.ticks:
            at_ms.append(int(model.tick_ms(inc.end_tick[i])) - 5)
            texts.append(f" INFO RocketmqClient - the consumer [{group}] shutdown OK\r\n")
    for i, at, message in special:
        if inc.host[i] == host:
            at_ms.append(at)
            texts.append(f" INFO RocketmqClient - {message}\r\n")
    return at_ms, texts
