"""Regressions explained by logged resets and corrections."""

from __future__ import annotations

from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from pipelines.replay.explain import explain_regressions
from tests.frames import rows
from tests.pipelines.replay.replay_helpers import at

GROUP = [StructField(c, StringType()) for c in ("cluster", "broker", "topic", "consumer_group")]
REGRESSIONS = StructType(
    GROUP + [StructField("queue_id", LongType()), StructField("detected_at", TimestampType())]
)
RESETS = StructType(
    GROUP
    + [
        StructField("reset_at", TimestampType()),
        StructField("reset_kind", StringType()),
        StructField("client_id", StringType()),
        StructField("new_offset", LongType()),
    ]
)


def test_latest_reset_of_the_group_before_the_regression_explains_it(spark):
    regressions = spark.createDataFrame(
        [
            ("c1", "broker-a", "t", "g", 3, at(240)),  # 5.x reset seen at the next snapshot
            ("c1", "broker-a", "t", "g", 1, at(9000)),  # nothing logged near it
            ("c1", "broker-a", "t", "other", 0, at(240)),  # another group's reset does not explain it
        ],
        REGRESSIONS,
    )
    resets = spark.createDataFrame(
        [
            ("c1", "broker-a", "t", "g", at(-400), "reset_success", "10.0.0.1@77", None),
            ("c1", "broker-a", "t", "g", at(2), "reset_started", "10.0.0.9:4411", None),
            ("c1", "broker-a", "t", "g", at(900), "pull_offset_moved", None, 500),  # after: no
        ],
        RESETS,
    )
    got = explain_regressions(regressions, resets)
    assert rows(got, "consumer_group", "queue_id", "explained_by", "explanation") == [
        ("g", 1, None, None),
        ("g", 3, "reset_started", "reset_started at 2026-11-21 10:00:02 by 10.0.0.9:4411"),
        ("other", 0, None, None),
    ]
