"""What an audit produces: check results, alerts, and the notification a sink receives.

Plain frozen dataclasses, so sinks, the report and tests need no Spark. Each converts to
a row of its quality table (``schemas.quality``) and to JSON.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Literal, Protocol

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


class ExpectationEngine(Protocol):
    """What measures a table suite: jobs.quality.one_pass, or Great Expectations (jobs.quality.gx_adapter)."""

    def run(self, df, suite, params) -> tuple[int, list[ExpectationOutcome]]:
        """The rows of ``df`` and one outcome per expectation of ``suite`` (none for no rows)."""
        ...

    def run_all(self, tables, params, statistics=None) -> list[tuple[int, list[ExpectationOutcome]]]:
        """:meth:`run` of each (frame, suite) of ``tables``, in their order (``statistics``: the
        Delta log's of each frame's files, or None; an engine may settle expectations from them)."""
        ...


def jsonable(value: object) -> object:
    """A collected value as JSON can hold it (dates as ISO text, decimals as floats)."""
    if isinstance(value, date):  # and datetime, a subclass
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


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


def stable_id(*parts: object) -> str:
    """The same finding or alert in a re-run of the interval gets the same id."""
    return hashlib.sha256("|".join("" if p is None else str(p) for p in parts).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Finding:
    """One offending row of a failed check (a ``quality/findings`` row without the run columns)."""

    finding_id: str
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

    def row(self, run_id: str, start: datetime, end: datetime) -> tuple:
        return (run_id, start, end, self.finding_id, self.check_name, self.severity, self.table_name, self.cluster,
                self.broker, self.topic, self.consumer_group, self.queue_id, self.client_host, self.observed_at,
                self.measured_value, self.message, self.details)  # fmt: skip


@dataclass(frozen=True)
class Alert:
    """What an on-call person is told: a check's findings for one (cluster, topic, group) in an
    interval, with their count, sizes and the largest of them (a ``quality/alerts`` row without
    the run columns), or one finding of a check that alerts each (a status change)."""

    alert_id: str
    check_name: str
    severity: Severity
    table_name: str
    message: str
    findings: int
    cluster: str | None = None
    topic: str | None = None
    consumer_group: str | None = None
    measured_total: int | None = None
    measured_max: int | None = None
    first_observed_at: datetime | None = None
    last_observed_at: datetime | None = None
    top_findings: str | None = None

    def to_json(self) -> dict:
        found = asdict(self)
        found["first_observed_at"] = iso_z(self.first_observed_at)
        found["last_observed_at"] = iso_z(self.last_observed_at)
        found["top_findings"] = json.loads(self.top_findings) if self.top_findings else []
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
    alerts: tuple[Alert, ...]  # the first of each check's alerts, as many as the sink takes
    alerts_total: int
    alert_counts: dict[str, int] = field(default_factory=dict)  # alerts by check
    findings_total: int = 0

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
            "findings_total": self.findings_total,
            "alerts": [a.to_json() for a in self.alerts],
        }

    def bounded_json(self, max_bytes: int) -> dict:
        """:meth:`to_json` with as many of its alerts as fit in ``max_bytes`` of JSON (the rest are
        counted in ``alerts_omitted``; every alert stays in ``quality/alerts``)."""
        payload = self.to_json()
        alerts = payload["alerts"]
        while alerts and len(json.dumps(payload, sort_keys=True).encode()) > max_bytes:
            alerts.pop()
        payload["alerts_omitted"] = len(self.alerts) - len(alerts)
        return payload
