"""The replay's expressions give the same values, nulls included, rendered for Arrow and for Spark."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc

from pipelines.replay import expressions
from pipelines.replay.expressions import Col, IsNull
from pipelines.replay.projections import OBSERVATION_SEQ, REGRESSION, REPLAYED_COMMITS, STORED_OFFSET_TIMELINE

STATE = pa.table(
    {
        "event_rank": pa.array([1, 0, 1, 1], pa.int32()),
        "source_file": ["/l/c.jsonl", "/l/snap.json", "/l/c.jsonl", "/l/50%|d|.jsonl"],
        "_file_hash": ["c1", None, "c1", "d1"],
        "line_rank": pa.array([7, 0, 1234567890123, 3], pa.int64()),
        "commit_offset": pa.array([90, None, 130, 5], pa.int64()),
        "snapshot_offset": pa.array([None, 80, None, None], pa.int64()),
        "previous_snapshot_offset": pa.array([100, 100, None, None], pa.int64()),
        "commit_regressions_between": pa.array([1, 0, 0, 0], pa.int64()),
        "settled_commit_offset": pa.array([None, 90, 90, None], pa.int64()),
        "is_regression": [True, False, False, None],
        "stored_offset_before": pa.array([100, None, 90, None], pa.int64()),
        "stored_offset": pa.array([90, 80, 130, 5], pa.int64()),
        "previous_stored_offset": pa.array([100, 90, None, 130], pa.int64()),
        "event_at": pa.array(
            [datetime(2026, 11, 21, 23, 59, 59, 999999, UTC)] * 4, pa.timestamp("us", "UTC")
        ),
    }
)


def test_arrow_renders_the_rules_with_sqls_nulls():
    assert expressions.arrow(OBSERVATION_SEQ, STATE).to_pylist() == [
        "1|/l/c.jsonl|000000000007|c1",
        "0|/l/snap.json|000000000000",  # a snapshot's file hash is null: left out
        "1|/l/c.jsonl|123456789012|c1",  # cut to twelve characters, as Spark's lpad does
        "1|/l/50%25%7Cd%7C.jsonl|000000000003|d1",  # no separator inside the path
    ]
    assert expressions.holds(REGRESSION, STATE).to_pylist() == [True, True, False, False]
    timeline = STORED_OFFSET_TIMELINE.arrow(STATE.append_column("cluster", pa.array(["c"] * 4)).append_column(
        "broker", pa.array(["b"] * 4)).append_column("topic", pa.array(["t"] * 4)).append_column(
        "consumer_group", pa.array(["g"] * 4)).append_column("queue_id", pa.array([0] * 4, pa.int32())))  # fmt: skip
    assert timeline.column("consumed_increment").to_pylist() == [0, 0, 0, 0]
    assert timeline.column("observation").to_pylist() == ["commit", "snapshot", "commit", "commit"]
    assert timeline.column("observed_date").to_pylist() == [datetime(2026, 11, 21).date()] * 4


def test_arrow_renders_dictionary_encoded_text_as_its_values():
    # the replay's workers give the queue's and the file's text as dictionaries (pipelines.replay.kernel.Names)
    encoded = STATE
    for name in ("source_file", "_file_hash"):
        at = encoded.schema.get_field_index(name)
        encoded = encoded.set_column(at, name, pc.dictionary_encode(STATE.column(name)))
    assert pa.types.is_dictionary(encoded.schema.field("_file_hash").type)
    for projection in (REPLAYED_COMMITS, STORED_OFFSET_TIMELINE):
        named = _named(STATE)
        by_values, by_dictionary = projection.arrow(named), projection.arrow(_named(encoded))
        decoded = [
            column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column
            for column in by_dictionary.columns
        ]
        assert pa.table(decoded, names=by_dictionary.column_names).to_pylist() == by_values.to_pylist()
    assert (
        expressions.arrow(OBSERVATION_SEQ, encoded).to_pylist()
        == expressions.arrow(OBSERVATION_SEQ, STATE).to_pylist()
    )
    assert expressions.arrow(IsNull(Col("_file_hash")), encoded).to_pylist() == [False, True, False, False]


def _named(state: pa.Table) -> pa.Table:
    """``state`` with every other column the two projections read."""
    for column in ("cluster", "broker", "topic", "consumer_group", "client_host", "key_kind", "evidence",
                   "commit_path", "stored_before_source"):  # fmt: skip
        state = state.append_column(column, pa.array(["x"] * 4))
    return (
        state.append_column("queue_id", pa.array([0] * 4, pa.int32()))
        .append_column("client_offset_after", pa.array([100, None, 130, 5], pa.int64()))
        .append_column("line_no", pa.array([7, None, 1, 3], pa.int64()))
    )


def test_spark_renders_the_same_values(spark):
    named = STATE.append_column("cluster", pa.array(["c"] * 4)).append_column("broker", pa.array(["b"] * 4))
    for column in (
        "client_host",
        "topic",
        "consumer_group",
        "key_kind",
        "evidence",
        "commit_path",
        "stored_before_source",
    ):
        named = named.append_column(column, pa.array(["x"] * 4))
    named = (
        named.append_column("queue_id", pa.array([0] * 4, pa.int32()))
        .append_column("client_offset_after", pa.array([100, None, 130, 5], pa.int64()))
        .append_column("line_no", pa.array([7, None, 1, 3], pa.int64()))
    )
    for projection in (REPLAYED_COMMITS, STORED_OFFSET_TIMELINE):
        by_arrow = projection.arrow(named).to_pylist()
        by_spark = [r.asDict() for r in projection.spark(spark.createDataFrame(named)).collect()]
        for row in by_spark:
            for name, value in row.items():
                if isinstance(value, datetime):
                    row[name] = value.astimezone(UTC)
        assert by_spark == by_arrow
