"""The data-quality report of one run: a self-contained HTML page.

Written to ``<lake>/reports/quality/<run_id>.html``: the run's status, every check with
pass/fail, rows checked and failing, sample failing values, the alerts (a sample per
check; ``quality/alerts`` holds them all) and whether the alert sink received them. A lake
given as a URI (``s3a://``, ``hdfs://``, ``file://``) gets its report through Spark's Hadoop
file system, so it lands wherever the lake's tables do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from html import escape
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.quality.alerts import DeliveryResult
from jobs.quality.results import CheckResult, Notification
from schemas.instants import EPOCH, iso_z

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.pass{color:#176c2f}.warn{color:#9a6700}.error{color:#b3261e;font-weight:bold}
.status{font-size:1.3em;padding:.4em .8em;display:inline-block;border-radius:4px;background:#f3f3f3}
code{font-size:12px;white-space:pre-wrap}
"""


# the lake's charts of the same run (jobs.report), beside this report's directory
CHARTS_KIND = "lake"


def report_path(lake_root: str, run_id: str, kind: str = "quality") -> Path | str:
    """``<lake>/reports/<kind>/<run_id>.html`` (characters unsafe in a file name become ``_``):
    the quality report, or another report of the run; a URI when the lake is one."""
    name = f"reports/{kind}/" + re.sub(r"[^A-Za-z0-9._:+-]", "_", run_id) + ".html"
    return f"{lake_root.rstrip('/')}/{name}" if "://" in lake_root else Path(lake_root) / name


def _status(result: CheckResult) -> str:
    if result.is_success:
        return '<span class="pass">pass</span>'
    return f'<span class="{escape(result.severity)}">fail ({escape(result.severity)})</span>'


def _sample(result: CheckResult) -> str:
    if not result.sample:
        return ""
    return "<code>" + escape(json.dumps(list(result.sample), indent=1, default=str)) + "</code>"


def _checks_table(results: Sequence[CheckResult]) -> str:
    ordered = sorted(results, key=lambda r: (r.is_success, r.severity != "error", r.check_name))
    rows = "".join(
        f"<tr><td>{escape(r.check_name)}</td><td>{escape(r.check_kind)}</td><td>{escape(r.table_name)}</td>"
        f"<td>{_status(r)}</td><td>{'' if r.rows_checked is None else r.rows_checked}</td><td>{r.failing_rows}</td>"
        f"<td>{escape(r.message)}{_sample(r) if not r.is_success else ''}</td></tr>"
        for r in ordered
    )
    head = "<tr><th>check</th><th>kind</th><th>table</th><th>result</th><th>rows checked</th><th>failing</th><th>details</th></tr>"
    return f"<table>{head}{rows}</table>"


def _alerts_table(notification: Notification) -> str:
    if not notification.alerts:
        return "<p>No alerts.</p>"
    columns = ("check_name", "severity", "cluster", "topic", "consumer_group", "findings", "measured_total",
               "measured_max", "first_observed_at", "last_observed_at", "message")  # fmt: skip
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = ""
    for alert in notification.alerts:
        values = alert.to_json()
        body += (
            "<tr>"
            + "".join(f"<td>{escape('' if values[c] is None else str(values[c]))}</td>" for c in columns)
            + "</tr>"
        )
    counts = ", ".join(f"{escape(k)}: {v}" for k, v in sorted(notification.alert_counts.items()))
    return (
        f"<p>{notification.alerts_total} alerts ({counts}) of {notification.findings_total} findings "
        "(quality/findings holds every one); the alerts with the most findings of each check are shown.</p>"
        f"<table><tr>{head}</tr>{body}</table>"
    )


def _from(start) -> str:
    """The interval's start; a replay from the beginning (no earlier checkpoint) says so, not 1970."""
    return "the first event" if start == EPOCH else iso_z(start)


def render(
    notification: Notification, results: Sequence[CheckResult], delivery: DeliveryResult | None
) -> str:
    """The report page for one run."""
    failed = [r for r in results if not r.is_success]
    if delivery is None:
        sent = "nothing to send"
    elif delivery.is_delivered:
        sent = f"delivered to the {delivery.sink} sink ({delivery.attempts} attempt(s))"
    else:
        sent = f"NOT delivered to the {delivery.sink} sink after {delivery.attempts} attempt(s): {delivery.error}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>OffsetLake data quality: {escape(notification.run_id)}</title>
<style>{_STYLE}</style></head><body>
<h1>OffsetLake data quality</h1>
<p>Charts of this run's lake (lag, rates, regressions, coverage): <a href="../{CHARTS_KIND}/{escape(Path(str(report_path("", notification.run_id))).name)}">the lake report</a> (written by <code>offsetlake run</code> once it has published, or by <code>offsetlake report --run-id</code> without <code>--out</code>)</p>
<p class="status {"error" if notification.has_errors else "warn" if failed else "pass"}">{escape(notification.status)}</p>
<table>
<tr><th>run</th><td>{escape(notification.run_id)}</td></tr>
<tr><th>interval</th><td>{_from(notification.interval_start)} to {iso_z(notification.interval_end)}</td></tr>
<tr><th>checks</th><td>{len(results)} run, {len(failed)} failed ({sum(r.is_error for r in results)} errors)</td></tr>
<tr><th>alerts</th><td>{notification.alerts_total}; {escape(sent)}</td></tr>
</table>
<h2>Checks</h2>
{_checks_table(results)}
<h2>Alerts</h2>
{_alerts_table(notification)}
</body></html>
"""


def _write_through_hadoop(spark: SparkSession, uri: str, text: str) -> None:
    jvm = spark.sparkContext._jvm  # the Hadoop file system of the session: s3a, hdfs, abfs, file
    path = jvm.org.apache.hadoop.fs.Path(uri)
    out = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).create(path, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def write_report(
    spark: SparkSession,
    location: Path | str,
    notification: Notification,
    results: Sequence[CheckResult],
    delivery: DeliveryResult | None,
) -> Path | str:
    """Write the page to ``location`` (a local path, or a URI written through Hadoop)."""
    page = render(notification, results, delivery)
    if isinstance(location, str):
        _write_through_hadoop(spark, location, page)
    else:
        location.parent.mkdir(parents=True, exist_ok=True)
        location.write_text(page, encoding="utf-8")
    return location
