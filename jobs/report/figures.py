"""Figure builders the report's charts share: a query's rows (a pyarrow Table) in, a Plotly figure out.

Each takes the columns by the names its chart's query gives them, so a chart declares its
query and picks a builder (jobs.report.charts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go
import pyarrow as pa

HEIGHT = 380
# regressions nothing explains stand out in red; explained ones take the palette's colours
UNEXPLAINED, UNEXPLAINED_COLOUR = "unexplained", "#d62728"


def _styled(figure: go.Figure, *, x_title: str = "", y_title: str = "") -> go.Figure:
    figure.update_layout(
        template="plotly_white",
        height=HEIGHT,
        margin={"l": 60, "r": 20, "t": 10, "b": 40},
        legend={"orientation": "h", "yanchor": "top", "y": -0.15, "x": 0, "font": {"size": 11}},
        hovermode="closest",
        xaxis_title=x_title,
        yaxis_title=y_title,
    )
    return figure


def _series(rows: pa.Table, key: str) -> dict[str, dict[str, list]]:
    """The rows grouped by ``key``'s value, in the order first seen, each as column lists."""
    grouped: dict[str, dict[str, list]] = {}
    names = rows.column_names
    for row in rows.to_pylist():
        group = grouped.setdefault(str(row[key]), {n: [] for n in names})
        for name in names:
            group[name].append(row[name])
    return grouped


def lines(rows: pa.Table, *, x: str, y: str, series: str, y_title: str, log: bool = False) -> go.Figure:
    """A line per ``series`` value over ``x`` (time); a series that is zero throughout is left out.
    ``log``: a logarithmic y axis (zeros leave gaps), with buttons to switch to a linear one."""
    figure = go.Figure()
    for name, columns in _series(rows, series).items():
        if not any(columns[y]):
            continue
        figure.add_trace(
            go.Scatter(x=columns[x], y=columns[y], name=name, mode="lines",
                       hovertemplate=f"{name}<br>%{{x}}<br>{y_title}: %{{y:,}}<extra></extra>")
        )  # fmt: skip
    _styled(figure, y_title=y_title)
    if log:
        figure.update_yaxes(type="log")
        figure.update_layout(
            updatemenus=[{"type": "buttons", "direction": "right", "x": 1, "xanchor": "right", "y": 1.12,
                          "showactive": True, "font": {"size": 11},
                          "buttons": [{"label": "log", "method": "relayout", "args": [{"yaxis.type": "log"}]},
                                      {"label": "linear", "method": "relayout", "args": [{"yaxis.type": "linear"}]}]}],
            margin={"t": 34},
        )  # fmt: skip
    return figure


def bubbles(rows: pa.Table, *, x: str, y: str, size: str, colour: str, hover: Sequence[str]) -> go.Figure:
    """A marker per row at (``x``, ``y``), its area proportional to ``size``, coloured by ``colour``."""
    figure = go.Figure()
    largest = max([v for v in rows.column(size).to_pylist() if v] or [1])
    for name, columns in _series(rows, colour).items():
        text = [
            "<br>".join(f"{h}: {c}" for h, c in zip(hover, values))
            for values in zip(*(columns[h] for h in hover))
        ]
        figure.add_trace(
            go.Scatter(
                x=columns[x], y=columns[y], name=name, mode="markers", text=text,
                marker={"size": [8 + 32 * math.sqrt(max(v or 0, 0) / largest) for v in columns[size]],
                        "color": UNEXPLAINED_COLOUR if name.startswith(UNEXPLAINED) else None, "opacity": 0.75, "line": {"width": 1, "color": "#333"}},
                hovertemplate="%{x}<br>%{text}<extra>" + name + "</extra>",
            )
        )  # fmt: skip
    _styled(figure)
    keys = len(set(rows.column(y).to_pylist()))
    figure.update_layout(height=max(HEIGHT, 120 + 22 * keys),
                         yaxis={"automargin": True, "categoryorder": "category descending"})  # fmt: skip
    return figure


def top_bars(rows: pa.Table, *, label: str, value: str, value_title: str) -> go.Figure:
    """Horizontal bars, largest on top."""
    labels, values = rows.column(label).to_pylist(), rows.column(value).to_pylist()
    figure = go.Figure(
        go.Bar(x=values[::-1], y=[str(v) for v in labels[::-1]], orientation="h", marker_color="#1f77b4",
               hovertemplate="%{y}: %{x:,}<extra></extra>")
    )  # fmt: skip
    figure.update_layout(yaxis={"automargin": True})
    return _styled(figure, x_title=value_title)


def heat_map(rows: pa.Table, *, x: str, y: str, z: str, z_title: str) -> go.Figure:
    """A cell per (``x``, ``y``) coloured by ``z``; absent pairs stay empty (a gap shows as one)."""
    xs = sorted(set(rows.column(x).to_pylist()))
    ys = sorted({str(v) for v in rows.column(y).to_pylist()})
    cells = {(r[x], str(r[y])): r[z] for r in rows.to_pylist()}
    # the scale starts at zero (both ends given, or Plotly fits it to the data): a broker
    # whose snapshots thinned out shows paler, not the same colour as a full hour
    top = max(v for v in cells.values() if v is not None)
    figure = go.Figure(
        go.Heatmap(x=xs, y=ys, z=[[cells.get((at, name)) for at in xs] for name in ys], colorscale="Blues",
                   zmin=0, zmax=top,
                   colorbar={"title": {"text": z_title}}, hoverongaps=False,
                   hovertemplate="%{y}<br>%{x}<br>" + z_title + ": %{z}<extra></extra>")
    )  # fmt: skip
    _styled(figure)
    figure.update_layout(yaxis={"automargin": True}, height=min(HEIGHT, 110 + 45 * len(ys)))
    return figure


# the consumer statuses in the order of the rules (pipelines.marts.status), each its own colour
STATUS_COLOURS = {"OK": "#2ca02c", "WARN": "#ffbf00", "STALL": "#ff7f0e", "STOP": "#7f7f7f", "REWIND": "#9467bd",
                  "ERR": "#d62728"}  # fmt: skip


def status_map(rows: pa.Table, *, x: str, y: str, status: str, reason: str) -> go.Figure:
    """A cell per (``x``, ``y``) in its status's colour, the reason on hover; absent pairs stay empty."""
    names = list(STATUS_COLOURS)
    xs = sorted(set(rows.column(x).to_pylist()))
    ys = sorted({str(v) for v in rows.column(y).to_pylist()})
    cells = {(r[x], str(r[y])): r for r in rows.to_pylist()}
    z = [
        [names.index(cells[(at, name)][status]) if (at, name) in cells else None for at in xs] for name in ys
    ]
    text = [[cells[(at, name)][reason] if (at, name) in cells else "" for at in xs] for name in ys]
    # one flat band per status on a 0..len-1 scale, so each status keeps its colour whatever is present
    bands = [(i / len(names), colour) for i, colour in enumerate(STATUS_COLOURS.values())]
    scale = [
        point
        for i, (at, colour) in enumerate(bands)
        for point in ((at, colour), ((i + 1) / len(names), colour))
    ]
    figure = go.Figure(
        go.Heatmap(x=xs, y=ys, z=z, text=text, colorscale=scale, zmin=-0.5, zmax=len(names) - 0.5,
                   colorbar={"tickvals": list(range(len(names))), "ticktext": names}, hoverongaps=False,
                   hovertemplate="%{y}<br>%{x}<br>%{text}<extra></extra>")
    )  # fmt: skip
    _styled(figure)
    figure.update_layout(yaxis={"automargin": True}, height=min(HEIGHT, 110 + 45 * len(ys)))
    return figure


def stacked_bars(
    rows: pa.Table, *, x: str, y: str, stack: str, colours: dict[str, str], x_title: str
) -> go.Figure:
    """Horizontal bars of ``x`` per ``y``, stacked by ``stack`` (colours by its value)."""
    figure = go.Figure()
    for name, columns in _series(rows, stack).items():
        figure.add_trace(go.Bar(x=columns[x], y=columns[y], name=name, orientation="h", marker_color=colours.get(name),
                                hovertemplate="%{y}: %{x} " + name + "<extra></extra>"))  # fmt: skip
    _styled(figure, x_title=x_title)
    rows_shown = len(set(rows.column(y).to_pylist()))
    figure.update_layout(barmode="stack", height=140 + 26 * rows_shown,
                         yaxis={"automargin": True, "categoryorder": "category descending"})  # fmt: skip
    return figure
