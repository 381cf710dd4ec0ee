"""Brokers' ``broker.log``: NOTIFYME regressions, ``[reset-offset]`` lines, ``PULL_OFFSET_MOVED`` corrections."""

from __future__ import annotations

from jobs.io.landing import LandedFile
from jobs.sources.collector import ParseContext
from jobs.sources.source import LOGGED_COMMITS, Source
from pipelines.ingest.broker_log import parse_broker_log
from schemas.tables import OFFSET_COMMITS, OFFSET_RESETS


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    zone = lambda cluster: SOURCE.timezone(context.settings, cluster)  # noqa: E731
    collector = context.collector
    lines, changing = context.log_lines(files, zone, keep=True)  # two parsers read the lines: read them once
    parsed = parse_broker_log(lines, changing)
    collector.add(OFFSET_COMMITS, parsed.commits, SOURCE.kind)
    collector.add(OFFSET_RESETS, parsed.resets, SOURCE.kind)


SOURCE = Source(
    kind="broker_logs",
    default_pattern="broker_logs/{cluster}/{broker}/**/*.log*",
    description="NOTIFYME regressions, [reset-offset] lines, PULL_OFFSET_MOVED corrections",
    lands=(OFFSET_COMMITS, OFFSET_RESETS),
    parse=parse,
    replay_role=LOGGED_COMMITS,
    timezone_setting="broker_log_timezone",
    grows=True,
)
