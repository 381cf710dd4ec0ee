"""What an audit produces: check results, alerts, and the notification a sink receives.

Plain frozen dataclasses, so sinks, the report and tests need no Spark. Each converts to
a row of its quality table (``schemas.quality``) and to JSON.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Literal

from schemas.instants import iso_z
from schemas.quality import Severity


@dataclass(frozen=True)
class ExpectationOutcome:
    """The result of one named expectation of a suite (over all the columns it names)."""

    check_name: str
    is_success: bool
    failing_rows: int
    message: str
    sample: tuple = ()


@dataclass(frozen=True)
class CheckResult:
    """One check of one run: an expectation on a table or a monitoring check."""

    check_name: str
    check_kind: Literal["expectation", "monitoring"]
    table_name: str
    severity: Severity
    is_success: bool
    rows_checked: int | None
    failing_rows: int
    message: str
    sample: tuple = ()

    @property
    def is_error(self) -> bool:
        return not self.is_success and self.severity == "error"

    def row(self, run_id: str, start: datetime, end: datetime) -> tuple:
        """A ``quality/check_results`` row."""
        sample = json.dumps(list(self.sample), sort_keys=True, default=str) if self.sample else None
        return (run_id, start, end, self.check_name, self.check_kind, self.table_name, self.severity,
                self.is_success, self.rows_checked, self.failing_rows, self.message, sample)  # fmt: skip


@dataclass(frozen=True)
class Alert:
    """One offending finding of a failed check (a ``quality/alerts`` row without the run columns)."""

    alert_id: str
    check_name: str
    severity: Severity
    table_name: str
    message: str
    cluster: str | None = None
    broker: str | None = None
    topic: str | None = None
    consumer_group: str | None = None
    queue_id: int | None = None
    client_host: str | None = None
    observed_at: datetime | None = None
    measured_value: int | None = None
    details: str | None = None

    @staticmethod
    def make_id(*parts: object) -> str:
        """Stable id: the same finding in a re-run of the interval gets the same id."""
        return hashlib.sha256("|".join("" if p is None else str(p) for p in parts).encode()).hexdigest()[:32]

    def row(self, run_id: str, start: datetime, end: datetime) -> tuple:
        return (run_id, start, end, self.alert_id, self.check_name, self.severity, self.table_name, self.cluster,
                self.broker, self.topic, self.consumer_group, self.queue_id, self.client_host, self.observed_at,
                self.measured_value, self.message, self.details)  # fmt: skip

    def to_json(self) -> dict:
        found = asdict(self)
        found["observed_at"] = iso_z(self.observed_at)
        found["details"] = json.loads(self.details) if self.details else None
        return found


@dataclass(frozen=True)
class Notification:
    """What a sink receives for one run: its failed checks and (a sample of) its alerts."""

    run_id: str
    interval_start: datetime
    interval_end: datetime
    has_errors: bool
    report_path: str
    failed_checks: tuple[CheckResult, ...]
    alerts: tuple[Alert, ...]
    alerts_total: int
    alert_counts: dict[str, int] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "failed" if self.has_errors else "warnings" if self.failed_checks else "passed"

    def envelope(self) -> dict:
        """The run's fields every alert message carries."""
        return {
            "source": "offsetlake",
            "run_id": self.run_id,
            "interval_start": iso_z(self.interval_start),
            "interval_end": iso_z(self.interval_end),
        }

    def to_json(self) -> dict:
        return {
            **self.envelope(),
            "status": self.status,
            "has_errors": self.has_errors,
            "report_path": self.report_path,
            "failed_checks": [
                {
                    k: getattr(r, k)
                    for k in ("check_name", "severity", "table_name", "failing_rows", "message")
                }
                for r in self.failed_checks
            ],
            "alerts_total": self.alerts_total,
            "alert_counts": dict(sorted(self.alert_counts.items())),
            "alerts": [a.to_json() for a in self.alerts],
        }
