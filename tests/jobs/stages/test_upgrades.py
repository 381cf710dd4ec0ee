"""A lake an earlier version wrote gets the tables added since, built once from what it holds."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.upgrades import EARLIER_ALERTS, upgrade
from schemas.tables import QUALITY_ALERTS, QUALITY_FINDINGS
from tests.frames import rows

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
END = datetime(2026, 11, 21, 11, tzinfo=UTC)


def earlier_alert(n, group, size):
    return ("r1", START, END, f"a{n}", "monitoring.large_regressions", "warn", "silver.offset_regressions", "c1",
            "broker-a", "orders", group, n, "10.0.0.1:1", START, size, f"moved back by {size}", None)  # fmt: skip


def test_alerts_written_one_per_finding_become_findings_grouped_into_alerts(spark, tmp_path):
    lake = Lake(spark, tmp_path / "lake", engine="delta-rs")
    lake.append(
        EARLIER_ALERTS,
        spark.createDataFrame(
            [
                earlier_alert(1, "billing", 300),
                earlier_alert(2, "billing", 200),
                earlier_alert(3, "audit", 150),
            ],
            EARLIER_ALERTS.schema,
        ),
    )
    upgrade(lake)
    assert rows(lake.read(QUALITY_FINDINGS), "finding_id", "consumer_group", "measured_value") == [
        ("a1", "billing", 300), ("a2", "billing", 200), ("a3", "audit", 150),
    ]  # fmt: skip
    assert rows(lake.read(QUALITY_ALERTS), "run_id", "consumer_group", "findings", "measured_total") == [
        ("r1", "audit", 1, 150), ("r1", "billing", 2, 500),
    ]  # fmt: skip
    upgrade(lake)  # once upgraded, nothing more happens
    assert lake.read(QUALITY_FINDINGS).count() == 3
