"""The table I/O module on real Spark and real Delta tables in temp directories.

Every engine available in this session is exercised: delta-rs always, native Spark Delta
when Delta's Spark extension is on the classpath (see tests/conftest.py).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, date, datetime
from itertools import product
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql.types import (
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from jobs.io.engines import VersionUnavailable
from jobs.io.lake import Lake, LakeError, rows_in_delta_logs
from schemas.tables import TableSpec
from tests.lakes import vacuum_version

SPEC = TableSpec(
    layer="test",
    name="events",
    grain="one row per event",
    keys=("event_id",),
    event_time="event_at",
    partition_by=("event_date",),
    schema=StructType(
        [
            StructField("event_id", StringType(), False),
            StructField("event_at", TimestampType(), False),
            StructField("queue_id", IntegerType(), True),
            StructField("offset", LongType(), True),
            StructField("event_date", DateType(), False),
        ]
    ),
)

# the table as an earlier version declared it, before its offset column
WITHOUT_OFFSET = replace(SPEC, schema=StructType([f for f in SPEC.schema.fields if f.name != "offset"]))


def ts(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def row(event_id: str, at: datetime, offset: int | None, queue_id: int | None = 0):
    return (event_id, at, queue_id, offset, at.date())


def frame(spark, rows):
    return spark.createDataFrame(rows, SPEC.schema)


def as_set(df):
    return {
        (r.event_id, r.event_at.replace(tzinfo=UTC), r.queue_id, r.offset, r.event_date) for r in df.collect()
    }


def as_utc(rows):
    return {(e, a, q, o, d) for e, a, q, o, d in rows}


@pytest.fixture
def lake(engine_lake):
    return engine_lake


def test_read_of_missing_table_is_empty_with_schema(lake):
    df = lake.read(SPEC)
    assert df.schema.names == SPEC.columns
    assert df.collect() == []
    assert not lake.exists(SPEC)


def test_append_then_read_gives_rows_readable_by_deltalake(spark, lake):
    rows = [row("a", ts(21, 10), 5), row("b", ts(22, 1), None, None)]
    lake.append(SPEC, frame(spark, rows))
    assert as_set(lake.read(SPEC)) == as_utc(rows)

    table = DeltaTable(lake.path(SPEC))
    arrow = table.to_pyarrow_table().sort_by("event_id").to_pylist()
    assert [(r["event_id"], r["offset"], r["event_date"]) for r in arrow] == [
        ("a", 5, date(2026, 11, 21)),
        ("b", None, date(2026, 11, 22)),
    ]
    assert table.metadata().partition_columns == ["event_date"]


def test_read_range_selects_half_open_interval(spark, lake):
    rows = [row("a", ts(21, 9), 1), row("b", ts(21, 10), 2), row("c", ts(21, 11), 3)]
    lake.append(SPEC, frame(spark, rows))
    got = lake.read(SPEC, start=ts(21, 10), end=ts(21, 11))
    assert as_set(got) == as_utc([rows[1]])


def test_replace_range_replaces_only_rows_inside_it(spark, lake):
    day1 = [
        row("a", ts(21, 9), 1),
        row("b", ts(21, 10), 2),
        row("c", ts(21, 10, 30), 3),
        row("d", ts(21, 11), 4),
    ]
    lake.append(SPEC, frame(spark, day1))  # one file straddling the range's edges
    replacement = [row("b2", ts(21, 10, 5), 20)]
    lake.replace_range(SPEC, frame(spark, replacement), ts(21, 10), ts(21, 11))
    assert as_set(lake.read(SPEC)) == as_utc([day1[0], replacement[0], day1[3]])

    # re-running the same replacement leaves the table unchanged
    lake.replace_range(SPEC, frame(spark, replacement), ts(21, 10), ts(21, 11))
    assert as_set(lake.read(SPEC)) == as_utc([day1[0], replacement[0], day1[3]])


def test_replace_range_on_new_table_creates_it(spark, lake):
    rows = [row("a", ts(21, 10), 1)]
    lake.replace_range(SPEC, frame(spark, rows), ts(21, 0), ts(22, 0))
    assert as_set(lake.read(SPEC)) == as_utc(rows)


def test_overwrite_replaces_everything(spark, lake):
    lake.append(SPEC, frame(spark, [row("a", ts(21, 10), 1)]))
    lake.overwrite(SPEC, frame(spark, [row("z", ts(23, 10), 9)]))
    assert as_set(lake.read(SPEC)) == as_utc([row("z", ts(23, 10), 9)])


def test_merge_updates_matches_and_inserts_the_rest(spark, lake):
    lake.merge(SPEC, frame(spark, [row("a", ts(21, 10), 1), row("b", ts(21, 11), 2)]))
    lake.merge(SPEC, frame(spark, [row("b", ts(21, 11), 22), row("c", ts(21, 12), 3)]))
    assert as_set(lake.read(SPEC)) == as_utc(
        [row("a", ts(21, 10), 1), row("b", ts(21, 11), 22), row("c", ts(21, 12), 3)]
    )


def test_merge_rows_from_the_driver_upserts_like_a_merge_of_a_frame(spark, lake, tmp_path):
    """A run's own records, merged from the driver's rows (the embedded engine commits them
    without a Spark job), leave the table a merge of the same rows as a frame leaves, and a new
    table starts from them."""
    first = [row("a", ts(21, 10), 1), row("b", ts(21, 11), 2)]
    second = [row("b", ts(21, 11), 22), row("c", ts(21, 12), None, queue_id=None)]
    lake.merge_rows(SPEC, first)
    lake.merge_rows(SPEC, second)
    framed = Lake(spark, tmp_path / "framed", engine=lake.engine_name)
    framed.merge(SPEC, frame(spark, first))
    framed.merge(SPEC, frame(spark, second))
    assert (
        as_set(lake.read(SPEC))
        == as_set(framed.read(SPEC))
        == as_utc(
            [row("a", ts(21, 10), 1), row("b", ts(21, 11), 22), row("c", ts(21, 12), None, queue_id=None)]
        )
    )
    # any Delta reader sees the same rows, partitioned as Spark's writes are
    if lake.engine_name == "delta-rs":
        table = DeltaTable(lake.path(SPEC))
        assert table.metadata().partition_columns == ["event_date"]
        assert sorted(table.to_pyarrow_table().column("offset").to_pylist(), key=str) == [1, 22, None]


def test_merge_rows_refuses_a_row_of_another_width(lake):
    with pytest.raises(ValueError):
        lake.merge_rows(SPEC, [("a", ts(21, 10), 0, 1)])


def test_write_rejects_frame_missing_contract_columns(spark, lake):
    df = frame(spark, [row("a", ts(21, 10), 1)]).drop("offset")
    with pytest.raises(LakeError, match=r"columns \['offset'\] are missing"):
        lake.append(SPEC, df)


def test_delta_rs_files_carry_statistics_for_skipping(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(SPEC, frame(spark, [row("a", ts(21, 10), 7), row("b", ts(21, 12), 9)]).coalesce(1))
    actions = pa.table(DeltaTable(lake.path(SPEC)).get_add_actions(flatten=True)).to_pylist()
    assert len(actions) == 1
    assert actions[0]["num_records"] == 2
    assert actions[0]["partition.event_date"] == date(2026, 11, 21)
    assert actions[0]["min.offset"] == 7 and actions[0]["max.offset"] == 9
    log = sorted((tmp_path / "lake" / "test" / "events" / "_delta_log").glob("*.json"))
    add = next(json.loads(line)["add"] for line in log[-1].read_text().splitlines() if "add" in line)
    assert json.loads(add["stats"])["minValues"]["event_at"] == "2026-11-21T10:00:00.000Z"


def test_delta_rs_writes_high_cardinality_columns_without_a_dictionary(spark, tmp_path):
    from dataclasses import replace

    spec = replace(SPEC, high_cardinality=("offset", "event_at"))
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    rows = [row(f"e{i % 3}", ts(21, 10, i % 60), 1000 + i) for i in range(200)]
    lake.append(spec, frame(spark, rows).coalesce(1))
    (file,) = (tmp_path / "lake" / "test" / "events").rglob("*.parquet")
    group = pq.ParquetFile(file).metadata.row_group(0)
    dictionary = {
        group.column(c).path_in_schema: group.column(c).has_dictionary_page for c in range(group.num_columns)
    }
    assert dictionary == {"event_id": True, "event_at": False, "queue_id": True, "offset": False}
    assert as_set(lake.read(spec)) == as_utc(rows)


def test_spark_engine_without_extension_is_a_clear_error(spark, tmp_path):
    from jobs.runtime.session import native_delta_available

    if native_delta_available(spark):
        pytest.skip("the extension is present in this session")
    with pytest.raises(LakeError, match="needs Delta's Spark extension"):
        Lake(spark, tmp_path / "lake", engine="spark")


def test_append_once_as_skips_a_repeated_transaction(spark, lake):
    rows = [row("a", ts(21, 10), 1)]
    assert lake.append(SPEC, frame(spark, rows), once_as="ingest-batch-1") is True
    assert lake.append(SPEC, frame(spark, rows), once_as="ingest-batch-1") is False
    assert lake.append(SPEC, frame(spark, [row("b", ts(21, 11), 2)]), once_as="ingest-batch-2") is True
    assert as_set(lake.read(SPEC)) == as_utc([rows[0], row("b", ts(21, 11), 2)])


def test_row_count_matches_rows_after_replace(spark, lake):
    lake.append(
        SPEC, frame(spark, [row("a", ts(21, 9), 1), row("b", ts(21, 10), 2), row("c", ts(21, 11), 3)])
    )
    lake.replace_range(
        SPEC, frame(spark, [row("d", ts(21, 10, 5), 4), row("e", ts(21, 10, 6), 5)]), ts(21, 10), ts(21, 11)
    )
    assert lake.row_count(SPEC) == 4


def test_one_task_meeting_more_dates_than_open_writers_lands_every_row_under_its_date(spark, lake):
    # a partitioned write keeps up to CONCURRENT_WRITERS files open per task, unsorted, and
    # sorts what is left once a task meets more dates than that: one task meets more here (the
    # test checks where the rows land, not which of Spark's two paths wrote them)
    from jobs.runtime.session import CONCURRENT_WRITERS

    days = range(1, CONCURRENT_WRITERS + 5)
    rows = [row(f"e{i}", ts(days[i % len(days)], i % 24), i) for i in range(10 * len(days))]
    lake.append(SPEC, frame(spark, rows).coalesce(1))
    assert as_set(lake.read(SPEC)) == as_utc(rows)
    per_date = lake.read(SPEC).groupBy("event_date").count().collect()
    assert {r.event_date: r["count"] for r in per_date} == {date(2026, 11, d): 10 for d in days}


def one_file(spark, rows):
    return frame(spark, rows).coalesce(1)


def test_row_count_of_a_range_counts_the_rows_the_range_reads(spark, lake):
    # files wholly inside the range are counted from the Delta log, the others are scanned:
    # one file per append, one of them with a row less than a millisecond past the range's end
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 9), 1), row("b", ts(21, 10), 2)]))
    lake.append(SPEC, one_file(spark, [row("c", ts(21, 10, 30), 3), row("d", ts(21, 10, 40), 4)]))
    lake.append(
        SPEC, one_file(spark, [row("e", ts(21, 11), 5), row("f", ts(21, 11).replace(microsecond=400), 6)])
    )
    lake.append(SPEC, one_file(spark, [row("g", ts(22, 1), 7)]))
    end = ts(21, 11).replace(microsecond=300)
    for start, stop in [
        (ts(21, 10), end),
        (ts(21, 10, 30), ts(21, 10, 41)),
        (None, end),
        (ts(21, 11), None),
        (ts(23, 0), None),
    ]:
        assert lake.row_count(SPEC, start=start, end=stop) == lake.read(SPEC, start=start, end=stop).count()
    assert lake.row_count(SPEC, start=ts(21, 10), end=end) == 4


def test_the_distinct_rows_of_a_range_are_those_a_read_of_the_range_holds(spark, lake, monkeypatch):
    # the replay's queue dictionary (jobs.stages.replay): the embedded engine reads it from the
    # files on the driver, and must cut the files that straddle the range's edges as a read does
    assert lake.distinct(SPEC, ("queue_id",)).collect() == []  # a table not written yet
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 9), 1, 1), row("b", ts(21, 10), 2, 2)]))
    lake.append(SPEC, one_file(spark, [row("c", ts(21, 10, 30), 3, 2), row("d", ts(21, 10, 40), None, None)]))
    lake.append(
        SPEC,
        one_file(spark, [row("e", ts(21, 11), 5, 3), row("f", ts(21, 11).replace(microsecond=400), 6, 4)]),
    )
    lake.append(SPEC, one_file(spark, [row("g", ts(22, 1), 7, 2)]))
    end = ts(21, 11).replace(microsecond=300)
    ranges = [(ts(21, 10), end), (ts(21, 10, 30), ts(21, 10, 41)), (None, end), (ts(21, 11), None), (None, None),
              (ts(23, 0), None)]  # fmt: skip
    asked = list(product(ranges, [("queue_id",), ("event_id", "queue_id"), ("offset", "queue_id")]))
    expected = []
    for (start, stop), columns in asked:
        read = lake.read(SPEC, start=start, end=stop).select(*columns).distinct()
        expected.append((read.dtypes, Counter(map(tuple, read.collect()))))
    scans = []
    if lake.engine_name == "delta-rs":  # its only way to Spark's reader
        original = lake._engine._read_files
        monkeypatch.setattr(lake._engine, "_read_files", lambda *args: scans.append(args) or original(*args))
    for ((start, stop), columns), (types, distinct) in zip(asked, expected, strict=True):
        found = lake.distinct(SPEC, columns, start=start, end=stop)
        assert found.dtypes == types
        assert Counter(map(tuple, found.collect())) == distinct, (start, stop, columns)
    assert scans == []
    queues = lake.distinct(SPEC, ("queue_id",), start=ts(21, 10), end=end).collect()
    assert sorted(queues, key=str) == [(2,), (3,), (None,)]
    with pytest.raises(LakeError, match=r"\['event_date'\] are partition columns"):
        lake.distinct(SPEC, ("event_date", "queue_id"))


def test_the_distinct_rows_of_a_column_a_file_lacks_are_its_nulls(spark, lake):
    # a file an earlier version wrote may lack a column the table now declares, even as not null:
    # a read gives its rows nulls there, and so does the dictionary read beside it
    earlier = WITHOUT_OFFSET
    declared = replace(
        SPEC,
        schema=StructType(
            [
                StructField("offset", LongType(), False) if f.name == "offset" else f
                for f in SPEC.schema.fields
            ]
        ),
    )
    lake.append(earlier, spark.createDataFrame([("a", ts(21, 10), 0, date(2026, 11, 21))], earlier.schema))
    lake.append(declared, frame(spark, [row("b", ts(21, 11), 7, 1)]))
    found = lake.distinct(declared, ("offset", "queue_id"), start=ts(21, 0), end=ts(22, 0))
    expected = lake.read(declared, start=ts(21, 0), end=ts(22, 0)).select("offset", "queue_id").distinct()
    assert sorted(map(tuple, found.collect()), key=str) == sorted(map(tuple, expected.collect()), key=str)
    assert sorted(map(tuple, found.collect()), key=str) == [(7, 1), (None, 0)]


def test_the_rows_in_delta_logs_are_those_of_the_files_a_job_reads_or_rewrites(spark, lake):
    # what a stage's JVM is sized by before its session starts (jobs.stages.replay.rows_taken)
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 9), 1), row("b", ts(21, 10), 2)]))
    lake.append(SPEC, one_file(spark, [row("c", ts(21, 10, 30), 3)]))
    lake.append(SPEC, one_file(spark, [row("d", ts(22, 1), 4)]))
    unwritten = TableSpec(
        layer="test", name="unwritten", grain="one row per event", keys=("event_id",),
        event_time="event_at", schema=SPEC.schema,
    )  # fmt: skip
    assert rows_in_delta_logs(lake.root, [SPEC], ts(21, 10, 15), ts(21, 12)) == 1
    # a file read counts whole
    assert rows_in_delta_logs(lake.root, [SPEC], ts(21, 9, 30), ts(21, 10, 31)) == 3
    assert rows_in_delta_logs(lake.root, [SPEC, unwritten], None, None) == 4
    assert rows_in_delta_logs(lake.root, [SPEC], ts(23, 0), None) == 0
    assert rows_in_delta_logs(f"file://{lake.root}", [SPEC], None, None) == 4
    # a replace of [21 9:30, 21 10:31) rewrites the first file, which straddles its start, and drops
    # the second whole, unread
    assert rows_in_delta_logs(lake.root, [], ts(21, 9, 30), ts(21, 10, 31), rewrites=[SPEC]) == 2
    assert rows_in_delta_logs(lake.root, [unwritten], ts(21, 9, 30), ts(21, 10, 31), rewrites=[SPEC]) == 2
    # no log is read off this machine
    assert rows_in_delta_logs("s3://bucket/lake", [SPEC], None, None) is None


def test_a_log_that_cannot_be_read_leaves_its_rows_unknown(spark, lake, caplog):
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 9), 1)]))
    log_dir = Path(lake.path(SPEC)) / "_delta_log"
    for commit in log_dir.glob("*.json"):
        commit.write_text("not a Delta log\n")
    assert rows_in_delta_logs(lake.root, [SPEC], None, None) is None
    assert "not counted" in caplog.text


def test_row_count_of_a_range_needs_an_event_time(spark, lake):
    spec = TableSpec(
        layer="test", name="no_time", grain="one row per event", keys=("event_id",), schema=SPEC.schema
    )
    lake.overwrite(spec, frame(spark, [row("a", ts(21, 9), 1)]))
    with pytest.raises(LakeError, match="no event time"):
        lake.row_count(spec, start=ts(21, 9))


def test_a_file_is_within_a_range_only_when_its_statistics_prove_it():
    from jobs.io.engines.delta_rs import DeltaRsEngine

    at = lambda micros: ts(21, 10).replace(microsecond=micros)  # noqa: E731
    file = {"min": at(0), "max": at(1000), "null_times": 0}  # statistics in milliseconds
    assert DeltaRsEngine._within(file, at(0), at(2000))
    assert not DeltaRsEngine._within(file, at(0), at(1500))  # a floored maximum may hide a row at 1.9 ms
    assert not DeltaRsEngine._within(file, at(1), None)
    assert not DeltaRsEngine._within({**file, "null_times": 1}, at(0), at(2000))  # a row without a time
    assert not DeltaRsEngine._within({**file, "null_times": None}, at(0), at(2000))  # no null count
    assert not DeltaRsEngine._within({"min": None, "max": None, "null_times": 0}, at(0), None)
    assert DeltaRsEngine._within({"min": None, "max": None, "null_times": None}, None, None)
    # a range that starts less than a millisecond past a file's maximum may still hold its last row
    assert DeltaRsEngine._overlaps(file, at(1500), None)
    assert not DeltaRsEngine._overlaps(file, at(2000), None)


def test_a_replace_keeps_the_rows_past_its_end_that_a_rounded_down_maximum_hides(spark, lake, monkeypatch):
    """Another writer's file may record its maximum event time rounded down to the millisecond: a range ending
    inside that millisecond does not hold the file whole, so the file is rewritten, not dropped."""
    if lake.engine_name != "delta-rs":
        pytest.skip("the embedded engine's copy-on-write replace")
    past_end = ts(21, 10).replace(microsecond=500)
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 10), 1), row("b", past_end, 2)]))
    engine, listed = lake._engine, lake._engine._active_files

    def rounded_down(table, spec):  # as a writer that truncates its statistics records them
        return [{**f, "max": f["max"].replace(microsecond=0)} for f in listed(table, spec)]

    monkeypatch.setattr(engine, "_active_files", rounded_down)
    lake.replace_range(SPEC, None, ts(21, 9), ts(21, 10).replace(microsecond=300))
    monkeypatch.undo()
    assert {r.event_id for r in lake.read(SPEC).collect()} == {"b"}


def test_the_log_bounds_integers_dates_and_timestamps_and_counts_the_nulls_of_the_rest():
    from jobs.io.engines.delta_rs import _column_statistics
    from schemas.statistics import ColumnStatistics

    floats = {"null_count.x": 0, "min.x": 1.0, "max.x": 2.0}  # a NaN would lie beyond the range
    assert _column_statistics(floats, "x", 2, "nulls") == ColumnStatistics(0)
    assert _column_statistics(floats, "x", 2, "ranged") == ColumnStatistics(0, 1.0, 2.0)
    assert _column_statistics({"partition.day": None}, "day", 2, "partition") == ColumnStatistics(2)
    assert _column_statistics({}, "day", 2, "partition") is None  # a file not partitioned by it
    assert _column_statistics({"null_count.x": 1}, "x", 2, "ranged") == ColumnStatistics(
        1
    )  # values, no range


def test_a_range_the_statistics_settle_is_counted_without_reading_a_file(spark, lake, monkeypatch):
    if lake.engine_name != "delta-rs":
        pytest.skip("the embedded engine's counting from statistics")
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 9), 1), row("b", ts(21, 10), 2)]))
    lake.append(SPEC, one_file(spark, [row("c", ts(21, 10, 30), 3), row("d", ts(21, 10, 40), 4)]))
    read, original = [], lake._engine._read_files

    def recording(path, spec, files):  # the engine's only way to Spark when it counts
        read.append(len(files))
        return original(path, spec, files)

    monkeypatch.setattr(lake._engine, "_read_files", recording)
    assert (
        lake.row_count(SPEC, start=ts(21, 10, 30), end=ts(21, 10, 41)) == 2
    )  # the second file, wholly inside
    assert read == []
    assert (
        lake.row_count(SPEC, start=ts(21, 9, 30), end=ts(21, 10, 41)) == 3
    )  # the first file straddles the start
    assert read == [1]


def test_the_logs_statistics_bound_what_a_read_of_a_range_holds(spark, lake):
    from schemas.statistics import ColumnStatistics, TableStatistics

    assert lake.statistics(SPEC) == TableStatistics(0, True)  # no table: no rows
    late = ts(21, 10).replace(microsecond=400)
    lake.append(SPEC, one_file(spark, [row("a", ts(21, 9), 1), row("b", late, None, queue_id=None)]))
    if lake.engine_name != "delta-rs":
        assert lake.statistics(SPEC) is None  # Spark's Delta reader does not tell them
        return
    lake.append(
        SPEC, one_file(spark, [row("c", ts(21, 10, 30), 3), row("d", ts(22, 1), 4)])
    )  # two dates: two files
    whole = lake.statistics(SPEC)
    assert (whole.rows, whole.exact) == (4, True)
    assert whole.columns["offset"] == ColumnStatistics(1, 1, 4)
    assert whole.columns["queue_id"] == ColumnStatistics(1, 0, 0)
    assert whole.columns["event_id"] == ColumnStatistics(0)  # text: its nulls only
    assert whole.columns["event_date"] == ColumnStatistics(0, date(2026, 11, 21), date(2026, 11, 22))
    # a timestamp's statistics are milliseconds: its upper bound is one past the file's
    assert whole.columns["event_at"] == ColumnStatistics(0, ts(21, 9), ts(22, 1).replace(microsecond=1000))

    some = lake.statistics(SPEC, start=ts(21, 10), end=ts(21, 11))  # the first file reaches before the range
    assert (some.rows, some.exact, some.columns["offset"]) == (3, False, ColumnStatistics(1, 1, 3))
    inside = lake.statistics(SPEC, start=ts(21, 10, 30), end=ts(21, 10, 31))
    assert (
        (inside.rows, inside.exact)
        == (1, True)
        == (lake.read(SPEC, start=ts(21, 10, 30), end=ts(21, 10, 31)).count(), True)
    )


def test_a_column_some_row_group_has_no_statistics_for_gets_none_in_the_files(tmp_path, monkeypatch):
    """A partial null count or range would let a reader skip the file for a row it holds."""
    from types import SimpleNamespace as Stats

    from jobs.io.engines import delta_rs

    def group(offset_stats):
        columns = [
            Stats(
                path_in_schema="queue_id",
                statistics=Stats(has_null_count=True, null_count=0, has_min_max=True, min=1, max=2),
            ),
            Stats(path_in_schema="offset", statistics=offset_stats),
        ]
        return Stats(num_rows=2, num_columns=2, column=columns.__getitem__)

    groups = [
        group(Stats(has_null_count=True, null_count=0, has_min_max=True, min=5, max=9)),
        group(None),  # this row group's writer kept no statistics of the column
    ]
    meta = Stats(num_rows=4, num_row_groups=2, row_group=groups.__getitem__)
    monkeypatch.setattr(delta_rs.pq, "ParquetFile", lambda file: Stats(metadata=meta))
    stats = json.loads(delta_rs.file_stats(tmp_path / "part.parquet", SPEC))
    assert stats == {
        "numRecords": 4,
        "minValues": {"queue_id": 1},
        "maxValues": {"queue_id": 2},
        "nullCount": {"queue_id": 0},
    }
    groups[1] = group(Stats(has_null_count=True, null_count=1, has_min_max=False))  # a value, no range
    stats = json.loads(delta_rs.file_stats(tmp_path / "part.parquet", SPEC))
    assert stats["nullCount"] == {"queue_id": 0, "offset": 1} and "offset" not in stats["minValues"]


@pytest.mark.parametrize("write", ["replace_range", "merge"])
def test_a_column_a_later_version_declares_joins_a_table_an_earlier_one_wrote(spark, lake, write):
    earlier = WITHOUT_OFFSET
    lake.append(earlier, spark.createDataFrame([("a", ts(21, 10), 0, date(2026, 11, 21))], earlier.schema))
    if write == "merge":  # an update of the earlier row and a new row, both with the new column
        lake.merge(SPEC, frame(spark, [row("a", ts(21, 10), 5), row("b", ts(22, 1), 7)]))
    else:
        lake.replace_range(SPEC, frame(spark, [row("b", ts(22, 1), 7)]), ts(22, 0), ts(23, 0))

    table = DeltaTable(lake.path(SPEC))
    assert [f.name for f in table.schema().fields] == [*earlier.columns, "offset"]
    arrow = table.to_pyarrow_table().sort_by("event_id").to_pylist()
    assert [(r["event_id"], r["offset"]) for r in arrow] == [("a", 5 if write == "merge" else None), ("b", 7)]


def test_a_table_an_earlier_version_described_gets_the_declared_keys_on_its_next_write(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    earlier = TableSpec(
        layer=SPEC.layer,
        name=SPEC.name,
        grain=SPEC.grain,
        keys=("offset",),
        event_time=SPEC.event_time,
        partition_by=SPEC.partition_by,
        schema=SPEC.schema,
    )
    lake.append(earlier, frame(spark, [row("a", ts(21, 10), 1)]))
    assert (
        DeltaTable(lake.path(SPEC)).metadata().description == "test.events: one row per event; keys: offset"
    )

    lake.append(SPEC, frame(spark, [row("b", ts(21, 11), 2)]))
    table = DeltaTable(lake.path(SPEC))
    assert table.metadata().description == "test.events: one row per event; keys: event_id"
    version = table.version()
    lake.append(SPEC, frame(spark, [row("c", ts(21, 12), 3)]))
    # an up-to-date description costs no commit of its own
    assert DeltaTable(lake.path(SPEC)).version() == version + 1


def test_an_earlier_version_reads_as_it_was_and_a_missing_one_is_a_clear_error(spark, lake):
    assert lake.version(SPEC) is None
    lake.append(SPEC, frame(spark, [row("a", ts(21, 10), 5)]))
    first = lake.version(SPEC)
    lake.merge_rows(SPEC, [row("a", ts(21, 10), 6), row("b", ts(21, 11), 7)])
    assert lake.version(SPEC) > first

    assert as_set(lake.read_version(SPEC, first)) == as_utc([row("a", ts(21, 10), 5)])
    assert as_set(lake.read(SPEC)) == as_utc([row("a", ts(21, 10), 6), row("b", ts(21, 11), 7)])
    with pytest.raises(VersionUnavailable, match="version 99"):
        lake.read_version(SPEC, 99)


def test_a_version_whose_files_were_vacuumed_is_unavailable_before_spark_reads(spark, lake):
    lake.append(SPEC, frame(spark, [row("a", ts(21, 10), 5)]))
    first = lake.version(SPEC)
    lake.overwrite(SPEC, frame(spark, [row("b", ts(21, 11), 7)]))
    vacuum_version(lake.path(SPEC), first)

    with pytest.raises(VersionUnavailable, match="1 of its files vacuumed"):
        lake.read_version(SPEC, first)
    assert as_set(lake.read(SPEC)) == as_utc([row("b", ts(21, 11), 7)])
