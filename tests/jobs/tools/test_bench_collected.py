"""The hourly bench's landing, hour by hour: what a collector has landed of a simulated landing by an instant."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime

from jobs.sources import patterns
from jobs.tools.bench.collected import land_until, line_time, written_before
from schemas.config import Settings

ONE = datetime(2026, 11, 21, 1, tzinfo=UTC)
TWO = datetime(2026, 11, 21, 2, tzinfo=UTC)
COMMITS = (
    b'{"committed_at":"2026-11-21T00:59:59.887Z","broker":"broker-a","offset":10}\n'
    b'{"committed_at":"2026-11-21T01:00:00.165Z","broker":"broker-a","offset":11}\n'
    b'{"committed_at":"2026-11-21T01:30:00.000Z","broker":"broker-a","offset":12}\n'
)
# GMT+8: 08:59 is 00:59 UTC; the stack trace's line has no time and goes with the line before it
LOG = (
    b"2026-11-21 08:59:58 WARN thread - failed\n"
    b"\tat org.apache.rocketmq.Broker.run(Broker.java:1)\n"
    b"2026-11-21 09:00:01 INFO thread - recovered\n"
)
# a 4.x client's log: milliseconds after a comma, lines ended by CRLF
CLIENT_LOG = (
    b"2026-11-21 08:59:59,999 INFO RocketmqClient - [persistAll] Group: g ClientId: c\r\n"
    b"2026-11-21 09:00:00,001 INFO RocketmqClient - [persistAll] Group: g ClientId: c\r\n"
)


def test_a_line_tells_its_time_from_its_commit_or_its_local_log_time():
    assert line_time(COMMITS.splitlines()[0]) == datetime(2026, 11, 21, 0, 59, 59, 887000, tzinfo=UTC)
    assert line_time(LOG.splitlines()[0]) == datetime(2026, 11, 21, 0, 59, 58, tzinfo=UTC)
    assert line_time(LOG.splitlines()[1]) is None
    assert line_time(CLIENT_LOG.splitlines()[1]) == ONE


def test_a_copy_holds_the_lines_written_before_the_instant():
    assert written_before(COMMITS, ONE) == COMMITS.splitlines(keepends=True)[0]
    assert written_before(LOG, ONE) == b"".join(LOG.splitlines(keepends=True)[:2])
    assert written_before(LOG, datetime(2026, 11, 21, tzinfo=UTC)) == b""
    assert written_before(CLIENT_LOG, ONE) == CLIENT_LOG.splitlines(keepends=True)[0]
    assert written_before(CLIENT_LOG, ONE).endswith(b"\r\n")


def test_each_hour_lands_its_files_and_grows_the_streams(tmp_path):
    generated, landing = tmp_path / "generated", tmp_path / "landing"
    stream = generated / "commits/prod-1/broker-a/2026-11-21/00.jsonl"
    archive = generated / "commits/prod-1/broker-b/2026-11-21/00.jsonl.gz"
    log = generated / "broker_logs/prod-1/broker-a/broker.log"
    early = generated / "progress/prod-1/2026-11-21T00:55:00Z/topicStatus-t.txt"
    late = generated / "progress/prod-1/2026-11-21T01:05:00Z/topicStatus-t.txt"
    for path, content in (
        (stream, COMMITS),
        (archive, gzip.compress(COMMITS)),
        (log, LOG),
        (early, b"#Topic\n"),
        (late, b"#Topic\n"),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    kinds = patterns(Settings())

    assert land_until(generated, landing, ONE, kinds) == 3
    landed = landing / stream.relative_to(generated)
    assert landed.read_bytes() == COMMITS.splitlines(keepends=True)[0]
    assert (landing / log.relative_to(generated)).read_bytes() == b"".join(LOG.splitlines(keepends=True)[:2])
    assert (landing / early.relative_to(generated)).exists()
    assert not (landing / late.relative_to(generated)).exists()
    assert not (landing / archive.relative_to(generated)).exists()  # an archive appears whole

    # the stream and the log grew; the later output and the archive, whole by now, appear
    assert land_until(generated, landing, TWO, kinds) == 4
    assert landed.read_bytes() == COMMITS
    assert (landing / archive.relative_to(generated)).read_bytes() == archive.read_bytes()
    assert (landing / late.relative_to(generated)).exists()
    assert land_until(generated, landing, TWO, kinds) == 0  # nothing new: nothing landed again
    assert not list(landing.rglob(".*.part"))
