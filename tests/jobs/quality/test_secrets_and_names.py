"""Secrets come from the environment and are never shown; names from landed files (anyone can write
them) are inert in every HTML page, alert payload and log line. No Spark."""

from __future__ import annotations

import json
import logging
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from jobs.cli.main import main
from jobs.io.query import QUERYABLE_TABLES
from jobs.quality.alerts import FileSink, LogSink, WebhookSink, deliver, masked_url
from jobs.quality.report import render as render_quality
from jobs.quality.results import Alert, CheckResult, Notification
from jobs.report.page import write_report
from schemas.config import ConfigError, load_settings
from schemas.tables import (
    CONSUME_THROUGHPUT,
    CONSUMER_LAG_BY_GROUP,
    OFFSET_REGRESSIONS,
    QUALITY_CHECK_RESULTS,
)
from tests.lakes import DAY, write_rows

TOKEN = "s3cr3t-t0ken-4711"
HOOK_PATH = "/services/T000/B000/XXXXhooksecret"
TOPIC = "</script><script>alert('topic')</script>"
GROUP = "billing\"'&<img src=x onerror=alert(1)>\nFORGED ERROR line"
HOST = "<b>10.0.0.7</b>:1&amp;"
RAW_MARKUP = ("<script>alert", "<img src=x", "<b>10.0.0.7")

SETTINGS = """
[quality.sink]
kind = "webhook"
url = "${OFFSETLAKE_WEBHOOK_URL}"
headers = { Authorization = "Bearer ${OFFSETLAKE_WEBHOOK_TOKEN}", X-Literal = "$${NOT_A_VARIABLE}" }
"""


def test_settings_take_secrets_from_the_environment_and_never_show_them(tmp_path):
    config = tmp_path / "offsetlake.toml"
    config.write_text(SETTINGS)
    environ = {
        "OFFSETLAKE_WEBHOOK_URL": "https://hooks.example" + HOOK_PATH,
        "OFFSETLAKE_WEBHOOK_TOKEN": TOKEN,
    }
    sink = load_settings(config, environ).quality.sink
    assert (sink.url, sink.headers) == (
        "https://hooks.example" + HOOK_PATH,
        {"Authorization": f"Bearer {TOKEN}", "X-Literal": "${NOT_A_VARIABLE}"},
    )
    assert TOKEN not in repr(load_settings(config, environ)) and HOOK_PATH not in repr(sink)
    with pytest.raises(ConfigError) as missing:
        load_settings(config, {"OFFSETLAKE_WEBHOOK_URL": "https://hooks.example/x"})
    assert str(missing.value) == (
        f"configuration file {config}: quality.sink.headers.Authorization: "
        "environment variable OFFSETLAKE_WEBHOOK_TOKEN is not set"
    )


def test_a_missing_variable_stops_the_run_with_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OFFSETLAKE_WEBHOOK_URL", raising=False)
    config = tmp_path / "offsetlake.toml"
    config.write_text(SETTINGS)
    (tmp_path / "landing").mkdir()
    argv = [
        "run",
        "--landing",
        str(tmp_path / "landing"),
        "--lake",
        str(tmp_path / "lake"),
        "--config",
        str(config),
    ]
    assert main(argv) == 2
    assert "environment variable OFFSETLAKE_WEBHOOK_URL is not set" in capsys.readouterr().err
    assert not (tmp_path / "lake").exists()


class Rejecting(BaseHTTPRequestHandler):
    def do_POST(self):
        self.server.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Rejecting)
    httpd.daemon_threads, httpd.bodies = True, []
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


def hostile_notification() -> Notification:
    alert = Alert(
        alert_id="a1", check_name="monitoring.large_regressions", severity="error",
        table_name="silver.offset_regressions", message=f"2 findings on {TOPIC}@{GROUP} by {HOST}", findings=2,
        cluster="c1", topic=TOPIC, consumer_group=GROUP, measured_total=180, measured_max=100,
        first_observed_at=DAY, last_observed_at=DAY,
        top_findings=json.dumps([{"client_host": HOST, "measured_value": 100, "message": f"{TOPIC} {GROUP}"}]),
    )  # fmt: skip
    failed = CheckResult("monitoring.large_regressions", "monitoring", "silver.offset_regressions", "error",
                         False, None, 1, f"1 alert on {TOPIC}", sample=({"consumer_group": GROUP},))  # fmt: skip
    return Notification(
        run_id="r-1", interval_start=DAY, interval_end=DAY + timedelta(hours=1), has_errors=True,
        report_path="/lake/reports/quality/r-1.html", failed_checks=(failed,), alerts=(alert,), alerts_total=1,
        alert_counts={"monitoring.large_regressions": 1}, findings_total=2,
    )  # fmt: skip


def test_a_failing_webhook_names_neither_its_url_nor_its_token(endpoint, caplog):
    base, httpd = endpoint
    sink = WebhookSink(base + HOOK_PATH + "?key=" + TOKEN, headers={"Authorization": f"Bearer {TOKEN}"},
                       timeout_seconds=2, retries=1, backoff_seconds=0.01)  # fmt: skip
    with caplog.at_level(logging.DEBUG):
        result = deliver(sink, hostile_notification())
    page = render_quality(hostile_notification(), list(hostile_notification().failed_checks), result)
    assert (result.is_delivered, result.error) == (False, "HTTP 403 Forbidden")
    for shown in (caplog.text, page, str(result)):
        assert TOKEN not in shown and HOOK_PATH not in shown
    assert f"webhook {masked_url(base + HOOK_PATH)} attempt 1 failed" in caplog.text  # a 403 is not retried
    assert masked_url("https://u:pw@hooks.example:8443/a/b?t=1") == "https://hooks.example:8443/…"
    # the hostile names travel as JSON strings: parsed back exactly, never markup
    body = httpd.bodies[0]
    assert json.loads(body)["alerts"][0]["consumer_group"] == GROUP and b"\nFORGED" not in body


def test_an_error_raised_inside_the_sink_is_masked_too():
    sink = WebhookSink(f"http://127.0.0.1:9{HOOK_PATH} x", headers={"Authorization": TOKEN}, retries=0)
    result = deliver(sink, hostile_notification())
    assert (result.is_delivered, result.error.split(".")[0]) == (
        False,
        "InvalidURL: URL can't contain control characters",
    )
    assert HOOK_PATH not in result.error and TOKEN not in result.error


def test_the_quality_report_shows_hostile_names_escaped():
    notification = hostile_notification()
    page = render_quality(notification, list(notification.failed_checks), None)
    assert not [markup for markup in RAW_MARKUP if markup in page]
    assert "&lt;/script&gt;&lt;script&gt;alert(&#x27;topic&#x27;)&lt;/script&gt;" in page


def test_file_and_log_sinks_keep_one_alert_per_line(tmp_path, caplog):
    FileSink(tmp_path / "alerts.jsonl").send(hostile_notification())
    [line] = (tmp_path / "alerts.jsonl").read_text().splitlines()
    assert (json.loads(line)["topic"], json.loads(line)["consumer_group"]) == (TOPIC, GROUP)
    with caplog.at_level(logging.WARNING):
        LogSink().send(hostile_notification())
    assert [
        r.getMessage() for r in caplog.records if "FORGED" in r.getMessage() and "\n" in r.getMessage()
    ] == []
    assert "\\nFORGED ERROR line" in caplog.text


def hostile_lake(root: Path) -> Path:
    at = DAY + timedelta(hours=1)
    where = {"cluster": "c1<i>", "topic": TOPIC, "consumer_group": GROUP}
    given = {
        OFFSET_REGRESSIONS: [{**where, "broker": "b<u>", "queue_id": 1, "detected_at": at, "offset": 10,
                              "stored_offset": 300, "regression_size": 290, "evidence": "commit", "client_host": HOST,
                              "key_kind": "normal", "observation_seq": "1", "cause": "unexplained",
                              "detected_date": at.date()}],
        CONSUMER_LAG_BY_GROUP: [{**where, "observed_at": at, "queues": 4, "total_lag_messages": 9,
                                 "observed_date": at.date()}],
        CONSUME_THROUGHPUT: [{**where, "window_start": DAY, "window_end": at, "messages_consumed": 3600,
                              "messages_per_second": 1.0, "observations": 12, "window_date": DAY.date()}],
        QUALITY_CHECK_RESULTS: [{"run_id": "r<1>", "interval_start": DAY, "interval_end": at, "severity": "warn",
                                 "check_name": "monitoring.large_regressions", "check_kind": "monitoring",
                                 "table_name": "silver.offset_regressions", "is_success": False, "rows_checked": 1,
                                 "failing_rows": 1, "message": f"{TOPIC}@{GROUP}"}],
    }  # fmt: skip
    for spec in QUERYABLE_TABLES:
        write_rows(root, spec, given.get(spec, []))
    return root


def test_the_lake_report_shows_hostile_names_escaped(tmp_path):
    lake = hostile_lake(tmp_path / "lake")
    page = write_report(lake, tmp_path / "report.html").read_text()
    plotly_js = page.index("</script>")  # Plotly's own script, inlined in the head, ends here
    body = page[plotly_js + len("</script>") :]
    assert not [markup for markup in (*RAW_MARKUP, "<i>", "<u>") if markup in body]
    assert body.count("<script") == body.count("</script>")  # only the charts' own scripts
    assert "&lt;/script&gt;&lt;script&gt;alert(&#x27;topic&#x27;)" in body  # the failed checks' table
    assert "\\u003c\\u002fscript\\u003e" in body  # the charts' data: JSON with < and / escaped


def test_the_readmes_settings_example_loads_with_its_variables_set(tmp_path):
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    example = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "readme.toml").write_text(example)
    environ = {"OFFSETLAKE_WEBHOOK_URL": "https://hooks.example/x", "OFFSETLAKE_WEBHOOK_TOKEN": TOKEN}
    assert load_settings(tmp_path / "readme.toml", environ).quality.sink.headers == {
        "Authorization": f"Bearer {TOKEN}"
    }
