"""Parsed rows split into landed and rejected, and counted for the per-file accounting."""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import functions as F

from pipelines.quarantine import Parsed, split_valid, union_parsed

AT = datetime(2026, 11, 21, 10, 0)


def _parsed(spark, rows) -> Parsed:
    df = spark.createDataFrame(rows, "source_file string, line_no long, cluster string, _file_hash string, offset long, at timestamp")
    reason = F.when(F.col("offset") < 0, F.lit("negative offset"))
    return split_valid(df, reason, F.col("offset"), ["source_file", "line_no", "offset", "at"])


def _sums(counted):
    rows = counted.groupBy("source_file").agg(F.sum("landed"), F.sum("quarantined"), F.min("at"), F.max("at")).collect()
    return {r[0]: tuple(r[1:]) for r in rows}


def test_each_record_is_counted_once_as_landed_or_quarantined_whatever_the_parse_shape(spark):
    a = _parsed(spark, [("a", 1, "c", "h", 5, AT), ("a", 2, "c", "h", -1, AT), ("b", 1, "c", "g", 7, AT.replace(hour=11))])
    b = _parsed(spark, [("b", 2, "c", "g", -3, AT)])
    expected = {"a": (1, 1, AT, AT), "b": (1, 1, AT.replace(hour=11), AT.replace(hour=11))}
    # a split parse (one frame, read once), a union of parses, and a parse given as its two outputs
    union = union_parsed([a, b])
    assert _sums(union.counted("at")) == expected
    assert _sums(Parsed(landed=union.landed, rejected=union.rejected).counted("at")) == expected
    assert _sums(a.counted("at")) == {"a": (1, 1, AT, AT), "b": (1, 0, AT.replace(hour=11), AT.replace(hour=11))}
