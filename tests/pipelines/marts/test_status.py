"""Consumer status per window: each rule of pipelines.marts.status on a group built to meet it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from pipelines.marts.status import STATUSES, consumer_status
from schemas.config import Settings, StatusSettings
from schemas.quality import CONSUMER_STATUSES
from tests.frames import rows

LAG_BY_GROUP = (
    "cluster string, topic string, consumer_group string, observed_at timestamp, total_lag_messages long, "
    "worst_lag_seconds double"
)
LAG = (
    "cluster string, topic string, consumer_group string, observed_at timestamp, consumer_offset long, "
    "broker_min_offset long"
)
TIMELINE = "cluster string, topic string, consumer_group string, observed_at timestamp, observation string, consumed_increment long"
REGRESSIONS = "cluster string, topic string, consumer_group string, detected_at timestamp, broker string, queue_id int, cause string"
SETTINGS = StatusSettings(window=timedelta(hours=1), allowed_lag_messages=100, min_lag_observations=3)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, 21, hour, minute, tzinfo=UTC)


def observed(group, hour, minute, lag, seconds=None):
    return ("c1", "t", group, at(hour, minute), lag, seconds)


def commit(group, hour, minute, consumed):
    return ("c1", "t", group, at(hour, minute), "commit", consumed)


def test_the_first_rule_that_holds_decides_and_says_its_evidence(spark):
    lag_by_group = spark.createDataFrame(
        [
            observed("ok", 10, 10, 50, 4.0),
            observed("ok", 10, 40, 20, 1.5),
            *(observed("warn", 10, m, lag) for m, lag in ((10, 200), (30, 300), (50, 400))),
            # the lag went down once: not growing throughout, so no WARN (the noise Burrow's users hated)
            *(observed("saw", 10, m, lag) for m, lag in ((10, 200), (30, 150), (50, 400))),
            observed("stall", 10, 10, 500),
            observed("stall", 10, 50, 500),
            observed("stop", 10, 50, 500, 900.0),
            observed("stop", 11, 50, 90),  # within the allowed lag: OK though nothing moved
            observed("rewind", 10, 20, 10),
            observed("err", 10, 30, 1000),
        ],
        LAG_BY_GROUP,
    )
    lag = spark.createDataFrame(
        [("c1", "t", "err", at(10, 30), 5, 25), ("c1", "t", "ok", at(10, 40), 30, 25)], LAG
    )
    timeline = spark.createDataFrame(
        [
            commit("ok", 10, 20, 30),
            commit("warn", 10, 20, 50),
            commit("saw", 10, 20, 50),
            commit("stall", 10, 20, 0),
            commit("stall", 10, 40, 0),
            ("c1", "t", "stall", at(10, 45), "snapshot", 0),
        ],
        TIMELINE,
    )
    regressions = spark.createDataFrame(
        [
            ("c1", "t", "rewind", at(10, 15), "broker-a", 3, "admin_reset"),
            ("c1", "t", "rewind", at(10, 55), "broker-a", 1, "stale_commit"),
            ("c1", "t", "rewind", at(11, 5), "broker-b", 0, "failover"),  # a window without a lag observation
            ("c1", "t", "err", at(10, 35), "broker-a", 0, "unexplained"),  # ERR comes first
        ],
        REGRESSIONS,
    )
    got = consumer_status(lag_by_group, lag, timeline, regressions, SETTINGS)
    assert rows(got, "consumer_group", "window_start", "status", "status_reason", "evidence_at", "lag_observations",
                "first_lag_messages", "last_lag_messages", "worst_lag_seconds", "commits", "messages_consumed",
                "regressions", "expired_messages") == [
        ("err", at(10), "ERR", "20 messages expired before they were consumed (seen 2026-11-21 10:30:00)", at(10, 30),
         1, 1000, 1000, None, 0, 0, 1, 20),
        ("ok", at(10), "OK", "lag 20 at 2026-11-21 10:40:00", at(10, 40), 2, 50, 20, 4.0, 1, 30, 0, None),
        ("rewind", at(10), "REWIND", "2 regressions, the first at 2026-11-21 10:15:00 on broker-a q3 (admin_reset)",
         at(10, 15), 1, 10, 10, None, 0, 0, 2, None),
        ("rewind", at(11), "REWIND", "1 regressions, the first at 2026-11-21 11:05:00 on broker-b q0 (failover)",
         at(11, 5), 0, None, None, None, 0, 0, 1, None),
        ("saw", at(10), "OK", "lag 400 at 2026-11-21 10:50:00", at(10, 50), 3, 200, 400, None, 1, 50, 0, None),
        ("stall", at(10), "STALL", "2 commits but no message consumed; lag 500 at 2026-11-21 10:50:00", at(10, 50),
         2, 500, 500, None, 2, 0, 0, None),
        ("stop", at(10), "STOP", "lag 500 at 2026-11-21 10:50:00 and no commit in the window", at(10, 50),
         1, 500, 500, 900.0, 0, 0, 0, None),
        ("stop", at(11), "OK", "lag 90 at 2026-11-21 11:50:00", at(11, 50), 1, 90, 90, None, 0, 0, 0, None),
        ("warn", at(10), "WARN", "lag grew over 3 observations, from 200 to 400", at(10, 50), 3, 200, 400, None,
         1, 50, 0, None),
    ]  # fmt: skip
    assert rows(got.where("consumer_group = 'ok'"), "window_end", "window_date") == [(at(11), at(0).date())]


def test_the_statuses_are_the_ones_the_quality_suite_accepts():
    assert STATUSES == CONSUMER_STATUSES


def test_the_thresholds_are_settings_checked_when_they_load():
    status = Settings.model_validate({"status": {"window": "PT30M", "allowed_lag_messages": 0}}).status
    assert (status.window, status.allowed_lag_messages, status.min_lag_observations) == (
        timedelta(minutes=30),
        0,
        3,
    )
    with pytest.raises(ValidationError, match="whole number of minutes"):
        StatusSettings(window=timedelta(seconds=90))
    with pytest.raises(ValidationError, match="must cover the status window"):
        Settings.model_validate({"status": {"window": "PT12H"}, "quality": {"lookback": "PT6H"}})
