"""The report page: every chart of jobs.report.charts over one interval, in one HTML file that
opens offline (Plotly's JavaScript is inlined once; no request leaves the page).

    html = render(open_lake_sql("/data/lake"), start=None, end=None)   # all history
    write_report("/data/lake", Path("report.html"), start, end)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from urllib.parse import quote

import plotly.graph_objects as go
import pyarrow as pa
from plotly.offline import get_plotlyjs

from jobs.io.query import LakeSql, QueryError, open_lake_sql
from jobs.quality.report import CHARTS_KIND, report_path
from jobs.report.charts import CHARTS, FAILED_CHECKS_SQL, Chart
from schemas.instants import iso_z

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2433;background:#f4f6f9}
header{background:#1d2433;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:22px}header p{margin:0;color:#c7cedb}header a{color:#9cc3ff}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:18px;padding:18px 28px}
section{min-width:0;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12);padding:14px 16px}
section.wide{grid-column:1/-1}section h2{margin:0;font-size:16px}section p.answers{margin:2px 0 8px;color:#5b6475;font-size:13px}
.empty{color:#8a93a3;padding:40px 0;text-align:center}
table{border-collapse:collapse;width:100%;font-size:12px;margin-top:8px}
th,td{border-bottom:1px solid #e3e7ee;padding:3px 6px;text-align:left;vertical-align:top}
"""
_CONFIG = {"displaylogo": False, "responsive": True}


def report_location(lake_root: str | Path, run_id: str) -> Path:
    """Where a run's report goes: ``<lake>/reports/lake/<run_id>.html``, where its quality report links."""
    return Path(report_path(str(lake_root), run_id, CHARTS_KIND))


def quality_link(lake_root: str | Path, run_id: str, page: Path) -> dict[str, str]:
    """The run's quality report, linked from its lake report written to ``page`` (an address
    relative to it: the lake's reports move together); no link when the run wrote none (no audit
    under that id)."""
    quality = Path(report_path(str(lake_root), run_id))
    if not quality.is_file():
        return {}
    return {"data-quality report of this run": quote(Path(os.path.relpath(quality, page.parent)).as_posix())}


def interval_condition(column: str, start: datetime | None, end: datetime | None) -> str:
    """SQL for ``start <= column < end`` (either bound optional; none: every row)."""
    parts = []
    if start is not None:
        parts.append(f"{column} >= TIMESTAMP '{iso_z(start)}'")
    if end is not None:
        parts.append(f"{column} < TIMESTAMP '{iso_z(end)}'")
    return " AND ".join(parts) or "TRUE"


def _section(chart: Chart, queries: LakeSql, start: datetime | None, end: datetime | None) -> str:
    where = interval_condition(chart.time_column, start, end)
    wide = ' class="wide"' if chart.wide else ""
    head = f'<section id="{chart.key}-chart"{wide}><h2>{escape(chart.title)}</h2><p class="answers">{escape(chart.answers)}</p>'
    try:
        rows = queries.run(chart.sql.format(where=where))
    except QueryError as error:
        return f'{head}<p class="empty">Not available: {escape(str(error).split(";")[0])}</p></section>'
    if rows.num_rows == 0:
        return f'{head}<p class="empty">No rows in this interval.</p></section>'
    figure: go.Figure = chart.figure(rows)
    body = figure.to_html(full_html=False, include_plotlyjs=False, div_id=chart.key, config=_CONFIG)
    extra = _failed_checks(queries, start, end) if chart.key == "quality" else ""
    return f'{head}<div class="chart">{body}</div>{extra}</section>'


def _failed_checks(queries: LakeSql, start: datetime | None, end: datetime | None) -> str:
    try:
        rows = queries.run(FAILED_CHECKS_SQL.format(where=interval_condition("interval_start", start, end)))
    except QueryError:
        return ""
    return _table(rows, limit=30) if rows.num_rows else "<p>Every check passed.</p>"


def _table(rows: pa.Table, limit: int) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in rows.column_names)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(_text(v))}</td>" for v in row.values()) + "</tr>"
        for row in rows.slice(0, limit).to_pylist()
    )
    more = f"<p>{rows.num_rows - limit} more not shown.</p>" if rows.num_rows > limit else ""
    return f"<table><tr>{head}</tr>{body}</table>{more}"


def _text(value: object) -> str:
    return iso_z(value) if isinstance(value, datetime) else "" if value is None else str(value)


def render(
    queries: LakeSql, start: datetime | None, end: datetime | None, links: Mapping[str, str] | None = None
) -> str:
    """The whole page; ``links`` (text -> address) are shown under the title."""
    span = f"{iso_z(start) if start else 'the first event'} to {iso_z(end) if end else 'the last'}"
    generated = iso_z(datetime.now(UTC).replace(microsecond=0))
    link_html = " · ".join(
        f'<a href="{escape(href)}">{escape(text)}</a>' for text, href in (links or {}).items()
    )
    sections = "\n".join(_section(chart, queries, start, end) for chart in CHARTS)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>OffsetLake: {escape(queries.root)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_STYLE}</style><script>{get_plotlyjs()}</script></head><body>
<header><h1>OffsetLake</h1><p>{escape(queries.root)} · {escape(span)} · generated {generated}</p>
<p>{link_html}</p></header>
<main>
{sections}
</main></body></html>
"""


def write_report(
    lake_root: str | Path,
    out: Path,
    start: datetime | None = None,
    end: datetime | None = None,
    links: Mapping[str, str] | None = None,
) -> Path:
    """Render the report of the lake at ``lake_root`` into ``out`` (its directory created)."""
    page = render(open_lake_sql(lake_root), start, end, links)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
