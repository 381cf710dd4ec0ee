"""The table suites run with Great Expectations: they pass on good rows and name what fails on bad ones."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from pyspark.sql.types import StructField, StructType

from jobs.quality.checks import CHECK_NAMES
from jobs.quality.one_pass import OnePassRunner
from pipelines.monitoring import CHECKS
from schemas import tables as t
from schemas.quality import SUITES, Param, QualitySettings

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
END = datetime(2026, 11, 21, 11, tzinfo=UTC)
PARAMS = {
    Param.INTERVAL_START: START,
    Param.INTERVAL_END: END,
    Param.FIRST_DATE: date(2026, 11, 21),
    Param.LAST_DATE: date(2026, 11, 21),
    Param.MAX_QUEUE_ID: QualitySettings().max_queue_id,
}
SUITE = {s.table_name: s for s in SUITES}


def at(minute: int, hour: int = 10) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


def test_every_bronze_silver_and_gold_table_has_a_suite_on_its_keys():
    for spec in (*t.BRONZE_TABLES, *t.SILVER_TABLES, *t.GOLD_TABLES):
        suite = SUITE[f"{spec.layer}.{spec.name}"]
        by_name = {e.name: e for e in suite.expectations}
        assert by_name["keys_not_null"].columns == spec.keys
        assert by_name["keys_unique"].columns == spec.keys
        assert all(c in spec.columns for e in suite.expectations for c in e.columns), spec.name
    assert len(CHECK_NAMES) == sum(len(s.expectations) for s in SUITES) + len(CHECKS)
    assert "gold.consumer_lag.event_time_in_interval" in CHECK_NAMES


def frame(spark, spec, rows: list[dict], defaults: dict):
    """Rows of ``spec`` (every column nullable, so broken rows can be built)."""
    schema = StructType([StructField(f.name, f.dataType, True) for f in spec.schema.fields])
    return spark.createDataFrame(
        [tuple({**defaults, **r}.get(c) for c in spec.columns) for r in rows], schema
    )


SNAPSHOT = {
    "cluster": "c1", "broker": "broker-a", "snapshot_at": at(5), "topic": "orders", "consumer_group": "billing",
    "key_kind": "normal", "queue_id": 0, "offset": 10, "snapshot_source": "main", "source_file": "f", "line_no": None,
    "_file_hash": "h", "_ingest_run_id": "r", "snapshot_date": date(2026, 11, 21),
}  # fmt: skip
LAG = {
    "cluster": "c1", "broker": "broker-a", "topic": "orders", "consumer_group": "billing", "queue_id": 0,
    "observed_at": at(5), "broker_offset": 100, "broker_min_offset": 0, "consumer_offset": 90,
    "consumer_offset_at": at(4), "reported_consumer_offset": None, "lag_messages": 10, "observed_date": date(2026, 11, 21),
}  # fmt: skip


@pytest.fixture(scope="module", params=["one_pass", "great_expectations"])
def runner(request):
    """Both engines of the suites: each test holds them to the same outcomes."""
    if request.param == "one_pass":
        return OnePassRunner(sample_size=5)
    from jobs.quality.gx_adapter import SuiteRunner

    return SuiteRunner(sample_size=5)


def outcomes(runner, df, table_name):
    return {
        o.check_name.removeprefix(table_name + "."): o for o in runner.validate(df, SUITE[table_name], PARAMS)
    }


def test_snapshot_suite_passes_on_good_rows(spark, runner):
    rows = [
        {},
        {"queue_id": 1, "offset": 0},
        {"snapshot_source": "bak", "key_kind": "retry", "topic": "%RETRY%billing"},
    ]
    found = outcomes(runner, frame(spark, t.OFFSET_SNAPSHOTS, rows, SNAPSHOT), "bronze.offset_snapshots")
    assert {name: (o.is_success, o.failing_rows, o.message) for name, o in found.items()} == dict.fromkeys(("keys_not_null", "keys_unique", "queue_ids_in_range", "offsets_in_range", "partition_in_interval", "snapshot_source_known", "key_kind_known"), (True, 0, "passed"))  # fmt: skip


def test_snapshot_suite_names_every_failure(spark, runner):
    rows = [
        {},
        {},  # the same key twice
        {"queue_id": 70000, "offset": -1},
        {"queue_id": 2, "cluster": None, "snapshot_source": "tmp"},
        {"queue_id": 3, "snapshot_date": date(2026, 11, 22)},
    ]
    found = outcomes(runner, frame(spark, t.OFFSET_SNAPSHOTS, rows, SNAPSHOT), "bronze.offset_snapshots")
    failed = {name: (o.failing_rows, o.message) for name, o in found.items() if not o.is_success}
    assert failed == {
        "keys_not_null": (1, "cluster: 1 of 5 rows fail"),
        "keys_unique": (
            2,
            "(cluster, broker, snapshot_at, snapshot_source, topic, consumer_group, queue_id, source_file, _file_hash): 2 of 5 rows fail",
        ),
        "queue_ids_in_range": (1, "queue_id: 1 of 5 rows fail"),
        "offsets_in_range": (1, "offset: 1 of 5 rows fail"),
        "partition_in_interval": (1, "snapshot_date: 1 of 5 rows fail"),
        "snapshot_source_known": (1, "snapshot_source: 1 of 5 rows fail"),
    }
    assert found["queue_ids_in_range"].sample == ({"column": "queue_id", "value": 70000},)
    assert found["snapshot_source_known"].sample == ({"column": "snapshot_source", "value": "tmp"},)
    assert found["partition_in_interval"].sample == ({"column": "snapshot_date", "value": "2026-11-22"},)


def test_gold_lag_suite_checks_the_interval_and_offset_times(spark, runner):
    good = outcomes(
        runner,
        frame(spark, t.CONSUMER_LAG, [{}, {"queue_id": 1, "observed_at": at(59, 10)}], LAG),
        "gold.consumer_lag",
    )
    assert all(o.is_success for o in good.values()), {
        n: o.message for n, o in good.items() if not o.is_success
    }

    rows = [
        {},
        {"queue_id": 1, "observed_at": END},  # the interval's end is excluded
        {"queue_id": 2, "observed_at": at(59, 9), "consumer_offset_at": at(58, 9)},
        {"queue_id": 3, "consumer_offset_at": at(6)},  # offset taken after the observation
        {
            "queue_id": 4,
            "consumer_offset_at": None,
            "consumer_offset": None,
            "lag_messages": None,
        },  # nothing known: fine
    ]
    found = outcomes(runner, frame(spark, t.CONSUMER_LAG, rows, LAG), "gold.consumer_lag")
    failed = {name: (o.failing_rows, o.message) for name, o in found.items() if not o.is_success}
    assert failed == {
        "event_time_in_interval": (2, "observed_at: 2 of 5 rows fail"),
        "consumer_offset_not_after_observation": (1, "observed_at vs consumer_offset_at: 1 of 5 rows fail"),
    }
    assert sorted(v["value"] for v in found["event_time_in_interval"].sample) == [
        "2026-11-21T09:59:00",
        "2026-11-21T11:00:00",
    ]


THROUGHPUT = {
    "cluster": "c1", "topic": "orders", "consumer_group": "billing", "window_start": at(0), "window_end": at(0, 11),
    "messages_consumed": 10, "messages_per_second": 0.5, "observations": 2, "window_date": date(2026, 11, 21),
}  # fmt: skip


def test_both_engines_agree_on_every_kind_of_failure(spark):
    """Strict pairs, strict bounds, open bounds, duplicated and null compound keys, nulls that pass."""
    from jobs.quality.gx_adapter import SuiteRunner

    rows = [
        {},
        {},  # a duplicated key
        {"window_start": at(5), "window_end": at(5)},  # window_end not after window_start
        {"window_start": at(6), "window_end": None, "messages_consumed": -1},  # a null end passes the pair
        {"window_start": at(7), "messages_per_second": None, "observations": -3},
        {"window_start": None, "cluster": None, "topic": None, "consumer_group": None},  # keys all null
        {"window_start": at(0, 11)},  # the interval's end is excluded
    ]
    params = {**PARAMS, Param.THROUGHPUT_FROM: START, Param.THROUGHPUT_FIRST_DATE: date(2026, 11, 21)}
    df = frame(spark, t.CONSUME_THROUGHPUT, rows, THROUGHPUT)
    suite = SUITE["gold.consume_throughput"]
    ours = OnePassRunner(sample_size=10).validate(df, suite, params)
    theirs = SuiteRunner(sample_size=10).validate(df, suite, params)
    assert [(o.check_name, o.is_success, o.failing_rows, o.message) for o in ours] == [
        (o.check_name, o.is_success, o.failing_rows, o.message) for o in theirs
    ]
    assert not all(o.is_success for o in ours)
    for mine, ge in zip(ours, theirs, strict=True):
        assert sorted(map(repr, mine.sample)) == sorted(map(repr, ge.sample)), mine.check_name


def _measured(outcomes) -> list:
    return [
        (o.check_name, o.is_success, o.failing_rows, o.message, sorted(map(repr, o.sample))) for o in outcomes
    ]


# (SHARED_UP_TO, HASHES_ON_DRIVER_UP_TO): every table's hashes shuffled; each table's on the driver
# alone; the tables' in several shared batches (the largest table here has 5 rows); all in one
UNIQUENESS_WAYS = pytest.mark.parametrize(
    ("shared_up_to", "driver_up_to"),
    [(0, 0), (0, 20_000_000), (5, 5), (1_000_000, 20_000_000)],
    ids=["shuffled_hashes", "each_alone", "shared_batches", "all_together"],
)


@UNIQUENESS_WAYS
def test_suites_measured_together_give_what_each_gives_alone(spark, monkeypatch, shared_up_to, driver_up_to):
    """Tables measured together, their counts in one action and the small ones' keys in another, each get
    the outcome Great Expectations gives it alone: a table with failures and duplicated keys, an empty one,
    a passing one, and a second table with duplicates (so the uniqueness results are not swapped)."""
    import jobs.quality.one_pass as one_pass
    from jobs.quality.gx_adapter import SuiteRunner

    monkeypatch.setattr(one_pass, "SHARED_UP_TO", shared_up_to)
    monkeypatch.setattr(one_pass, "HASHES_ON_DRIVER_UP_TO", driver_up_to)
    params = {**PARAMS, Param.THROUGHPUT_FROM: START, Param.THROUGHPUT_FIRST_DATE: date(2026, 11, 21)}
    tables = [
        (frame(spark, t.OFFSET_SNAPSHOTS, [{}, {}, {"queue_id": 70000}, {"queue_id": 3}], SNAPSHOT), SUITE["bronze.offset_snapshots"]),
        (frame(spark, t.CONSUMER_LAG, [], LAG), SUITE["gold.consumer_lag"]),
        (frame(spark, t.CONSUMER_LAG, [{}, {"queue_id": 1}], LAG), SUITE["gold.consumer_lag"]),
        (frame(spark, t.CONSUME_THROUGHPUT, [{}, {"window_start": at(5)}, {"window_start": at(5)}, {}, {}], THROUGHPUT),
         SUITE["gold.consume_throughput"]),
    ]  # fmt: skip
    ours = OnePassRunner(sample_size=10).run_all(tables, params)
    theirs = SuiteRunner(sample_size=10).run_all(tables, params)
    assert [(rows, _measured(found)) for rows, found in ours] == [
        (rows, _measured(found)) for rows, found in theirs
    ]
    assert [rows for rows, _ in ours] == [4, 0, 2, 5]
    unique = {
        o.check_name: o.failing_rows
        for _, found in ours
        for o in found
        if o.check_name.endswith("keys_unique")
    }
    assert unique == {"bronze.offset_snapshots.keys_unique": 2, "gold.consumer_lag.keys_unique": 0,
                      "gold.consume_throughput.keys_unique": 5}  # fmt: skip


@UNIQUENESS_WAYS
def test_keys_that_share_a_hash_are_told_apart_by_the_keys_themselves(
    spark, monkeypatch, shared_up_to, driver_up_to
):
    """Uniqueness first counts a hash of each key; with a hash that gives every key the same value,
    the outcome is still exact: duplicates are counted by the keys, never by the hash."""
    import jobs.quality.one_pass as one_pass

    monkeypatch.setattr(one_pass, "SHARED_UP_TO", shared_up_to)
    monkeypatch.setattr(one_pass, "HASHES_ON_DRIVER_UP_TO", driver_up_to)
    rows = [{}, {}, {"queue_id": 2}, {"queue_id": 3}, {"cluster": None}, {"cluster": None}]
    df = frame(spark, t.OFFSET_SNAPSHOTS, rows, SNAPSHOT)
    honest = outcomes(OnePassRunner(sample_size=5), df, "bronze.offset_snapshots")["keys_unique"]
    monkeypatch.setattr(one_pass, "key_hash", lambda keys: one_pass.F.lit(7).cast("long"))
    colliding = outcomes(OnePassRunner(sample_size=5), df, "bronze.offset_snapshots")["keys_unique"]
    assert (colliding.is_success, colliding.failing_rows, colliding.message) == (
        honest.is_success,
        honest.failing_rows,
        honest.message,
    )
    assert honest.failing_rows == 4  # the two rows alike, and the two alike but for a null cluster


def test_tables_hashes_go_to_the_driver_in_batches_the_largest_alone_shuffled(monkeypatch):
    import jobs.quality.one_pass as one_pass

    monkeypatch.setattr(one_pass, "SHARED_UP_TO", 5)
    monkeypatch.setattr(one_pass, "HASHES_ON_DRIVER_UP_TO", 10)
    rows = {(0, 1): 4, (1, 1): 7, (2, 1): 11, (3, 1): 3, (3, 2): 3, (4, 1): 10, (5, 1): 5}
    # small tables together, 10 rows a batch at most; larger ones alone; above 10 rows shuffled
    assert one_pass.driver_batches(rows) == (
        [[(3, 1), (3, 2), (0, 1)], [(5, 1)], [(1, 1)], [(4, 1)]],
        [(2, 1)],
    )
    assert one_pass.driver_batches({}) == ([], [])


def test_the_lakes_statistics_settle_what_they_prove_and_leave_every_outcome_as_a_scan_gives_it(
    spark, tmp_path
):
    """On a real Delta table (the embedded engine's statistics), a suite measured with its files'
    statistics gives what it gives without them, failures and samples included."""
    from jobs.io.lake import Lake
    from pipelines.expectations import settled

    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    rows = [
        {},
        {},
        {"queue_id": 70000},
        {"queue_id": 3, "offset": -1},
        {"queue_id": 4, "snapshot_source": "tmp"},
    ]
    lake.append(t.OFFSET_SNAPSHOTS, frame(spark, t.OFFSET_SNAPSHOTS, rows, SNAPSHOT).coalesce(1))
    lake.append(t.OFFSET_SNAPSHOTS, frame(spark, t.OFFSET_SNAPSHOTS, [{"queue_id": 5}], SNAPSHOT))
    df = lake.read(t.OFFSET_SNAPSHOTS, start=START, end=END)
    known = lake.statistics(t.OFFSET_SNAPSHOTS, start=START, end=END)
    suite = SUITE["bronze.offset_snapshots"]
    assert known.rows == 6 and known.exact
    by_name = {e.name: settled(e, PARAMS, known) for e in suite.expectations}
    assert all(by_name["keys_not_null"]) and by_name["partition_in_interval"] == [True]
    assert by_name["queue_ids_in_range"] == [False] and by_name["offsets_in_range"] == [False]

    runner = OnePassRunner(sample_size=10)
    with_statistics = runner.run_all([(df, suite)], PARAMS, [known])
    assert [(n, _measured(o)) for n, o in with_statistics] == [
        (n, _measured(o)) for n, o in runner.run_all([(df, suite)], PARAMS)
    ]
    failed = {o.check_name.rsplit(".", 1)[1] for o in with_statistics[0][1] if not o.is_success}
    assert failed == {"keys_unique", "queue_ids_in_range", "offsets_in_range", "snapshot_source_known"}


def test_an_expectation_the_statistics_settle_is_not_scanned(spark):
    """The statistics are taken at their word: a null they do not count is not looked for, and a
    table they settle whole (its rows counted, every expectation but uniqueness) is read for its keys only."""
    from schemas.statistics import ColumnStatistics, TableStatistics

    suite = SUITE["bronze.offset_snapshots"]
    df = frame(spark, t.OFFSET_SNAPSHOTS, [{}, {"queue_id": 1, "cluster": None}], SNAPSHOT)
    no_nulls = TableStatistics(2, True, {"cluster": ColumnStatistics(0)})
    found = {
        o.check_name.rsplit(".", 1)[1]: o
        for o in OnePassRunner().run_all([(df, suite)], PARAMS, [no_nulls])[0][1]
    }
    assert found["keys_not_null"].is_success
    assert not OnePassRunner().run(df, suite, PARAMS)[1][0].is_success  # without them: the null is found

    by_group = SUITE["gold.consumer_lag_by_group"]
    lag = frame(spark, t.CONSUMER_LAG_BY_GROUP, [], {})
    inside = {
        "timestamp": at(5),
        "date": date(2026, 11, 21),
        "int": 1,
        "bigint": 1,
    }  # other types: nulls only
    whole = TableStatistics(3, True, {
        f.name: ColumnStatistics(0, inside.get(f.dataType.simpleString()), inside.get(f.dataType.simpleString()))
        for f in t.CONSUMER_LAG_BY_GROUP.schema.fields
    })  # fmt: skip
    rows, outcomes = OnePassRunner().run_all([(lag, by_group)], PARAMS, [whole])[0]
    assert rows == 3 and len(outcomes) == len(by_group.expectations)
    assert [o.check_name for o in outcomes if not o.is_success] == []
    # a table left out of the counts' action between two in it: each gets its own counts
    alone = OnePassRunner().run_all([(df, suite)], PARAMS)[0]
    first, middle, last = OnePassRunner().run_all(
        [(df, suite), (lag, by_group), (df, suite)], PARAMS, [None, whole, None]
    )
    assert _measured(first[1]) == _measured(last[1]) == _measured(alone[1]) and middle[0] == 3
    assert (
        OnePassRunner().run_all([(lag, by_group)], PARAMS, [whole.inexact()])[0][0] == 0
    )  # counted: no rows
