"""Consumers' ``rocketmq_client.log``: the ``[persistAll]`` / ``[persist]`` lines of each commit sent."""

from __future__ import annotations

from jobs.io.landing import LandedFile
from jobs.sources.collector import ParseContext
from jobs.sources.source import LOGGED_COMMITS, Source
from pipelines.ingest.client_log import parse_client_log
from schemas.tables import OFFSET_COMMITS


def parse(context: ParseContext, files: list[LandedFile]) -> None:
    zone = lambda cluster: SOURCE.timezone(context.settings, cluster)  # noqa: E731
    lines, changing = context.log_lines(files, zone)
    context.collector.add(OFFSET_COMMITS, parse_client_log(lines, changing), SOURCE.kind)


SOURCE = Source(
    kind="client_logs",
    default_pattern="client_logs/{cluster}/**/*.log*",
    description="[persistAll] / [persist] lines (4.x and 5.x layouts)",
    lands=(OFFSET_COMMITS,),
    parse=parse,
    replay_role=LOGGED_COMMITS,
    timezone_setting="client_log_timezone",
    grows=True,
)
