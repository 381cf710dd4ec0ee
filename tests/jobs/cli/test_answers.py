"""The run summary's answers, read back from a real lake."""

from __future__ import annotations

from datetime import UTC, date, datetime

from jobs.cli.answers import answer_lines
from jobs.cli.summary import print_summary
from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, RunContext
from schemas.config import Settings
from schemas.tables import CONSUME_THROUGHPUT, CONSUMER_LAG_BY_GROUP, CONSUMER_STATUS

DAY = date(2026, 11, 21)


def at(hour: int) -> datetime:
    return datetime(2026, 11, 21, hour, tzinfo=UTC)


def test_the_summary_names_the_oldest_lag_the_rates_and_the_statuses(spark, tmp_path, capsys):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    interval = ReplayInterval(None, None, at(0), at(12))
    assert answer_lines(lake, interval) == []  # no marts yet
    lake.append(
        CONSUMER_LAG_BY_GROUP,
        spark.createDataFrame(
            [
                ("c1", "t", "g", at(10), 2, 900, 800, "broker-a", 0, 120.0, True, DAY),
                ("c1", "t", "g", at(11), 2, 50, 40, "broker-a", 0, 3.5, False, DAY),
                ("c1", "t", "h", at(11), 1, 0, 0, "broker-a", 0, 0.0, False, DAY),
            ],
            CONSUMER_LAG_BY_GROUP.schema,
        ),
    )
    lake.append(
        CONSUME_THROUGHPUT,
        spark.createDataFrame(
            [
                ("c1", "t", "g", at(10), at(11), 100, 100 / 3600, 4, DAY, 900, 900 / 3600),
                ("c1", "t", "h", at(10), at(11), 900, 900 / 3600, 4, DAY, 900, 900 / 3600),
            ],
            CONSUME_THROUGHPUT.schema,
        ),
    )
    lake.append(
        CONSUMER_STATUS,
        spark.createDataFrame(
            [
                ("c1", "t", "g", at(10), at(11), "STOP", "lag 900 at 10:00", at(10), 1, 900, 900, 120.0, 0, 0, 0, None, DAY),
                ("c1", "t", "h", at(10), at(11), "OK", "lag 0", at(11), 1, 0, 0, 0.0, 4, 900, 0, None, DAY),
            ],
            CONSUMER_STATUS.schema,
        ),
    )  # fmt: skip
    assert answer_lines(lake, interval) == [
        "Lag in seconds, the groups furthest behind in the interval:",
        "  c1 t@g: at least 120 s behind at 2026-11-21 10:00:00",
        "  c1 t@h: 0 s behind at 2026-11-21 11:00:00",
        "Produced against consumed in the interval (least kept up first):",
        "  c1 t@g: 900 produced, 100 consumed",
        "  c1 t@h: 900 produced, 900 consumed",
        "Consumer status windows: OK 1, STOP 1",
        "  2026-11-21 10:00 c1 t@g: STOP, lag 900 at 10:00",
    ]
    # the summary prints them after a command that published the interval, not after an earlier stage
    run = RunContext("r1", lake, Settings(), None, at(0), at(12), interval=interval, timings={"marts": 1.0})
    print_summary(run)
    assert "Consumer status windows" not in capsys.readouterr().out
    run.published = {CONSUMER_STATUS.path: 2}
    print_summary(run)
    assert "Consumer status windows: OK 1, STOP 1" in capsys.readouterr().out
