"""Replay semantics on tiny inline data: each rule of the specification, then split-run invariance."""

from __future__ import annotations

import random
import re

import pytest
from pyspark.sql import functions as F

from pipelines.ingest.snapshots import select_snapshot_files
from pipelines.replay import replay
from pipelines.replay.events import (
    FILE_KEY,
    REREAD_KEY,
    EventIds,
    build_events,
    replayed_snapshots,
    without_reread_lines,
)
from pipelines.replay.kernel import QUEUE_ID, REPLAY_ORDER
from schemas.tables import QUEUE_KEY
from tests.frames import rows
from tests.pipelines.replay.replay_helpers import (
    COMMIT_SCHEMA,
    SNAPSHOT_SCHEMA,
    at,
    commit,
    empty_seed,
    frames,
    snapshot,
)

REPLAYED = (
    "committed_at",
    "offset",
    "stored_offset_before",
    "stored_before_source",
    "client_offset_after",
    "is_regression",
    "regression_size",
)
REGRESSION = ("detected_at", "offset", "stored_offset", "regression_size", "evidence", "client_host")


def run(spark, commits, snapshots, seed=None, broadcast_logged=False):
    c, s = frames(spark, commits, snapshots)
    return replay(c, s, seed if seed is not None else empty_seed(spark), broadcast_logged)


def test_broker_overwrite_and_client_increase_only(spark):
    result = run(spark, [commit(10, 120, 1), commit(20, 90, 2), commit(30, 130, 3)], [snapshot(0, 100)])
    assert rows(result.commits, *REPLAYED) == [
        (at(10), 120, 100, "snapshot", 120, False, None),
        (at(20), 90, 120, "commit", 120, True, 30),
        (at(30), 130, 90, "commit", 130, False, None),
    ]
    assert rows(result.regressions, *REGRESSION) == [(at(20), 90, 120, 30, "commit", "10.0.0.1:5000")]


def test_a_second_regression_before_the_group_caught_up_exposes_everything_below_its_mark(spark):
    result = run(spark, [commit(10, 100, 1), commit(20, 90, 2), commit(30, 95, 3), commit(40, 80, 4)], [])
    assert rows(result.regressions, "detected_at", "regression_size", "messages_consumed_twice") == [
        (at(20), 10, 10),
        (at(40), 15, 20),  # 80 to 100 come again; 95 to 100 had come back already
    ]


def test_first_commit_with_nothing_known_before_is_no_regression(spark):
    result = run(spark, [commit(10, 50, 1)], [])
    assert rows(result.commits, *REPLAYED) == [(at(10), 50, None, None, 50, False, None)]


def test_client_high_water_mark_starts_from_the_snapshot_it_read(spark):
    # the client read 100 from the broker; a lower first commit leaves its mark at 100
    result = run(spark, [commit(10, 80, 1)], [snapshot(0, 100)])
    assert rows(result.commits, *REPLAYED) == [(at(10), 80, 100, "snapshot", 100, True, 20)]


def test_snapshot_at_the_same_instant_comes_before_the_commit(spark):
    result = run(spark, [commit(10, 70, 1)], [snapshot(10, 60)])
    assert rows(result.commits, *REPLAYED) == [(at(10), 70, 60, "snapshot", 70, False, None)]


def test_commits_at_the_same_instant_replay_in_file_then_line_order(spark):
    same = [
        commit(10, 200, 2, file="b.jsonl"),
        commit(10, 100, 7, file="a.jsonl"),
        commit(10, 150, 1, file="b.jsonl"),
    ]
    result = run(spark, same, [])
    assert rows(result.commits, "source_file", "line_no", "stored_offset_before", "is_regression") == [
        ("a.jsonl", 7, None, False),
        ("b.jsonl", 1, 100, False),
        ("b.jsonl", 2, 150, False),
    ]


def test_a_path_and_a_longer_path_it_prefixes_replay_in_observation_seq_order(spark):
    # "a.jsonl|..." sorts after "a.jsonl.gz|...": the replay's last observation of an instant
    # must be the one observation_seq names last (asof and the lag mart take that one)
    same = [commit(10, 100, 1, file="a.jsonl"), commit(10, 90, 1, file="a.jsonl.gz")]
    result = run(spark, same, [])
    assert rows(result.commits, "source_file", "stored_offset_before", "is_regression") == [
        ("a.jsonl", 90, False),  # after a.jsonl.gz's line
        ("a.jsonl.gz", None, False),
    ]
    timeline = rows(result.timeline, "observation_seq", "stored_offset")
    assert max(timeline) == ("1|a.jsonl|000000000001|h-a.jsonl", 100)


def test_a_path_holding_the_separator_is_escaped_in_observation_seq_and_replays_in_its_order(spark):
    # raw, "1|a|!|000..." sorts before "1|a|000...", though the path "a|" sorts before "a|!|":
    # escaped ("%" as %25, "|" as %7C), no path holds the separator and the two orders are one
    same = [commit(10, 100, 1, file="a"), commit(10, 90, 1, file="a|!"), commit(10, 80, 1, file="50%")]
    result = run(spark, same, [])
    assert rows(result.commits, "source_file", "stored_offset_before", "is_regression") == [
        ("50%", None, False),
        ("a", 90, False),  # after "a%7C!": "%" sorts before "|"
        ("a|!", 80, False),
    ]
    timeline = rows(result.timeline, "observation_seq", "stored_offset")
    assert timeline == [
        ("1|50%25|000000000001|h-50%", 80),
        ("1|a%7C!|000000000001|h-a|!", 90),
        ("1|a|000000000001|h-a", 100),  # the replay's last observation of the instant
    ]


def test_one_path_replays_in_line_order_across_its_versions_and_by_hash_within_a_line(spark):
    # a longer copy of a file numbers its new lines on (its hash may sort before the first
    # copy's); a file rewritten with other lines repeats line numbers: the hash parts those
    same = [
        commit(10, 100, 1, version="z"),
        commit(10, 110, 2, version="z"),
        commit(10, 120, 3, version="a"),  # the longer copy's new line
        commit(20, 130, 4, version="b"),  # two versions' line 4 at the same instant
        commit(20, 131, 4, version="c"),
    ]
    result = run(spark, same, [])
    assert rows(result.commits, "line_no", "_file_hash", "stored_offset_before", "is_regression") == [
        (1, "h-c.jsonlz", None, False),
        (2, "h-c.jsonlz", 100, False),
        (3, "h-c.jsonla", 110, False),
        (4, "h-c.jsonlb", 120, False),
        (4, "h-c.jsonlc", 130, False),
    ]
    seqs = rows(result.timeline, "observation_seq")
    assert seqs == sorted(seqs) and seqs[2] == ("1|c.jsonl|000000000003|h-c.jsonla",)


def test_previous_commit_wins_over_a_later_snapshot_that_may_not_hold_it(spark):
    # a snapshot within SNAPSHOT_SETTLE_SECONDS of the commit may have been written before it
    result = run(spark, [commit(10, 100, 1), commit(30, 95, 2)], [snapshot(15, 40)])
    assert rows(result.commits, "committed_at", "stored_offset_before", "stored_before_source") == [
        (at(10), None, None),
        (at(30), 100, "commit"),
    ]


def test_a_drop_of_the_brokers_table_is_one_regression_though_the_next_commit_is_below_the_last(spark):
    # a failover: the settled snapshot shows the table at 50, which the next commit overwrites
    result = run(spark, [commit(10, 120, 1), commit(120, 60, 2)], [snapshot(0, 100), snapshot(60, 50)])
    assert rows(result.commits, "committed_at", "stored_offset_before", "stored_before_source") == [
        (at(10), 100, "snapshot"),
        (at(120), 50, "snapshot"),
    ]
    assert rows(result.regressions, *REGRESSION) == [(at(60), 50, 100, 50, "snapshot_pair", None)]


def test_snapshot_decrease_without_commit_is_a_snapshot_pair_regression(spark):
    # failover to a slave whose table is older: no commit explains the drop
    result = run(spark, [], [snapshot(0, 500), snapshot(300, 420), snapshot(600, 430)])
    assert rows(result.regressions, *REGRESSION) == [(at(300), 420, 500, 80, "snapshot_pair", None)]


def test_snapshot_below_a_commit_it_should_hold_is_a_regression_though_not_below_the_previous_snapshot(spark):
    # the slave's table is newer than the last snapshot but older than the last commit
    result = run(spark, [commit(100, 520, 1)], [snapshot(0, 500), snapshot(300, 510)])
    assert rows(result.regressions, *REGRESSION) == [(at(300), 510, 520, 10, "snapshot_behind_commit", None)]


def test_snapshot_decrease_explained_by_a_commit_regression_is_not_reported_twice(spark):
    result = run(spark, [commit(100, 510, 1), commit(200, 400, 2)], [snapshot(0, 500), snapshot(300, 400)])
    assert rows(result.regressions, *REGRESSION) == [(at(200), 400, 510, 110, "commit", "10.0.0.1:5000")]


def test_bak_beside_its_main_file_is_not_replayed_but_stands_in_for_a_missing_one(spark):
    snaps = [
        snapshot(0, 100),
        snapshot(300, 90, source="bak"),
        snapshot(300, 150),
        snapshot(600, 140, source="bak"),
    ]
    c, s = frames(spark, [], snaps)
    # the ingest's decision for each file: each main healthy, the .bak at 600 s alone
    files = s.select(
        "cluster", "broker", "snapshot_at", F.lit("consumer_offsets").alias("document_kind"), "snapshot_source",
        "source_file", "_file_hash", F.lit(None).cast("string").alias("document_status"),
    ).distinct()  # fmt: skip
    result = replay(c, replayed_snapshots(s, select_snapshot_files(files)), empty_seed(spark))
    assert rows(
        result.timeline, "observed_at", "stored_offset", "previous_stored_offset", "consumed_increment"
    ) == [
        (at(0), 100, None, 0),
        (at(300), 150, 100, 50),
        (at(600), 140, 150, 0),
    ]


def test_notifyme_line_repeating_a_logged_commit_is_replayed_once(spark):
    logged = [commit(10.4, 100, 1), commit(20.7, 80, 2)]
    notifyme = [
        commit(20, 80, 9, evidence="broker_notifyme", file="broker.log"),
        commit(40, 70, 10, evidence="broker_notifyme", file="broker.log"),
    ]
    result = run(spark, logged + notifyme, [])
    assert rows(result.commits, "offset", "evidence", "is_regression") == [
        (70, "broker_notifyme", True),
        (80, "commit_log", True),
        (100, "commit_log", False),
    ]


def test_a_cut_line_a_longer_copy_read_again_is_not_replayed(spark):
    """A client log's first copy ended inside line 2's offset (14 of 1470); the longer copy
    (version "-2") read line 2 again, whole: the replay takes its row, and finds no regression."""
    first = [commit(1, 1000, 1, file="client.log"), commit(2, 14, 2, file="client.log")]
    longer = [
        commit(2, 1470, 2, file="client.log", version="-2"),
        commit(3, 1500, 3, file="client.log", version="-2"),
    ]
    c, s = frames(spark, first + longer, [])
    reread = spark.createDataFrame(
        [("c1", "h-client.log", 2)], "cluster string, _file_hash string, line_no long"
    )
    assert without_reread_lines(c, None) is c
    kept = without_reread_lines(c, reread)
    assert rows(kept, *REREAD_KEY, "offset") == [
        ("c1", "h-client.log", 1, 1000),
        ("c1", "h-client.log-2", 2, 1470),
        ("c1", "h-client.log-2", 3, 1500),
    ]
    result = replay(kept, s, empty_seed(spark))
    assert rows(result.commits, "offset", "is_regression") == [(1000, False), (1470, False), (1500, False)]
    # left in, the cut row's offset reads as a regression: the defect the rule is for
    assert rows(replay(c, s, empty_seed(spark)).regressions, "offset") == [(14,)]


@pytest.mark.parametrize("broadcast_logged", [False, True], ids=["anti-join", "broadcast-logged"])
def test_a_log_line_is_corroborated_only_by_a_canonical_commit_within_the_second_after_it(
    spark, broadcast_logged
):
    def log(seconds, offset, line, queue=0):
        return commit(seconds, offset, line, queue=queue, evidence="broker_notifyme", file="broker.log")

    canonical = [
        commit(10.0, 100, 1),  # same instant as its log line: corroborates it
        commit(20.999999, 200, 2),  # the last microsecond of the second: corroborates
        commit(31.0, 300, 3),  # one full second later: does not
        commit(39.5, 400, 4),  # before the log line: does not
        commit(50.2, 501, 5),  # another offset: does not
        commit(60.2, 600, 6, queue=1),  # another queue: does not
    ]
    logs = [
        log(10, 100, 1),
        log(20, 200, 2),
        log(30, 300, 3),
        log(40, 400, 4),
        log(50, 500, 5),
        log(60, 600, 6),
    ]
    result = run(spark, canonical + logs, [], broadcast_logged=broadcast_logged)
    assert rows(result.commits, "queue_id", "committed_at", "offset", "evidence") == [
        (0, at(10.0), 100, "commit_log"),
        (0, at(20.999999), 200, "commit_log"),
        (0, at(30), 300, "broker_notifyme"),
        (0, at(31.0), 300, "commit_log"),
        (0, at(39.5), 400, "commit_log"),
        (0, at(40), 400, "broker_notifyme"),
        (0, at(50), 500, "broker_notifyme"),
        (0, at(50.2), 501, "commit_log"),
        (0, at(60), 600, "broker_notifyme"),
        (1, at(60.2), 600, "commit_log"),
    ]


def test_timeline_counts_only_positive_increments(spark):
    result = run(spark, [commit(10, 120, 1), commit(20, 90, 2), commit(30, 130, 3)], [snapshot(0, 100)])
    assert rows(result.timeline, "observed_at", "observation", "consumed_increment") == [
        (at(0), "snapshot", 0),
        (at(10), "commit", 20),
        (at(20), "commit", 0),
        (at(30), "commit", 40),
    ]


def test_checkpoint_carries_every_queue_forward(spark):
    first = run(
        spark,
        [commit(10, 120, 1, queue=0), commit(20, 90, 2, queue=0)],
        [snapshot(0, 100, queue=0), snapshot(0, 7, queue=1)],
    )
    second = run(spark, [], [], seed=first.checkpoint)
    cols = (
        "queue_id",
        "last_commit_offset",
        "last_commit_at",
        "last_commit_client_host",
        "client_offset_hwm",
        "last_snapshot_offset",
        "commit_regressions_since_snapshot",
        "last_stored_offset",
    )
    expected = [(0, 90, at(20), "10.0.0.1:5000", 120, 100, 1, 90), (1, None, None, None, None, 7, 0, 7)]
    assert rows(first.checkpoint, *cols) == expected
    assert rows(second.checkpoint, *cols) == expected


def random_history(rng: random.Random):
    commits, snapshots, offsets = [], [], {0: 1000, 1: 50}
    for line in range(1, 120):
        queue = rng.choice([0, 1])
        offsets[queue] += rng.choice([0, 3, 5, 8, -20])  # some regressions
        seconds = rng.choice([line * 7, line * 7, (line - 1) * 7])  # some ties
        commits.append(
            commit(
                seconds, max(offsets[queue], 0), line, queue=queue, file=rng.choice(["a.jsonl", "b.jsonl"])
            )
        )
    for seconds in range(0, 900, 60):
        for queue in (0, 1):
            snapshots.append(snapshot(seconds, max(offsets[queue] - rng.choice([0, 10, 40]), 0), queue=queue))
    return commits, snapshots


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_runs_give_exactly_the_rows_of_one_run(spark, seed):
    commits, snapshots = random_history(random.Random(seed))
    split = at(random.Random(seed).choice([200, 301, 420, 600]))
    c, s = frames(spark, commits, snapshots)
    whole = replay(c, s, empty_seed(spark))
    first = replay(
        c.where(F.col("committed_at") < split), s.where(F.col("snapshot_at") < split), empty_seed(spark)
    )
    second = replay(
        c.where(F.col("committed_at") >= split), s.where(F.col("snapshot_at") >= split), first.checkpoint
    )
    for name in ("commits", "timeline", "regressions"):
        one = getattr(whole, name)
        two = getattr(first, name).unionByName(getattr(second, name))
        assert rows(one, *one.columns) == rows(two, *one.columns), name
    assert rows(whole.checkpoint, *whole.checkpoint.columns) == rows(
        second.checkpoint, *whole.checkpoint.columns
    )


def test_both_corroboration_joins_drop_the_same_log_lines(spark):
    rng = random.Random(7)
    commits = []
    for line in range(1, 200):
        queue, offset, seconds = (
            rng.choice([0, 1, 2]),
            rng.randrange(0, 60),
            rng.randrange(0, 120) + rng.random(),
        )
        commits.append(commit(seconds, offset, line, queue=queue))
        for file, evidence in (("broker.log", "broker_notifyme"), ("client.log", "client_persist")):
            if rng.random() < 0.4:  # a log line told the same commit at its second, or a nearby one
                told_at = int(seconds) - rng.choice([0, 0, 0, 1, 2])
                commits.append(
                    commit(
                        told_at,
                        offset + rng.choice([0, 0, 0, 1]),
                        line,
                        queue=queue,
                        evidence=evidence,
                        file=file,
                    )
                )
    c, s = frames(spark, commits, [])
    anti_join, broadcast = (replay(c, s, empty_seed(spark), flag) for flag in (False, True))
    kept = rows(anti_join.commits, *anti_join.commits.columns)
    assert kept == rows(broadcast.commits, *anti_join.commits.columns)
    assert 199 < len(kept) < len(commits)  # some log lines were corroborated, some were not
    plan = broadcast.commits._jdf.queryExecution().executedPlan().toString()
    assert "SortMergeJoin" not in plan and "BroadcastHashJoin" in plan


def test_queues_and_files_are_numbered_in_their_sort_order(spark):
    c, s = frames(
        spark,
        [
            commit(1, 5, 1, file="b.jsonl", group="g2"),
            commit(2, 6, 2, file="a.jsonl"),
            commit(3, 7, 3, file="b.jsonl", queue=1),
        ],
        [snapshot(0, 4), snapshot(0, 4, queue=1)],
    )
    ids = EventIds.of(c, s)
    assert rows(ids.files, "_file", *FILE_KEY) == [
        (0, "a.jsonl", "h-a.jsonl"),
        (1, "b.jsonl", "h-b.jsonl"),
        (2, "snap/0/consumerOffset.json", None),  # snapshot events carry no file hash
    ]
    assert rows(ids.queues, "_queue", "consumer_group", "queue_id") == [
        (0, "g", 0),
        (1, "g", 1),
        (2, "g2", 0),
    ]
    events = build_events(c, s)
    encoded = ids.encode(events)
    assert not set(encoded.columns) & {*QUEUE_KEY, *FILE_KEY}
    assert rows(ids.decode(encoded), *events.columns) == rows(events, *events.columns)


def test_files_given_as_a_superset_number_the_events_files_in_the_same_order(spark):
    # the replay stage names the landed files from the ingest's accounting instead of scanning
    # every event for them: more files than the events come from change nothing
    same = [
        commit(10, 200, 2, file="b.jsonl"),
        commit(10, 100, 7, file="a.jsonl"),
        commit(20, 90, 1, file="c.jsonl"),
    ]
    c, s = frames(spark, same, [snapshot(0, 150)])
    named = [("0.jsonl", "h-0.jsonl"), ("a.jsonl", "h-a.jsonl"), ("ab.jsonl", "h-ab.jsonl"), ("b.jsonl", "h-b.jsonl"),
             ("b.jsonl", "h-b-2"), ("c.jsonl", "h-c.jsonl"), ("snap/0/consumerOffset.json", None), ("z", None)]  # fmt: skip
    files = spark.createDataFrame(named, "source_file string, _file_hash string")
    given, scanned = replay(c, s, empty_seed(spark), landed_files=files), replay(c, s, empty_seed(spark))
    assert given.ids.files.count() == len(named)  # the given files were numbered, not the events'
    for table in ("commits", "timeline", "regressions", "checkpoint"):
        frame = getattr(given, table)
        assert rows(frame, *frame.columns) == rows(getattr(scanned, table), *frame.columns), table


def test_commit_queues_given_as_a_superset_change_nothing(spark):
    # the replay stage takes the commits' queues from the lake's files (Lake.distinct) instead of
    # scanning the events for them: more queues than the commits are of change nothing, among them
    # a queue only the checkpoint holds, which the seed then carries into the replay
    first = run(spark, [commit(10, 120, 1)], [snapshot(0, 100), snapshot(0, 7, queue=1)])
    c, s = frames(spark, [commit(20, 90, 2), commit(30, 95, 3, queue=2)], [snapshot(25, 80)])
    named = [("c1", "broker-a", "t", group, queue) for group in ("g", "g2") for queue in (0, 1, 2, 3)]
    queues = spark.createDataFrame(
        named, "cluster string, broker string, topic string, consumer_group string, queue_id int"
    )
    given = replay(c, s, first.checkpoint, commit_queues=queues)
    scanned = replay(c, s, first.checkpoint)
    assert given.ids.queues.count() == len(named)  # the given queues were numbered, not the events'
    for table in ("commits", "timeline", "regressions", "checkpoint"):
        frame = getattr(given, table)
        assert rows(frame, *frame.columns) == rows(getattr(scanned, table), *frame.columns), table
    assert rows(given.regressions, "queue_id", "offset") == [(0, 90)]


def test_an_event_whose_queue_the_given_queues_lack_fails_the_replay(spark):
    c, s = frames(spark, [commit(10, 120, 1), commit(20, 90, 2, queue=1)], [])
    queues = spark.createDataFrame(
        [("c1", "broker-a", "t", "g", 0)],
        "cluster string, broker string, topic string, consumer_group string, queue_id int",
    )
    with pytest.raises(
        Exception, match=r"no id for the cluster/broker/topic/consumer_group/queue_id .*\"queue_id\":1"
    ):
        replay(c, s, empty_seed(spark), commit_queues=queues).commits.collect()


def test_an_event_whose_file_the_given_files_lack_fails_the_replay(spark):
    # the id joins would otherwise drop the event without a word
    c, s = frames(spark, [commit(10, 120, 1, file="a.jsonl"), commit(20, 90, 2, file="b.jsonl")], [])
    files = spark.createDataFrame([("a.jsonl", "h-a.jsonl")], "source_file string, _file_hash string")
    with pytest.raises(Exception, match=r"no id for the source_file/_file_hash .*b\.jsonl"):
        replay(c, s, empty_seed(spark), landed_files=files).commits.collect()


def test_the_replay_partitions_events_by_numbers_and_leaves_their_order_to_the_kernel(spark, capsys):
    # the queue key and file as text made each row of the replay's shuffle and sort some 200
    # bytes wider; the kernel sorts each partition by the ids (pipelines.replay.kernel.in_replay_order),
    # so Spark sorts nothing before it (docs/experiments.md, "The replay's order sorted by its kernel")
    result = run(spark, [commit(10, 120, 1), commit(20, 90, 2)], [snapshot(0, 100)])
    result.state.explain()
    plan = capsys.readouterr().out
    assert re.search(r"Exchange hashpartitioning\(_queue#\d+L, \d+\)", plan), plan
    assert not re.search(r"Sort \[_queue#", plan), plan
    kinds = {f.name: f.dataType.typeName() for f in result.state.schema.fields}
    assert [kinds[c] for c in (QUEUE_ID, *REPLAY_ORDER)] == [
        "long",
        "timestamp",
        "integer",
        "long",
        "long",
        "long",
    ]


def test_the_checkpoint_is_aggregated_by_hash_without_sorting_the_events(spark, capsys):
    # "last" by an ordering struct (a non-numeric aggregation buffer) made Spark sort every
    # event by queue for a sort aggregate: 8.8 s of a 10M-commit replay
    result = run(spark, [commit(10, 120, 1), commit(20, 90, 2)], [snapshot(0, 100)])
    result.checkpoint.explain()
    plan = capsys.readouterr().out
    assert "HashAggregate(keys=[_queue" in plan and "SortAggregate" not in plan, plan


def test_the_kept_state_holds_what_the_four_tables_read_and_no_seed_state(spark):
    # the state is cached for four tables and every cached column costs every row: the
    # checkpoint's values it continued from are folded into its own columns and leave with
    # the seed rows (a run that continues from a checkpoint carried five of them per event)
    first = run(spark, [commit(10, 120, 1)], [snapshot(0, 100)])
    result = run(spark, [commit(20, 90, 2)], [], seed=first.checkpoint)
    assert result.state.columns == [
        "_file",
        "_path",
        "_queue",
        "key_kind",
        "event_at",
        "event_rank",
        "line_rank",
        "commit_offset",
        "snapshot_offset",
        "line_no",
        "client_host",
        "evidence",
        "commit_path",
        "event_seq",
        "previous_snapshot_offset",
        "stored_offset",
        "previous_stored_offset",
        "stored_offset_before",
        "stored_before_source",
        "is_regression",
        "client_offset_after",
        "commit_regressions_between",
        "commit_regressions_after",
        "settled_commit_offset",
        "previous_commit_at",
        "previous_commit_host",
    ]
    assert rows(result.commits, *REPLAYED) == [(at(20), 90, 120, "commit", 120, True, 30)]


def test_each_broadcasting_client_replays_its_own_offsets_beside_the_brokers_table(spark):
    def client(seconds, offset, client_id):
        return (*snapshot(seconds, offset, source="client_offsets")[:8], "client_offsets",
                f"client_offsets/c1/{seconds}/{client_id}/g/offsets.json", None, client_id)  # fmt: skip

    snaps = spark.createDataFrame(
        [
            snapshot(0, 100),
            client(0, 40, "10.0.0.5@DEFAULT"),
            client(300, 70, "10.0.0.5@DEFAULT"),
            client(600, 20, "10.0.0.5@DEFAULT"),  # the client's own offset went back
            client(300, 65, "10.0.0.6@DEFAULT"),
        ],
        SNAPSHOT_SCHEMA,
    )
    files = snaps.where(F.col("snapshot_source") == "main").select(
        "cluster", "broker", "snapshot_at", F.lit("consumer_offsets").alias("document_kind"), "snapshot_source",
        "source_file", "_file_hash", F.lit(None).cast("string").alias("document_status"),
    )  # fmt: skip
    commits = spark.createDataFrame([], COMMIT_SCHEMA)
    result = replay(commits, replayed_snapshots(snaps, select_snapshot_files(files)), empty_seed(spark))
    assert rows(result.timeline, "consumer_group", "observed_at", "stored_offset", "consumed_increment") == [
        ("g", at(0), 100, 0),
        ("g@10.0.0.5@DEFAULT", at(0), 40, 0),
        ("g@10.0.0.5@DEFAULT", at(300), 70, 30),
        ("g@10.0.0.5@DEFAULT", at(600), 20, 0),
        ("g@10.0.0.6@DEFAULT", at(300), 65, 0),
    ]
    regression = ("consumer_group", "key_kind", "detected_at", "offset", "stored_offset", "evidence")
    assert rows(result.regressions, *regression) == [
        ("g@10.0.0.5@DEFAULT", "broadcast_client", at(600), 20, 70, "snapshot_pair"),
    ]
