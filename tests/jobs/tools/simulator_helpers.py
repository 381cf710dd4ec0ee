"""A small simulated cluster for tests, and readers for the simulator's output independent of its code."""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jobs.tools.simulator import SimulationSpec

GMT8 = timezone(timedelta(hours=8))


def small_cluster(start: datetime, duration: timedelta, progress_interval: timedelta) -> SimulationSpec:
    return SimulationSpec.small_cluster(start, duration, progress_interval)


_BARE_KEY = re.compile(r"([{,])(\d+):")
_NOTIFYME = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) WARN (?P<thread>\w+?)_\d+ - \[NOTIFYME\]update consumer offset less than store\. "
    r"clientHost=(?P<host>[^,]+), key=(?P<key>[^,]+), queueId=(?P<queue>\d+), requestOffset=(?P<request>\d+), storeOffset=(?P<store>\d+)$"
)


def parse_offset_table(text: str) -> dict[str, dict[int, int]]:
    """A broker's consumerOffset.json (bare integer keys quoted first)."""
    table = json.loads(_BARE_KEY.sub(r'\1"\2":', text))["offsetTable"]
    return {key: {int(q): v for q, v in queues.items()} for key, queues in table.items()}


def snapshot_files(landing: Path, name: str = "consumerOffset.json") -> dict[tuple[str, str, datetime], Path]:
    """(cluster, broker, snapshot time) -> file."""
    found = {}
    for path in sorted((landing / "snapshots").glob(f"*/*/*/{name}")):
        cluster, broker, stamp = path.parts[-4:-1]
        found[(cluster, broker, datetime.fromisoformat(stamp.replace("Z", "+00:00")))] = path
    return found


def read_commits(landing: Path) -> list[dict]:
    """Every commit line, with ``cluster`` from the path and ``at`` as a datetime."""
    rows = []
    for path in sorted((landing / "commits").glob("*/*/*/*.jsonl*")):
        cluster = path.parts[-4]
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for line in data.decode("utf-8").splitlines():
            row = json.loads(line)
            row["cluster"] = cluster
            row["at"] = datetime.fromisoformat(row["committed_at"].replace("Z", "+00:00"))
            rows.append(row)
    return rows


def commit_history(commits: list[dict]) -> dict[tuple, list[tuple[datetime, int]]]:
    """(cluster, broker, key, queue id) -> [(time, offset)] in time order."""
    history = defaultdict(list)
    for row in commits:
        key = f"{row['topic']}@{row['consumer_group']}"
        history[(row["cluster"], row["broker"], key, row["queue_id"])].append((row["at"], row["offset"]))
    for values in history.values():
        values.sort(key=lambda item: item[0])
    return history


def notifyme_lines(landing: Path) -> set[tuple]:
    """(cluster, broker, GMT+8 second, thread kind, client host, key, queue, request, store) of every NOTIFYME line."""
    found = set()
    for path in sorted((landing / "broker_logs").glob("*/*/broker.log")):
        cluster, broker = path.parts[-3:-1]
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _NOTIFYME.match(line)
            if match:
                numbers = (int(match["queue"]), int(match["request"]), int(match["store"]))
                found.add(
                    (cluster, broker, match["at"], match["thread"], match["host"], match["key"], *numbers)
                )
    return found


def broker_second(moment: datetime) -> str:
    """How broker.log prints an instant: GMT+8, whole seconds."""
    return moment.astimezone(GMT8).strftime("%Y-%m-%d %H:%M:%S")


def _table_sets(manifest) -> dict[tuple, list[tuple[datetime, int]]]:
    sets: dict[tuple, list] = {}
    for incident in manifest.incidents:
        if incident.kind in ("failover", "server_reset"):
            key = (
                incident.cluster,
                incident.broker,
                f"{incident.topic}@{incident.consumer_group}",
                incident.queue_id,
            )
            sets.setdefault(key, []).append((incident.occurred_at, incident.offset))
    return sets


def assert_snapshots_follow_commits(landing: Path, manifest, name: str, shift: timedelta) -> None:
    """Each snapshot value is the latest commit or recorded table change at its time (minus ``shift``)."""
    history, sets = commit_history(read_commits(landing)), _table_sets(manifest)
    start = manifest.spec.start
    initial = {
        (c, b): parse_offset_table(p.read_text())
        for (c, b, at), p in snapshot_files(landing).items()
        if at == start
    }
    checked = 0
    for (cluster, broker, at), path in snapshot_files(landing, name).items():
        as_of = at - shift
        for key, queues in parse_offset_table(path.read_text()).items():
            for queue, offset in queues.items():
                changes = history.get((cluster, broker, key, queue), []) + sets.get(
                    (cluster, broker, key, queue), []
                )
                earlier = sorted(change for change in changes if change[0] <= as_of)
                expected = earlier[-1][1] if earlier else initial[(cluster, broker)][key][queue]
                assert offset == expected, (cluster, broker, at, key, queue)
                checked += 1
    assert checked > 100


def assert_notifyme_lines_match(landing: Path, manifest) -> None:
    """The NOTIFYME lines are exactly the manifest's commit regressions."""
    thread = {"update_offset": "ConsumerManageThread", "pull_piggyback": "PullMessageThread"}
    expected = {
        (i.cluster, i.broker, broker_second(i.occurred_at), thread[i.commit_path], i.client_host,
         f"{i.topic}@{i.consumer_group}", i.queue_id, i.offset, i.stored_offset_before)
        for i in manifest.incidents
        if i.has_notifyme
    }  # fmt: skip
    assert expected and notifyme_lines(landing) == expected
    assert all(i.offset < i.stored_offset_before for i in manifest.incidents)
