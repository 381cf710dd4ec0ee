"""Alert sinks: the log, a JSON-lines file, or a webhook (JSON POST with retries).

A sink never raises: delivery problems come back as a :class:`DeliveryResult` that the
audit logs and shows in its report, so an unreachable endpoint cannot crash a run. The
webhook retries connection errors, timeouts, HTTP 408, 429 and 5xx, waiting
``backoff * 2**n`` seconds between attempts; other 4xx answers are not retried.

    sink = build_sink(AlertSinkSettings(kind="webhook", url="https://hooks.example/offsetlake"))
    result = deliver(sink, notification)   # DeliveryResult(sink="webhook", is_delivered=True, attempts=1)
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from jobs.quality.results import Notification
from schemas.quality import AlertSinkSettings

log = logging.getLogger("offsetlake.quality.alerts")
_RETRIED_STATUS = frozenset({408, 429})
_MAX_WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class DeliveryResult:
    sink: str
    is_delivered: bool
    attempts: int
    error: str | None = None


class AlertSink(Protocol):
    name: str

    def send(self, notification: Notification) -> DeliveryResult: ...


class LogSink:
    """One log line per alert (ERROR for error severity, WARNING otherwise) and a summary line."""

    name = "log"

    def send(self, notification: Notification) -> DeliveryResult:
        for alert in notification.alerts:
            level = logging.ERROR if alert.severity == "error" else logging.WARNING
            log.log(
                level, "[%s] %s %s: %s", notification.run_id, alert.check_name, alert.severity, alert.message
            )
        log.warning(
            "[%s] data quality %s: %d alerts (%s); report %s",
            notification.run_id, notification.status, notification.alerts_total,
            ", ".join(f"{k}={v}" for k, v in sorted(notification.alert_counts.items())), notification.report_path,
        )  # fmt: skip
        return DeliveryResult(self.name, True, 1)


class FileSink:
    """Appends one JSON object per alert (with the run's fields) to a JSON-lines file."""

    name = "file"

    def __init__(self, path: Path):
        self.path = Path(path)

    def send(self, notification: Notification) -> DeliveryResult:
        envelope = notification.envelope()
        lines = [
            json.dumps({**envelope, **alert.to_json()}, sort_keys=True) + "\n"
            for alert in notification.alerts
        ]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.writelines(lines)
        return DeliveryResult(self.name, True, 1)


class WebhookSink:
    """POSTs the notification as one JSON document; retries with exponential backoff."""

    name = "webhook"

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout_seconds: float = 10.0,
        retries: int = 3,
        backoff_seconds: float = 1.0,
        max_payload_bytes: int = 256 * 1024,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.url = url
        self.max_payload_bytes = max_payload_bytes
        self.headers = {
            "Content-Type": "application/json",
            "User-Agent": "offsetlake-quality",
            **(headers or {}),
        }
        self.timeout_seconds = timeout_seconds
        self.retries = retries
        self.backoff_seconds = backoff_seconds
        self._sleep = sleep

    def _post_once(self, body: bytes) -> tuple[bool, bool, str | None]:
        """(delivered, worth retrying, error) of one attempt."""
        request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                response.read()
                return True, False, None
        except urllib.error.HTTPError as error:
            retry = error.code >= 500 or error.code in _RETRIED_STATUS
            return False, retry, f"HTTP {error.code} {error.reason}"
        except (OSError, http.client.HTTPException) as error:  # refused, reset, timed out, garbled answer
            reason = getattr(error, "reason", error)
            return False, True, f"{type(reason).__name__}: {reason}"

    def send(self, notification: Notification) -> DeliveryResult:
        body = json.dumps(notification.bounded_json(self.max_payload_bytes), sort_keys=True).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            delivered, retry, error = self._post_once(body)
            if delivered:
                return DeliveryResult(self.name, True, attempt)
            log.warning("webhook %s attempt %d failed: %s", self.url, attempt, error)
            if not retry or attempt > self.retries:
                return DeliveryResult(self.name, False, attempt, error)
            self._sleep(min(self.backoff_seconds * 2 ** (attempt - 1), _MAX_WAIT_SECONDS))


def build_sink(settings: AlertSinkSettings) -> AlertSink:
    if settings.kind == "file":
        return FileSink(settings.path)
    if settings.kind == "webhook":
        return WebhookSink(
            settings.url,
            headers=settings.headers,
            timeout_seconds=settings.timeout_seconds,
            retries=settings.retries,
            backoff_seconds=settings.backoff_seconds,
            max_payload_bytes=settings.max_payload_bytes,
        )
    return LogSink()


def deliver(sink: AlertSink, notification: Notification) -> DeliveryResult:
    """Send ``notification`` through ``sink``; any failure is returned, never raised."""
    try:
        result = sink.send(notification)
    except Exception as error:  # a sink must not take the run down with it
        result = DeliveryResult(sink.name, False, 1, f"{type(error).__name__}: {error}")
    if not result.is_delivered:
        log.error(
            "alerts of run %s were not delivered to the %s sink: %s",
            notification.run_id,
            sink.name,
            result.error,
        )
    return result
