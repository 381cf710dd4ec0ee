"""Quality tables: what each audit checked and found (jobs.quality.audit writes them)."""

from __future__ import annotations

from schemas.tables.spec import BOOLEAN, INT, LONG, STRING, TIMESTAMP, TableSpec, fields

_RUN = (("run_id", STRING, False), ("interval_start", TIMESTAMP, False), ("interval_end", TIMESTAMP, False))

QUALITY_CHECK_RESULTS = TableSpec(
    layer="quality",
    name="check_results",
    grain="one row per (audited interval start, check); a later audit of the same start replaces it",
    keys=("interval_start", "check_name"),
    event_time="interval_start",
    schema=fields(
        *_RUN, ("check_name", STRING, False),
        ("check_kind", STRING, False),  # expectation | monitoring
        ("table_name", STRING, False),  # layer.table checked (a monitoring check: its first input)
        ("severity", STRING, False), ("is_success", BOOLEAN, False), ("rows_checked", LONG, True), ("failing_rows", LONG, False),
        ("message", STRING, False),
        ("sample", STRING, True),  # JSON array: failing values (expectations) or alert messages (monitoring)
    ),
)  # fmt: skip

QUALITY_FINDINGS = TableSpec(
    layer="quality",
    name="findings",
    grain="one row per finding (an offending row) of a failed check in an audited interval; a later audit of the same start replaces them",
    keys=("interval_start", "finding_id"),
    event_time="interval_start",
    schema=fields(
        *_RUN,
        ("finding_id", STRING, False),  # the same finding gets the same id in a re-run
        ("check_name", STRING, False), ("severity", STRING, False), ("table_name", STRING, False),
        ("cluster", STRING, True), ("broker", STRING, True), ("topic", STRING, True), ("consumer_group", STRING, True),
        ("queue_id", INT, True), ("client_host", STRING, True), ("observed_at", TIMESTAMP, True),
        ("measured_value", LONG, True),  # the check's measure: MonitoringCheck.value_column, or failing rows
        ("message", STRING, False),
        ("details", STRING, True),  # JSON: the offending row, or sample failing values
    ),
)  # fmt: skip

QUALITY_ALERTS = TableSpec(
    layer="quality",
    name="alerts",
    grain="one row per (audited interval, check, cluster, topic, consumer group) with findings, or per finding of a "
    "check that alerts each (a status change); a later audit of the same start replaces them",
    keys=("interval_start", "alert_id"),
    event_time="interval_start",
    schema=fields(
        *_RUN,
        ("alert_id", STRING, False),  # the same alert gets the same id in a re-run
        ("check_name", STRING, False), ("severity", STRING, False), ("table_name", STRING, False),
        ("cluster", STRING, True), ("topic", STRING, True), ("consumer_group", STRING, True),
        ("findings", LONG, False),  # quality/findings rows the alert stands for
        ("measured_total", LONG, True), ("measured_max", LONG, True),  # of the findings' measured values
        ("first_observed_at", TIMESTAMP, True), ("last_observed_at", TIMESTAMP, True),
        ("message", STRING, False),
        ("top_findings", STRING, True),  # JSON: the findings with the largest measured values
    ),
)  # fmt: skip
