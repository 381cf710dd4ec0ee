"""consumerConnection outputs into bronze/group_connections rows: clients, a group not online, bad files."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from jobs.io.snapshot_files import WholeFile, read_whole_files
from pipelines.ingest.consumer_connection import (
    CLIENT_CELLS_REASON,
    ConnectionClient,
    ConnectionDocument,
    render_consumer_connection,
)
from pipelines.ingest.group_connections import GROUP_UNKNOWN, parse_group_connections
from tests.frames import assert_cached_parse_gives_the_same, rows

AT = datetime(2026, 11, 21, 10, 5, tzinfo=UTC)
ONLINE = ConnectionDocument(
    consumer_group="billing",
    clients=(
        ConnectionClient(0, "10.0.0.5@4711", "10.0.0.5:53524", "JAVA", "V4_9_7"),
        ConnectionClient(0, "10.0.0.6@4712", "10.0.0.6:53530", "JAVA", "V4_9_7"),
    ),
    topics=("orders", "%RETRY%billing"),
    consume_type="CONSUME_ACTIVELY",
    message_model="CLUSTERING",
    consume_from_where="CONSUME_FROM_LAST_OFFSET",
    is_online=True,
    rejected=(),
)
OFFLINE = ConnectionDocument("audit", (), (), None, None, None, False, (), not_online_line_no=5)


def _cut(text: str) -> str:
    lines = text.split("\n")
    lines[1:3] = ["10.0.0.7@99    10.0.0.7:5000"]
    return "\n".join(lines)


def _land(spark, tmp_path, files: dict[str, bytes]):
    landed = []
    for name, content in files.items():
        path = tmp_path / name
        path.write_bytes(content)
        landed.append(WholeFile(str(path), "c1", AT, hashlib.sha256(content).hexdigest()))
    return parse_group_connections(read_whole_files(spark, landed))


def test_each_client_is_a_row_and_a_group_not_online_is_one_row_without_a_client(spark, tmp_path):
    parsed = _land(
        spark,
        tmp_path,
        {
            "consumerConnection-billing.txt": render_consumer_connection(ONLINE, "4").encode(),
            "consumerConnection-audit.txt": render_consumer_connection(OFFLINE, "5").encode(),
            "consumerConnection-nobody.txt": b"",
            # its client rows cut mid-row: quarantined, and no row lands for them
            "consumerConnection-cut.txt": _cut(render_consumer_connection(ONLINE, "4")).encode(),
            "notes.txt": b"#ClientId #ClientAddr #Language #Version\n",
        },
    )
    columns = ("consumer_group", "client_id", "client_host", "consume_type", "topics", "is_online", "line_no")
    assert rows(parsed.landed, *columns) == [
        ("audit", None, None, None, None, False, 5),  # the line that says so
        ("billing", "10.0.0.5@4711", "10.0.0.5:53524", "CONSUME_ACTIVELY", "orders,%RETRY%billing", True, 2),
        ("billing", "10.0.0.6@4712", "10.0.0.6:53530", "CONSUME_ACTIVELY", "orders,%RETRY%billing", True, 3),
    ]
    rejected = {(r.source_file.rsplit("/", 1)[-1], r.reason) for r in parsed.rejected.collect()}
    assert rejected == {
        ("consumerConnection-nobody.txt", "empty file (0 bytes)"),
        ("consumerConnection-cut.txt", CLIENT_CELLS_REASON),
        ("notes.txt", GROUP_UNKNOWN),
    }
    assert_cached_parse_gives_the_same(parsed, "observed_at")
