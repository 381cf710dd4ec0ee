"""The commit reader writing the rows of the lines it checked itself: the rows Spark would land, files that a
re-run rewrites under the same names, and an accounting read from their footers. And the replay's workers' text,
held as dictionaries, written as text with each file's own values."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.io.checked_commits import CheckedCommitWriter
from jobs.io.text_lines import READ_ARROW_SCHEMA, READ_SCHEMA, _arrow_schema
from jobs.io.worker_files import FILE_METADATA_KEY, FileCount, landed_counts, write_part
from pipelines.ingest.commit_events import CHECKED
from pipelines.ingest.commit_preparse import (
    COMMITS_ARROW_SCHEMA,
    PREPARSED_SCHEMA,
    checked_commit_rows,
    preparse,
)
from schemas.tables import OFFSET_COMMITS_REPLAYED

FILES = {
    0: ("/landing/commits/a.jsonl", "prod-1", "hash-a"),
    1: ("/landing/commits/b.jsonl", "prod-2", "hash-b"),
}
SCHEMA = _arrow_schema([*READ_SCHEMA.fields, *PREPARSED_SCHEMA.fields])


def commit(at: str, offset: int, **extra) -> str:
    fields = {
        "committed_at": at,
        "broker": "broker-a",
        "topic": "%RETRY%g",
        "consumer_group": "g",
        "queue_id": 3,
        "offset": offset,
    }
    return json.dumps({**fields, **extra})


def batch(lines: list[tuple[int, int, str]]) -> pa.RecordBatch:
    """The reader's batch of (file number, line number, text) lines, with the pre-parse's columns."""
    text = pa.array([t for _, _, t in lines], pa.string())
    read = [pa.array([n for n, _, _ in lines], pa.int64()), pa.array([i for _, i, _ in lines], pa.int64()), text,
            pa.nulls(len(lines), pa.string())]  # fmt: skip
    assert [f.name for f in READ_ARROW_SCHEMA] == ["_file", "line_no", "line", "read_error"]
    return pa.RecordBatch.from_arrays([*read, *preparse(text)], schema=SCHEMA)


LINES = [
    (0, 1, commit("2026-11-21T23:59:59.999Z", 10, path="update_offset")),
    (0, 2, commit("2026-11-22T00:00:00.001Z", 11)),
    (0, 3, commit("2026-11-22T00:00:01Z", -1)),  # a bad offset: Spark's to reject
    (
        1,
        1,
        '{"committed_at":1795305600000,"broker":"broker-b","topic":"t","consumer_group":"g@broadcast","queue_id":0,"offset":5}',
    ),
    (1, 2, commit("2026-11-22T00:00:02Z", 12, agent="hook")),  # an extra field: Spark's to land
]


def test_checked_lines_become_the_rows_spark_lands():
    lines = batch(LINES)
    rows = checked_commit_rows(lines.filter(lines.column(CHECKED)), FILES, "run-1")
    assert rows.schema == COMMITS_ARROW_SCHEMA
    got = rows.select(["cluster", "committed_at", "key_kind", "queue_id", "offset", "evidence", "commit_path", "source_file",
                       "line_no", "_file_hash", "_ingest_run_id", "commit_date", "extra_fields"]).to_pylist()  # fmt: skip
    utc = UTC
    assert [tuple(r.values()) for r in got] == [
        ("prod-1", datetime(2026, 11, 21, 23, 59, 59, 999000, utc), "retry", 3, 10, "commit_log", "update_offset",
         "/landing/commits/a.jsonl", 1, "hash-a", "run-1", datetime(2026, 11, 21).date(), None),
        ("prod-1", datetime(2026, 11, 22, 0, 0, 0, 1000, utc), "retry", 3, 11, "commit_log", None,
         "/landing/commits/a.jsonl", 2, "hash-a", "run-1", datetime(2026, 11, 22).date(), None),
        ("prod-2", datetime(2026, 11, 22, tzinfo=utc), "broadcast", 0, 5, "commit_log", None,
         "/landing/commits/b.jsonl", 1, "hash-b", "run-1", datetime(2026, 11, 22).date(), None),
    ]  # fmt: skip


def test_the_reader_writes_checked_lines_by_file_and_date_and_passes_on_the_rest(tmp_path):
    writer = CheckedCommitWriter(str(tmp_path / "landed"), "run-1")
    rest = writer.write(batch(LINES), FILES)
    assert list(zip(rest.column("_file").to_pylist(), rest.column("line_no").to_pylist())) == [(0, 3), (1, 2)]
    written = sorted(
        p.relative_to(tmp_path / "landed").as_posix() for p in (tmp_path / "landed").rglob("*.parquet")
    )
    assert written == [
        "commit_date=2026-11-21/part-000000-000000000001.parquet",
        "commit_date=2026-11-22/part-000000-000000000002.parquet",
        "commit_date=2026-11-22/part-000001-000000000001.parquet",
    ]
    # a partition column lives in the directory name, as Spark's writer leaves it
    assert "commit_date" not in pq.read_schema(tmp_path / "landed" / written[0]).names
    before = {p: p.read_bytes() for p in (tmp_path / "landed").rglob("*.parquet")}
    writer.write(batch(LINES), FILES)  # a task run again
    assert {p: p.read_bytes() for p in (tmp_path / "landed").rglob("*.parquet")} == before
    utc = UTC
    assert landed_counts(str(tmp_path / "landed")) == {
        "/landing/commits/a.jsonl": FileCount(2, 0, datetime(2026, 11, 21, 23, 59, 59, 999000, utc), datetime(2026, 11, 22, 0, 0, 0, 1000, utc)),
        "/landing/commits/b.jsonl": FileCount(1, 0, datetime(2026, 11, 22, tzinfo=utc), datetime(2026, 11, 22, tzinfo=utc)),
    }  # fmt: skip


def test_a_batch_without_checked_lines_passes_whole_and_writes_nothing(tmp_path):
    lines = batch([LINES[2], LINES[4]])
    assert CheckedCommitWriter(str(tmp_path / "landed"), "run-1").write(lines, FILES).equals(lines)
    assert not (tmp_path / "landed").exists()


def test_a_dictionary_column_is_written_as_text_with_only_the_values_its_file_uses(tmp_path):
    # the replay's workers hold a queue's and a file's text as a dictionary of the whole interval's
    dictionary = pa.array(["/l/a.jsonl", "/l/b.jsonl", "/l/c.jsonl"])
    files = pa.DictionaryArray.from_arrays(pa.array([2, 0, 2, None], pa.int32()), dictionary)
    (file,) = _written(tmp_path, files, {FILE_METADATA_KEY: b"/l/a.jsonl"})
    assert pq.read_schema(file).field("source_file").type == pa.string()  # text to every reader
    assert pq.read_table(file).column("source_file").to_pylist() == [
        "/l/c.jsonl",
        "/l/a.jsonl",
        "/l/c.jsonl",
        None,
    ]
    assert _stored_dictionary(file) == ["/l/a.jsonl", "/l/c.jsonl"]  # not b.jsonl
    assert pq.read_metadata(file).metadata[FILE_METADATA_KEY] == b"/l/a.jsonl"


def test_a_null_among_a_dictionarys_values_is_written_as_a_null_row(tmp_path):
    files = pa.DictionaryArray.from_arrays(pa.array([1, 0], pa.int32()), pa.array(["/l/a.jsonl", None]))
    (file,) = _written(tmp_path, files)
    assert pq.read_table(file).column("source_file").to_pylist() == [None, "/l/a.jsonl"]
    assert _stored_dictionary(file) == ["/l/a.jsonl"]


def _written(directory, source_file: pa.Array, metadata: dict | None = None) -> list:
    rows = pa.table(
        {
            "source_file": source_file,
            "line_no": pa.array(range(len(source_file)), pa.int64()),
            "commit_date": pa.array([datetime(2026, 11, 21).date()] * len(source_file), pa.date32()),
        }
    )
    write_part(str(directory), OFFSET_COMMITS_REPLAYED, rows, "part-0", metadata)
    return list(directory.rglob("*.parquet"))


def _stored_dictionary(file) -> list:
    """The text values the file's dictionary page holds."""
    return (
        pq.ParquetFile(file, read_dictionary=["source_file"])
        .read()
        .column("source_file")
        .chunk(0)
        .dictionary.to_pylist()
    )
