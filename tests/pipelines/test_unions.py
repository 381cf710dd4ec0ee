"""Many frames as one: every row, matched by column name, in the frames' order."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException

from pipelines.unions import union_all


@pytest.mark.parametrize("count", [1, 2, 5, 8])
def test_every_frames_rows_in_order_matched_by_name(spark, count):
    frames = [
        spark.createDataFrame([(n, f"f{n}")], "n long, name string")
        if n % 2 == 0  # the first frame names the columns, in its order
        else spark.createDataFrame([(f"f{n}", n)], "name string, n long")
        for n in range(count)
    ]
    together = union_all(frames)
    assert together.columns == ["n", "name"]
    assert [tuple(r) for r in together.collect()] == [(n, f"f{n}") for n in range(count)]


def test_no_frame_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        union_all([])


def test_a_frame_without_a_column_of_the_others_is_an_error(spark):
    with pytest.raises(AnalysisException):
        union_all(
            [
                spark.createDataFrame([(1, "a")], "n long, name string"),
                spark.createDataFrame([(2,)], "n long"),
            ]
        )
