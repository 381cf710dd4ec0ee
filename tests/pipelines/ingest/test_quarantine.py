"""Parsed rows split into landed and rejected, and counted for the per-file accounting."""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import functions as F

from pipelines.ingest.quarantine import Parsed, derived, rejections, split_valid, union_parsed
from tests.frames import assert_cached_parse_gives_the_same, assert_frames_equal

AT = datetime(2026, 11, 21, 10, 0)
LANDED = ["source_file", "line_no", "offset", "at"]


def _reason():
    return F.when(F.col("offset") < 0, F.lit("negative offset"))


def _parsed(spark, rows) -> Parsed:
    df = spark.createDataFrame(
        rows, "source_file string, line_no long, cluster string, _file_hash string, offset long, at timestamp"
    )
    return split_valid(df, _reason(), F.col("offset"), LANDED)


def _sums(counted):
    rows = (
        counted.groupBy("source_file")
        .agg(F.sum("landed"), F.sum("quarantined"), F.min("first_at"), F.max("last_at"))
        .collect()
    )
    return {r[0]: tuple(r[1:]) for r in rows}


def test_each_record_is_counted_once_as_landed_or_quarantined_whatever_the_parse_shape(spark):
    a = _parsed(
        spark,
        [("a", 1, "c", "h", 5, AT), ("a", 2, "c", "h", -1, AT), ("b", 1, "c", "g", 7, AT.replace(hour=11))],
    )
    b = _parsed(spark, [("b", 2, "c", "g", -3, AT)])
    expected = {"a": (1, 1, AT, AT), "b": (1, 1, AT.replace(hour=11), AT.replace(hour=11))}
    # a split parse (one frame, read once), a union of parses, and a parse given as its two outputs
    union = union_parsed([a, b])
    assert _sums(union.counted("at")) == expected
    assert _sums(Parsed(landed=union.landed, rejected=union.rejected).counted("at")) == expected
    assert _sums(a.counted("at")) == {
        "a": (1, 1, AT, AT),
        "b": (1, 0, AT.replace(hour=11), AT.replace(hour=11)),
    }


def test_a_parse_carrying_file_numbers_gives_the_rows_and_counts_of_one_carrying_the_files_columns(spark):
    files = spark.createDataFrame(
        [(0, "a", "c", "h"), (1, "b", "d", "g")],
        "_file long, source_file string, cluster string, _file_hash string",
    )
    lines = [(0, 1, 5, AT), (0, 2, -1, AT), (1, 1, 7, AT.replace(hour=11)), (1, 2, -3, AT)]
    numbered = spark.createDataFrame(lines, "_file long, line_no long, offset long, at timestamp")
    by_number = split_valid(numbered, _reason(), F.col("offset"), LANDED, files)
    named = _parsed(
        spark,
        [(["a", "b"][n], line, ["c", "d"][n], ["h", "g"][n], offset, at) for n, line, offset, at in lines],
    )
    assert "source_file" not in by_number.tagged.columns  # what a cache keeps is the narrow frame
    persisted = []
    cached = by_number.cached(lambda df: persisted.append(df.persist()) or persisted[-1])
    for parse in (by_number, cached):
        assert_frames_equal(parse.landed, named.landed)
        assert_frames_equal(parse.rejected, named.rejected)
        assert (
            _sums(parse.counted("at"))
            == _sums(named.counted("at"))
            == {"a": (1, 1, AT, AT), "b": (1, 1, AT.replace(hour=11), AT.replace(hour=11))}
        )
    for df in persisted:
        df.unpersist()


def test_a_part_that_only_rejects_lands_nothing_and_counts_its_rows_as_quarantined(spark):
    a = _parsed(spark, [("a", 1, "c", "h", 5, AT)])
    whole_file = spark.createDataFrame(
        [("b", None, "unreadable", "\x00", "c", "g")],
        "source_file string, line_no long, reason string, raw string, cluster string, _file_hash string",
    )
    union = union_parsed([a, rejections(whole_file, a.landed)])
    assert [r.source_file for r in union.landed.collect()] == ["a"]
    assert sorted(r.source_file for r in union.rejected.collect()) == ["b"]
    assert _sums(union.counted("at")) == {"a": (1, 0, AT, AT), "b": (0, 1, None, None)}
    assert_cached_parse_gives_the_same(union, "at")


def test_a_cached_derived_parse_computes_its_source_once_for_both_outputs(spark):
    """The costly part of a parse (here a Python function, counted as it runs) is what a cache keeps."""
    runs = spark.sparkContext.accumulator(0)

    @F.udf("long")
    def costly(offset):
        runs.add(1)
        return offset

    source = _parsed(spark, [("a", 1, "c", "h", 5, AT), ("a", 2, "c", "h", -1, AT)]).tagged.withColumn(
        "offset", costly("offset")
    )

    def outputs(frame):
        return split_valid(frame.drop("_reject_reason", "_raw"), _reason(), F.col("offset"), LANDED)

    parsed = derived(source, outputs)
    # each output computes it
    assert (parsed.landed.count(), parsed.rejected.count(), runs.value) == (1, 1, 4)
    kept = []
    cached = parsed.cached(lambda df: kept.append(df.cache()) or kept[-1])
    try:
        # once for both
        assert (cached.landed.count(), cached.rejected.count(), runs.value) == (1, 1, 6)
    finally:
        for df in kept:
            df.unpersist()
