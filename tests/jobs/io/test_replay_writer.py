"""The replay's workers writing its two tables themselves (the embedded lake): the rows
Spark's projections give, from a replay that continues from a checkpoint, in files that a
re-run rewrites under the same names."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from jobs.io.replay_writer import ReplayWriter
from pipelines.replay import replay
from schemas.tables import OFFSET_COMMITS_REPLAYED, STORED_OFFSET_TIMELINE
from tests.frames import assert_frames_equal
from tests.pipelines.replay.replay_helpers import commit, empty_seed, frames, snapshot

COMMITS = [
    commit(10, 120, 1), commit(20, 90, 2), commit(20, 95, 1, file="b.jsonl"), commit(86_400, 130, 3),  # the next day
    commit(15, 7, 1, queue=1, host=None, evidence="broker_log", file="broker.log"), commit(16, 5, 2, queue=1, file="broker.log"),
    commit(30, 40, 4, group="%RETRY%g"),
]  # fmt: skip
SNAPSHOTS = [
    snapshot(0, 100),
    snapshot(25, 80),
    snapshot(40, 60),
    snapshot(5, 3, queue=1),
    snapshot(50, 9, queue=2),
]


def landed(directory, spec):
    return pads.dataset(directory, format="parquet", partitioning="hive", schema=spec.arrow_schema).to_table()


def test_the_landed_tables_hold_the_rows_sparks_projections_give(spark, tmp_path):
    c, s = frames(spark, COMMITS, SNAPSHOTS)
    # a first interval's checkpoint to continue from: the seed rows join the replay too
    seed = replay(
        *frames(spark, [commit(1, 110, 9, file="old.jsonl")], [snapshot(2, 1, queue=2)]), empty_seed(spark)
    ).checkpoint
    seed = spark.createDataFrame(seed.collect(), seed.schema)
    plain = replay(c, s, seed)
    dirs = tmp_path / "commits", tmp_path / "timeline"
    result = replay(c, s, seed, kernel_for=lambda ids: ReplayWriter.for_ids(str(dirs[0]), str(dirs[1]), ids))
    assert result.commits is None and result.timeline is None
    kept = result.state.count()  # runs the kernel: it writes the files
    for spec, directory, expected in (
        (OFFSET_COMMITS_REPLAYED, dirs[0], plain.commits),
        (STORED_OFFSET_TIMELINE, dirs[1], plain.timeline),
    ):
        assert_frames_equal(spark.createDataFrame(landed(directory, spec).select(spec.columns)), expected)
        # the text the workers hold as dictionaries (the queue's, the file's) is text to every reader
        for file in directory.rglob("*.parquet"):
            assert not any(pa.types.is_dictionary(t) for t in pq.read_schema(file).types)
    # the regressions and the checkpoint, from the rows the workers returned
    for name in ("regressions", "checkpoint"):
        assert_frames_equal(getattr(result, name), getattr(plain, name))
    assert 0 < kept < plain.state.count()


def test_a_rerun_rewrites_the_same_files(spark, tmp_path):
    c, s = frames(spark, COMMITS, SNAPSHOTS)
    dirs = tmp_path / "commits", tmp_path / "timeline"
    names = []
    for _ in range(2):
        replay(
            c,
            s,
            empty_seed(spark),
            kernel_for=lambda ids: ReplayWriter.for_ids(str(dirs[0]), str(dirs[1]), ids),
        ).state.count()
        names.append(sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.parquet")))
    assert (
        names[0] == names[1]
        and any("commit_date=" in n for n in names[0])
        and any("observed_date=" in n for n in names[0])
    )


def test_the_kept_rows_are_read_in_the_partitions_asked_and_every_file_stays_whole(spark, tmp_path):
    c, s = frames(spark, COMMITS, SNAPSHOTS)
    plain = replay(c, s, empty_seed(spark))
    # the replay's shuffle in four partitions, as they are: the kept rows come in four
    settings = {"spark.sql.shuffle.partitions": "4", "spark.sql.adaptive.coalescePartitions.enabled": "false"}
    before = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        partitions = {}
        for kept_partitions in (None, 1):
            dirs = tmp_path / f"commits-{kept_partitions}", tmp_path / f"timeline-{kept_partitions}"
            result = replay(
                c,
                s,
                empty_seed(spark),
                kernel_for=lambda ids, dirs=dirs: ReplayWriter.for_ids(str(dirs[0]), str(dirs[1]), ids),
                kept_partitions=kept_partitions,
            )
            partitions[kept_partitions] = result.regressions.rdd.getNumPartitions()
            # the state is not cached here: the regressions replay the four partitions again, with
            # kept_partitions in one task, and each partition still writes files of its own
            for name in ("regressions", "checkpoint"):
                assert_frames_equal(getattr(result, name), getattr(plain, name))
            for spec, directory, expected in (
                (OFFSET_COMMITS_REPLAYED, dirs[0], plain.commits),
                (STORED_OFFSET_TIMELINE, dirs[1], plain.timeline),
            ):
                assert_frames_equal(
                    spark.createDataFrame(landed(directory, spec).select(spec.columns)), expected
                )
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)
    assert partitions == {None: 4, 1: 1}
