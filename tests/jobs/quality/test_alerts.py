"""Alert sinks against real endpoints: an HTTP server on 127.0.0.1, a file, the log."""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from jobs.quality.alerts import DeliveryResult, FileSink, LogSink, WebhookSink, build_sink, deliver
from jobs.quality.results import Alert, CheckResult, Notification
from schemas.quality import AlertSinkSettings

START = datetime(2026, 11, 21, 10, tzinfo=UTC)
END = datetime(2026, 11, 21, 11, tzinfo=UTC)
TOP = '[{"client_host": "10.0.0.7:35394", "measured_value": 100, "message": "offset moved back by 100 messages"}]'
REGRESSION = Alert(
    alert_id="a1",
    check_name="monitoring.large_regressions",
    severity="warn",
    table_name="silver.offset_regressions",
    message="2 findings on orders@billing, 180 in total; the largest: offset moved back by 100 messages",
    findings=2,
    cluster="c1",
    topic="orders",
    consumer_group="billing",
    measured_total=180,
    measured_max=100,
    first_observed_at=datetime(2026, 11, 21, 10, 5),
    last_observed_at=datetime(2026, 11, 21, 10, 9),
    top_findings=TOP,
)
FAILED = CheckResult(
    "monitoring.large_regressions",
    "monitoring",
    "silver.offset_regressions",
    "warn",
    False,
    None,
    1,
    "1 alert",
)
NOTIFICATION = Notification(
    run_id="run-7",
    interval_start=START,
    interval_end=END,
    has_errors=False,
    report_path="/lake/reports/quality/run-7.html",
    failed_checks=(FAILED,),
    alerts=(REGRESSION,),
    alerts_total=1,
    alert_counts={"monitoring.large_regressions": 1},
    findings_total=2,
)
EXPECTED_ALERT_JSON = {
    "alert_id": "a1",
    "check_name": "monitoring.large_regressions",
    "severity": "warn",
    "table_name": "silver.offset_regressions",
    "message": "2 findings on orders@billing, 180 in total; the largest: offset moved back by 100 messages",
    "findings": 2,
    "cluster": "c1",
    "topic": "orders",
    "consumer_group": "billing",
    "measured_total": 180,
    "measured_max": 100,
    "first_observed_at": "2026-11-21T10:05:00Z",
    "last_observed_at": "2026-11-21T10:09:00Z",
    "top_findings": [
        {
            "client_host": "10.0.0.7:35394",
            "measured_value": 100,
            "message": "offset moved back by 100 messages",
        }
    ],
}


class Endpoint(BaseHTTPRequestHandler):
    """Answers by path: /ok 200, /flaky 503 twice then 200, /down 500, /rejects 400, /slow sleeps 2 s."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server = self.server
        with server.lock:
            server.received.append((self.path, json.loads(body), self.headers.get("X-Token")))
            calls = sum(1 for path, _, _ in server.received if path == self.path)
        if self.path == "/slow":
            time.sleep(2)
        status = {"/ok": 200, "/down": 500, "/rejects": 400, "/slow": 200}.get(
            self.path, 503 if calls <= 2 else 200
        )
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    httpd.daemon_threads = True
    httpd.received, httpd.lock = [], threading.Lock()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def url(server, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def test_webhook_posts_the_notification_once(server):
    sink = WebhookSink(
        url(server, "/ok"), headers={"X-Token": "secret"}, timeout_seconds=2, retries=3, backoff_seconds=0.05
    )
    assert deliver(sink, NOTIFICATION) == DeliveryResult("webhook", True, 1)
    [(path, body, token)] = server.received
    assert (path, token) == ("/ok", "secret")
    assert body == {
        "source": "offsetlake",
        "run_id": "run-7",
        "interval_start": "2026-11-21T10:00:00Z",
        "interval_end": "2026-11-21T11:00:00Z",
        "status": "warnings",
        "has_errors": False,
        "report_path": "/lake/reports/quality/run-7.html",
        "failed_checks": [
            {"check_name": "monitoring.large_regressions", "severity": "warn", "table_name": "silver.offset_regressions",
             "failing_rows": 1, "message": "1 alert"}
        ],
        "alerts_total": 1,
        "alert_counts": {"monitoring.large_regressions": 1},
        "findings_total": 2,
        "alerts": [EXPECTED_ALERT_JSON],
        "alerts_omitted": 0,
    }  # fmt: skip


def test_webhook_retries_server_errors_until_it_succeeds(server):
    began = time.monotonic()
    result = deliver(
        WebhookSink(url(server, "/flaky"), timeout_seconds=2, retries=3, backoff_seconds=0.05), NOTIFICATION
    )
    assert result == DeliveryResult("webhook", True, 3)
    assert [path for path, _, _ in server.received] == ["/flaky"] * 3
    assert 0.05 + 0.1 <= time.monotonic() - began < 5  # waited 0.05 s, then 0.1 s


def test_webhook_that_always_fails_reports_the_error_without_raising(server):
    result = deliver(
        WebhookSink(url(server, "/down"), timeout_seconds=2, retries=2, backoff_seconds=0.01), NOTIFICATION
    )
    assert result == DeliveryResult("webhook", False, 3, "HTTP 500 Internal Server Error")
    assert len(server.received) == 3


def test_webhook_client_errors_are_not_retried(server):
    result = deliver(
        WebhookSink(url(server, "/rejects"), timeout_seconds=2, retries=3, backoff_seconds=0.01), NOTIFICATION
    )
    assert result == DeliveryResult("webhook", False, 1, "HTTP 400 Bad Request")


def test_webhook_timeout_is_honoured_on_a_slow_endpoint(server):
    began = time.monotonic()
    result = deliver(
        WebhookSink(url(server, "/slow"), timeout_seconds=0.3, retries=1, backoff_seconds=0.01), NOTIFICATION
    )
    elapsed = time.monotonic() - began
    assert (result.sink, result.is_delivered, result.attempts) == ("webhook", False, 2)
    assert "timed out" in result.error
    assert elapsed < 1.5  # two attempts of 0.3 s, far below the server's 2 s


def test_webhook_to_a_closed_port_is_retried_then_reported():
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = deliver(
        WebhookSink(f"http://127.0.0.1:{port}/", timeout_seconds=1, retries=1, backoff_seconds=0.01),
        NOTIFICATION,
    )
    assert (result.is_delivered, result.attempts, result.error) == (
        False,
        2,
        "ConnectionRefusedError: [Errno 111] Connection refused",
    )


def test_file_sink_appends_one_json_line_per_alert(tmp_path):
    path = tmp_path / "alerts" / "offsetlake.jsonl"
    sink = build_sink(AlertSinkSettings(kind="file", path=path))
    assert deliver(sink, NOTIFICATION) == DeliveryResult("file", True, 1)
    assert deliver(sink, NOTIFICATION).is_delivered
    envelope = {
        "source": "offsetlake",
        "run_id": "run-7",
        "interval_start": "2026-11-21T10:00:00Z",
        "interval_end": "2026-11-21T11:00:00Z",
    }
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {**envelope, **EXPECTED_ALERT_JSON}
    ] * 2


def test_file_sink_that_cannot_write_reports_the_error(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    result = deliver(FileSink(blocker / "alerts.jsonl"), NOTIFICATION)
    assert (result.sink, result.is_delivered, result.attempts) == ("file", False, 1)
    assert result.error.startswith(("FileExistsError", "NotADirectoryError"))


def test_log_sink_logs_each_alert_and_a_summary(caplog):
    with caplog.at_level(logging.WARNING, logger="offsetlake.quality.alerts"):
        assert deliver(LogSink(), NOTIFICATION) == DeliveryResult("log", True, 1)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "[run-7] monitoring.large_regressions warn: " + REGRESSION.message),
        (
            "WARNING",
            "[run-7] data quality warnings: 1 alerts (monitoring.large_regressions=1); report /lake/reports/quality/run-7.html",
        ),
    ]


def test_build_sink_follows_the_settings(tmp_path):
    webhook = build_sink(
        AlertSinkSettings(
            kind="webhook", url="https://hooks.example/x", timeout_seconds=3, retries=5, backoff_seconds=2
        )
    )
    assert (webhook.name, webhook.url, webhook.timeout_seconds, webhook.retries, webhook.backoff_seconds) == (
        "webhook", "https://hooks.example/x", 3, 5, 2
    )  # fmt: skip
    assert build_sink(AlertSinkSettings()).name == "log"


def test_a_webhook_body_keeps_the_alerts_that_fit_and_counts_the_rest():
    many = Notification(**{**NOTIFICATION.__dict__, "alerts": (REGRESSION,) * 50, "alerts_total": 50})
    whole = json.dumps(many.to_json(), sort_keys=True).encode()
    bounded = many.bounded_json(len(whole) // 4)
    assert len(json.dumps(bounded, sort_keys=True).encode()) <= len(whole) // 4
    assert 0 < len(bounded["alerts"]) < 50 and bounded["alerts_omitted"] == 50 - len(bounded["alerts"])
    assert bounded["alerts_total"] == 50
