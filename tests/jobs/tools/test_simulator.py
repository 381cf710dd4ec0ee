"""The simulator writes real RocketMQ formats and a run that keeps RocketMQ's commit semantics."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from jobs.tools.simulator import MANIFEST_NAME, SimulationSpec, simulate
from jobs.tools.simulator.javaorder import hash_order_ints, hash_order_strings, string_hash
from jobs.tools.simulator.logs import broker_line, notifyme_message
from jobs.tools.simulator.model import lag_after
from jobs.tools.simulator.progress import (
    ProgressRow,
    StatusRow,
    render_consumer_progress,
    render_topic_status,
)
from jobs.tools.simulator.run import build_run
from jobs.tools.simulator.snapshots import render_offset_table
from jobs.tools.simulator.spec import CAUSE_OF_KIND
from jobs.tools.simulator.topology import allocate_averagely, build_topology
from pipelines.ingest.consumer_connection import group_from_file_name, parse_consumer_connection
from schemas.records import CommitEvent
from tests.jobs.tools.simulator_helpers import (
    assert_notifyme_lines_match,
    assert_snapshots_follow_commits,
    broker_second,
    parse_offset_table,
    read_commits,
    snapshot_files,
)

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
TINY = SimulationSpec(start=START, duration=timedelta(minutes=30))


@pytest.fixture(scope="module")
def landing(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("landing")
    simulate(TINY, root)
    return root


@pytest.fixture(scope="module")
def manifest(landing):
    from jobs.tools.simulator import SimulationManifest

    return SimulationManifest.model_validate_json((landing / MANIFEST_NAME).read_text())


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- determinism -------------------------------------------------------------------------


def test_same_spec_writes_identical_bytes_and_another_seed_does_not(landing, tmp_path):
    simulate(TINY, tmp_path / "again")
    simulate(TINY.model_copy(update={"seed": 7}), tmp_path / "other")
    first, again, other = _tree(landing), _tree(tmp_path / "again"), _tree(tmp_path / "other")
    assert first == again
    commits = "commits/prod-1/broker-a/2026-11-21/10.jsonl"
    assert first[commits] != other[commits]


# --- formats, byte for byte --------------------------------------------------------------

REAL_4X = [
    "v4_consumerOffset__gxstax-rocketmq__2019-03-13.json",
    "v4_consumerOffset__gxstax-rocketmq__2019-03-16.json",
    "v4_consumerOffset__shaoxubao-rocketmq-study.json",
    "v4_consumerOffset__super-golden-rocketMq.json",
    "v4_consumerOffset__liushangqing9803-rocketmq-tech__2023-09-08.json",
]


@pytest.mark.parametrize("name", REAL_4X)
def test_4x_table_renders_real_files_byte_for_byte_in_java_hash_order(real_samples, name):
    real = (real_samples / name).read_bytes()
    table = parse_offset_table(real.decode())
    inserted = sorted(table)  # any insertion order: the hash order decides
    entries = [
        (key, [(q, table[key][q]) for q in hash_order_ints(table[key])])
        for key in hash_order_strings(inserted)
    ]
    assert render_offset_table(entries).encode() == real


def test_empty_tables_render_the_real_21_and_126_byte_files(real_samples):
    assert (
        render_offset_table([]).encode()
        == (real_samples / "v4.8.0_consumerOffset_empty__haohao1029-java.json").read_bytes()
    )
    real_5x = (
        real_samples / "v5.3.1_consumerOffset_empty__guoming-docker-compose-rocketmq.json"
    ).read_bytes()
    assert render_offset_table([], (0, 1778240664586)).encode() == real_5x


def test_5x_table_has_data_version_and_group_topic_map_without_three_part_keys():
    entries = [
        ("orders@billing", [(0, 250), (1, 249)]),
        ("%RETRY%billing@billing", [(0, 0)]),
        ("orders@push@broadcast", [(0, 7)]),
    ]
    expected = (
        '{\n\t"dataVersion":{\n\t\t"counter":3,\n\t\t"stateVersion":0,\n\t\t"timestamp":1795255500123\n\t},\n'
        '\t"groupTopicMap":{\n\t\t"billing":["orders","%RETRY%billing"]\n\t},\n'
        '\t"offsetTable":{\n'
        '\t\t"orders@billing":{0:250,1:249\n\t\t},\n'
        '\t\t"%RETRY%billing@billing":{0:0\n\t\t},\n'
        '\t\t"orders@push@broadcast":{0:7\n\t\t}\n'
        "\t}\n}"
    )
    assert render_offset_table(entries, (3, 1795255500123)) == expected


def test_written_snapshots_have_the_4x_and_5x_shapes(landing):
    files = snapshot_files(landing)
    four = files[("prod-1", "broker-a", START)].read_text()
    five = files[("prod-1", "broker-b", START)].read_text()
    assert four.startswith('{\n\t"offsetTable":{\n\t\t"') and four.endswith("\n\t\t}\n\t}\n}")
    version = (
        r'\{\n\t"dataVersion":\{\n\t\t"counter":\d+,\n\t\t"stateVersion":0,\n\t\t"timestamp":\d{13}\n\t\},\n'
    )
    assert re.match(version + r'\t"groupTopicMap":\{\n', five)
    keys = set(parse_offset_table(four)) | set(parse_offset_table(five))
    assert {
        "%RETRY%order-service@order-service",
        "OFFSET_MOVED_EVENT@__MONITOR_CONSUMER",
        "%DLQ%order-service@dlq-auditor",
    } <= keys


def test_commit_lines_are_exact_and_follow_the_contract(landing):
    path = landing / "commits/prod-1/broker-a/2026-11-21/10.jsonl"
    lines = path.read_text().split("\n")
    assert lines[0] == (
        '{"committed_at":"2026-11-21T10:00:01.766Z","broker":"broker-a","client_host":"10.10.1.11:48868",'
        '"topic":"order-events","consumer_group":"order-service","queue_id":5,"offset":1704273,"path":"update_offset"}'
    )
    assert lines[-1] == ""  # every line ends with \n
    events = [CommitEvent.model_validate_json(line) for line in lines[:-1]]
    assert all(e.committed_at.hour == 10 and e.broker == "broker-a" for e in events)
    assert [e.committed_at for e in events] == sorted(e.committed_at for e in events)


def test_notifyme_line_matches_the_real_broker_log_excerpt(real_samples):
    real = (
        (real_samples / "excerpts/broker.log_NOTIFYME__apache-rocketmq-issue-3066.log")
        .read_text()
        .splitlines(keepends=True)
    )
    at = int(datetime(2021, 6, 3, 16, tzinfo=UTC).timestamp() * 1000)  # 2021-06-04 00:00:00 GMT+8
    message = notifyme_message("host2:35394", "topic-xxx@topic-xxx-consumer", 5, 2611518, 2613665)
    assert broker_line(at, "WARN", "PullMessageThread_55", message) == real[0]


def _excerpt_rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.split("\n\n")[0].splitlines()[1:]]


def test_consumer_progress_renders_the_real_5x_excerpt(real_samples):
    real = (real_samples / "excerpts/mqadmin_consumerProgress_5x_with-Inflight__unknown-repo.txt").read_text()
    rows = [
        ProgressRow(f[0], f[1], int(f[2]), int(f[3]), int(f[4]), int(f[6]), " ".join(f[7:]))
        for f in _excerpt_rows(real)
    ]
    assert render_consumer_progress(rows, 0.13) == real


def test_topic_status_renders_the_real_5x_excerpt(real_samples):
    real = (real_samples / "excerpts/mqadmin_topicStatus_5x__unknown-repo.txt").read_text()
    rows = [StatusRow(f[0], int(f[1]), int(f[2]), int(f[3]), " ".join(f[4:])) for f in _excerpt_rows(real)]
    assert render_topic_status(rows, 0.0) == real


def test_progress_header_and_row_columns():
    row = ProgressRow("order-events", "broker-a", 3, 1000, 990, 5, "2026-11-21 10:04:59")
    text = render_consumer_progress([row], 12.345)
    assert text.splitlines()[0].startswith(
        "#Topic" + " " * 60 + "#Broker Name" + " " * 22 + "#QID  #Broker Offset"
    )
    assert text.splitlines()[1] == (
        "order-events" + " " * 54 + "broker-a" + " " * 26 + "3" + " " * 5 + "1000" + " " * 18 + "990" + " " * 19
        + "10" + " " * 19 + "5" + " " * 20 + "2026-11-21 10:04:59"
    )  # fmt: skip
    assert text.endswith("\nConsume TPS: 12.35\nConsume Diff Total: 10\nConsume Inflight Total: 5\n")


_PERSIST = re.compile(
    r"^(?P<at>\S+ \S+) INFO RocketmqClient - \[persistAll\] Group: (?P<group>\S+) ClientId: (?P<ip>[\d.]+)@\d+ "
    r"updateConsumeOffsetToBroker MessageQueue "
    r"\[topic=(?P<topic>\S+), brokerName=(?P<broker>\S+), queueId=(?P<queue>\d+)\] (?P<offset>\d+)$"
)


def test_client_log_lines_are_the_clients_update_offset_commits(landing):
    log = next((landing / "client_logs/prod-1").glob("*/rocketmq_client.log")).read_bytes().decode()
    lines = log.split("\r\n")
    assert lines[0] == (
        "2026-11-21 18:00:01,766 INFO RocketmqClient - [persistAll] Group: order-service ClientId: 10.10.1.11@59775 "
        "updateConsumeOffsetToBroker MessageQueue [topic=order-events, brokerName=broker-a, queueId=5] 1704273"
    )
    assert lines[-1] == "" and "\n" not in log.replace("\r\n", "")
    persisted = [m for m in map(_PERSIST.match, lines) if m]
    commits = {
        (broker_second(r["at"]) + r["committed_at"][19:23].replace(".", ","), r["consumer_group"], r["client_host"].split(":")[0],
         r["topic"], r["broker"], r["queue_id"], r["offset"])
        for r in read_commits(landing)
        if r["path"] == "update_offset"
    }  # fmt: skip
    logged = {
        (m["at"], m["group"], m["ip"], m["topic"], m["broker"], int(m["queue"]), int(m["offset"]))
        for m in persisted
    }
    assert len(persisted) > 1000 and logged <= commits


# --- semantics -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, shift", [("consumerOffset.json", timedelta(0)), ("consumerOffset.json.bak", TINY.commit_interval)]
)
def test_snapshot_holds_the_last_commit_or_recorded_table_change(landing, manifest, name, shift):
    """A snapshot (a .bak: one commit interval earlier) shows the latest commit, or a failover / 5.x reset."""
    assert_snapshots_follow_commits(landing, manifest, name, shift)


def test_commits_never_exceed_the_max_offset():
    run = build_run(TINY)
    model, events = run.model, run.events
    ticks = (events.at_ms - model.start_ms) // model.step_ms
    assert np.all(events.offset <= run.max_offset[model.topology.pair_queue[events.pair], ticks])


def test_each_client_commits_increase_except_across_resets(landing, manifest):
    resets = {}
    for i in manifest.incidents:
        if i.kind in ("client_reset", "server_reset", "pull_offset_moved", "rewind_to_min", "client_seek"):
            resets.setdefault((i.broker, i.topic, i.consumer_group, i.queue_id), []).append(i.occurred_at)
    sequences = {}
    for row in sorted(read_commits(landing), key=lambda r: r["at"]):
        sequences.setdefault(
            (row["broker"], row["client_host"], row["topic"], row["consumer_group"], row["queue_id"]), []
        ).append(row)
    decreases = 0
    for (broker, _, topic, group, queue), rows in sequences.items():
        for before, after in itertools.pairwise(rows):
            if after["offset"] < before["offset"]:
                decreases += 1
                assert any(
                    before["at"] < t <= after["at"] for t in resets.get((broker, topic, group, queue), [])
                ), after
    assert decreases > 0


def test_manifest_incidents_are_exactly_the_notifyme_lines(landing, manifest):
    assert_notifyme_lines_match(landing, manifest)
    assert {i.kind for i in manifest.incidents} == set(CAUSE_OF_KIND)  # every kind injected


def test_a_pull_offset_correction_is_logged_before_the_client_commits_its_new_offset(landing, manifest):
    logged = set()
    for path in sorted((landing / "broker_logs").glob("*/*/broker.log")):
        for line in path.read_text().splitlines():
            found = re.search(r"^(\S+ \S+) WARN PullMessageThread_\d+ - PULL_OFFSET_MOVED:correction offset\. "
                              r"topic=(\S+), groupId=(\S+), requestOffset=(\d+), newOffset=(\d+), suggestBrokerId=0$", line)  # fmt: skip
            if found:
                stamp, topic, group, request, new = found.groups()
                logged.add((path.parts[-2], stamp, topic, group, int(request), int(new)))
    moved = {
        (i.broker, broker_second(i.occurred_at), i.topic, i.consumer_group, i.stored_offset_before, i.offset)
        for i in manifest.incidents
        if i.kind == "pull_offset_moved"
    }
    assert moved and logged == moved
    assert all(i.cause == "server_correction" for i in manifest.incidents if i.kind == "pull_offset_moved")


def test_a_rewind_to_min_commits_the_min_offset_topic_status_reports(landing, manifest):
    (rewind,) = [i for i in manifest.incidents if i.kind == "rewind_to_min"]
    status = sorted((landing / "progress").glob(f"*/*/topicStatus-{rewind.topic}.txt"))[0].read_text()
    mins = {(b, int(q)): int(m) for b, q, m in re.findall(r"^(\S+)\s+(\d+)\s+(\d+)\s+\d+", status, re.M)}
    assert mins[(rewind.broker, rewind.queue_id)] == rewind.offset < rewind.stored_offset_before


@pytest.mark.parametrize(
    "change",
    [
        {"clusters": 2, "brokers_per_cluster": 3, "broker_versions": ("4.9.8",), "incident_rounds": 2},
        {"commit_interval": timedelta(seconds=2), "snapshot_interval": timedelta(minutes=1), "groups": 5,
         "clients_per_group": (4, 1), "gzip_commits": True, "retry_topics": False, "static_keys": False},
    ],
)  # fmt: skip
def test_other_estates_keep_the_same_guarantees(tmp_path, change):
    spec = TINY.model_copy(update={"start": datetime(2026, 11, 21, 23, 30, tzinfo=UTC), **change})
    manifest = simulate(SimulationSpec.model_validate(spec.model_dump()), tmp_path)
    assert_snapshots_follow_commits(tmp_path, manifest, "consumerOffset.json", timedelta(0))
    assert_notifyme_lines_match(tmp_path, manifest)


def test_snapshot_regressions_are_visible_where_the_manifest_says(landing, manifest):
    files = snapshot_files(landing)
    for incident in manifest.incidents:
        if incident.kind in ("failover", "server_reset"):
            path = files[(incident.cluster, incident.broker, incident.visible_in_snapshot_at)]
            shown = parse_offset_table(path.read_text())[f"{incident.topic}@{incident.consumer_group}"][
                incident.queue_id
            ]
            assert shown < incident.stored_offset_before
            assert shown == incident.offset or incident.kind == "server_reset"


def test_reset_lines_differ_by_broker_version(landing, manifest):
    four = (landing / "broker_logs/prod-1/broker-a/broker.log").read_text()
    five = (landing / "broker_logs/prod-1/broker-b/broker.log").read_text()
    assert (
        "[reset-offset] reset offset success. topic=order-events, group=order-service, clientId=10.10."
        in four
    )
    assert "[reset-offset] reset offset started by 10.0.9.5:" in five and "reset offset success" not in five
    assert {i.broker for i in manifest.incidents if i.kind == "server_reset"} == {"broker-b"}
    assert {i.broker for i in manifest.incidents if i.kind == "client_reset"} == {"broker-a"}


# --- model pieces and specs -----------------------------------------------------------------


def test_allocate_averagely_gives_leading_clients_the_extra_queues():
    assert allocate_averagely(list(range(8)), ["c", "a", "b"]) == [1, 1, 1, 2, 2, 2, 0, 0]
    assert allocate_averagely(list(range(2)), ["a", "b", "c"]) == [0, 1]
    assert allocate_averagely(list(range(2)), []) == [-1, -1]


def test_java_hashes():
    assert string_hash("hello") == 99162322
    assert string_hash("%RETRY%g") == (string_hash("%RETRY%") * 31**1 + ord("g")) % 2**32
    assert hash_order_ints([7, 2, 0, 5]) == [0, 2, 5, 7]
    assert hash_order_ints([17, 1]) == [17, 1]  # one bucket of a 16-slot table: insertion order
    assert hash_order_strings(["b", "a"]) == ["a", "b"]  # buckets 2 and 1


def test_lag_drains_at_capacity_and_never_goes_negative():
    lag = lag_after(np.array([[5, 5, 0, 0, 0]]), np.array([[2, 2, 2, 2, 2]]), np.array([1]))
    assert lag.tolist() == [[4, 7, 5, 3, 1]]
    assert lag_after(np.array([[0, 0]]), np.array([[9, 9]]), np.array([3])).tolist() == [[0, 0]]


def test_for_commit_events_comes_close_to_the_request():
    spec = SimulationSpec.for_commit_events(50_000, START)
    assert 47_500 <= len(build_run(spec).events) <= 52_500


def test_busy_broker_day_has_2000_keys_of_8_queues():
    spec = SimulationSpec.busy_broker_day(START)
    topology = build_topology(spec, np.random.default_rng(0))
    keys = {topology.key(p) for p in range(len(topology.pair_queue))}
    assert (len(keys), len(topology.pair_queue), len(topology.static_entries)) == (2000, 16000, 0)
    assert int(spec.duration / spec.snapshot_interval) == 288


@pytest.mark.parametrize(
    "change, message",
    [
        ({"snapshot_interval": timedelta(seconds=7)}, "multiple of the model step"),
        ({"write_commits": False}, "incidents need commits"),
        ({"start": datetime(2026, 1, 1, 0, 0, 0, 5000, tzinfo=UTC)}, "whole second"),
    ],
)
def test_inconsistent_specs_are_rejected_with_a_reason(change, message):
    with pytest.raises(ValidationError, match=message):
        SimulationSpec(**{**TINY.model_dump(), **change})


def test_connection_outputs_name_the_members_and_the_pull_group_that_seeks(landing, manifest):
    outputs = sorted((landing / "progress").glob("*/*/consumerConnection-*.txt"))
    assert len(outputs) == manifest.connection_files > 0
    seeks = [i for i in manifest.incidents if i.kind == "client_seek"]
    assert seeks and all(i.cause == "client_seek" and i.has_notifyme for i in seeks)
    consume_types = {}
    for path in outputs:
        document = parse_consumer_connection(path.read_text(), group_from_file_name(path.name))
        consume_types.setdefault(document.consumer_group, set()).add(document.consume_type)
        assert document.is_online == bool(document.clients)
    pull = {g for g, types in consume_types.items() if types == {"CONSUME_ACTIVELY"}}
    assert {i.consumer_group for i in seeks} == pull
    # a seeking client was in its group when it sought back: the seek is the group's own doing
    for seek in seeks:
        before = [p for p in outputs if p.name == f"consumerConnection-{seek.consumer_group}.txt"
                  and p.parent.name <= seek.occurred_at.strftime("%Y-%m-%dT%H:%M:%SZ")]  # fmt: skip
        members = parse_consumer_connection(before[-1].read_text()).clients
        assert seek.client_host in {c.client_addr for c in members}
