"""Findings grouped into alerts: one per check, cluster, topic and group, or one per finding where the check says so."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pipelines.monitoring.alerts import alerts_of
from schemas.tables import QUALITY_FINDINGS
from tests.frames import rows

AT = datetime(2026, 11, 21, 10, tzinfo=UTC)
FINDING_COLUMNS = [
    c for c in QUALITY_FINDINGS.columns if c not in ("run_id", "interval_start", "interval_end")
]


def finding(n, check, group, size, minute, message=None):
    return (f"f{n}", check, "warn", "silver.offset_regressions", "c1", "broker-a", "orders", group, n, f"10.0.0.{n}:1",
            AT.replace(minute=minute), size, message or f"moved back by {size}", None)  # fmt: skip


def test_findings_become_one_alert_per_group_with_counts_sizes_and_the_largest_first(spark):
    big = "monitoring.large_regressions"
    change = "monitoring.status_changes"
    findings = spark.createDataFrame(
        [finding(1, big, "billing", 120, 5), finding(2, big, "billing", 900, 9), finding(3, big, "audit", 200, 1),
         finding(4, change, "billing", None, 2, "OK -> STALL"), finding(5, change, "billing", None, 3, "STALL -> OK")],
        ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in QUALITY_FINDINGS.schema.fields if f.name in FINDING_COLUMNS),
    )  # fmt: skip
    alerts = alerts_of(findings, one_per_finding=[change], top=1)
    columns = (
        "check_name",
        "consumer_group",
        "findings",
        "measured_total",
        "measured_max",
        "first_observed_at",
    )
    assert rows(alerts, *columns, "last_observed_at", "message") == [
        (big, "audit", 1, 200, 200, AT.replace(minute=1), AT.replace(minute=1), "moved back by 200"),
        (
            big,
            "billing",
            2,
            1020,
            900,
            AT.replace(minute=5),
            AT.replace(minute=9),
            "2 findings on orders@billing, 1020 in total; the largest: moved back by 900",
        ),
        (change, "billing", 1, None, None, AT.replace(minute=2), AT.replace(minute=2), "OK -> STALL"),
        (change, "billing", 1, None, None, AT.replace(minute=3), AT.replace(minute=3), "STALL -> OK"),
    ]
    billing = alerts.where(
        "check_name = 'monitoring.large_regressions' AND consumer_group = 'billing'"
    ).first()
    assert [f["client_host"] for f in json.loads(billing.top_findings)] == ["10.0.0.2:1"]
    assert alerts.select("alert_id").distinct().count() == 4
