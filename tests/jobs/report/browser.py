"""The report opened as a person opens it: a file in headless Chromium (Debian's ``chromium``),
driven by Playwright, with no network.

``open_report`` waits until every chart has drawn, and returns, per chart, the marks Plotly
drew (points, line paths, bars, heat-map images) and every error the page logged; it saves
a screenshot of the whole page.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = os.environ.get("OFFSETLAKE_CHROMIUM", "/usr/bin/chromium")
MISSING = (
    "the browser test needs Debian's Chromium at {path}: run 'make browser' "
    "(apt-get install chromium), or set OFFSETLAKE_CHROMIUM to a Chromium executable"
)
# as root in a container, without the sandbox; the others stop Chromium's own requests
# (updates, sync, metrics), which a machine without network refuses many at a time
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]  # fmt: skip
MARKS = "g.trace path.js-line, g.trace .point, g.trace .bars path, g.hm image, g.trace.bars path"


@dataclass(frozen=True)
class Opened:
    charts: dict[str, int]  # chart id -> marks drawn
    errors: list[str]
    sections: int


def chromium() -> str:
    """The Chromium executable; fails (never skips) with what to install when it is missing."""
    path = CHROMIUM if os.path.isabs(CHROMIUM) else shutil.which(CHROMIUM)
    if not path or not os.access(path, os.X_OK):
        raise AssertionError(MISSING.format(path=CHROMIUM))
    return path


def open_report(page_file: Path, screenshot: Path) -> Opened:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on(
                "console",
                lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
            )
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
            # an offline page asks for nothing beyond itself
            page.on(
                "request",
                lambda r: (
                    None
                    if r.url.startswith(("file:", "data:", "blob:"))
                    else errors.append(f"request: {r.url}")
                ),
            )
            page.goto(page_file.resolve().as_uri())
            page.wait_for_function(
                "() => [...document.querySelectorAll('.js-plotly-plot')].length > 0 &&"
                " [...document.querySelectorAll('.js-plotly-plot')].every(d => d._fullLayout)",
                timeout=30_000,
            )
            charts = page.evaluate(
                "(marks) => Object.fromEntries([...document.querySelectorAll('.js-plotly-plot')]"
                ".map(d => [d.id, d.querySelectorAll(marks).length]))",
                MARKS,
            )
            sections = page.evaluate("() => document.querySelectorAll('section').length")
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return Opened(charts, errors, sections)
