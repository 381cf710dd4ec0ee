"""A landed file that lands again under the same path: a commit stream longer (a collector copying a
file still being written) adds only its new lines, and the lake equals one that landed the whole file
once; a commit stream with other content is a second version; a snapshot with other content
replaces what the earlier version said."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from deltalake import DeltaTable, write_deltalake

from jobs.stages.runner import run_stages
from jobs.tools.lake_compare import RUN_COLUMNS, compare_table, delta_tables
from jobs.tools.simulator import SimulationSpec, simulate
from schemas.config import Settings
from schemas.tables import STORED_OFFSET_TIMELINE

START = datetime(2026, 11, 21, tzinfo=UTC)
END = START + timedelta(hours=1)
# an hour of one group on two queues, snapshots every half hour
SMALL = SimulationSpec(
    start=START, duration=timedelta(hours=1), topics=1, queues_per_topic=(2,), groups=1, clients_per_group=(1,),
    snapshot_interval=timedelta(minutes=30), bak_every=0, progress_interval=timedelta(minutes=30), client_logs_for=0,
    rate_scale=0.1,
)  # fmt: skip
# what a copy's lines change is what the ingest lands and the replay makes of it: most tests below
# stop there and compare the silver tables; the first and the snapshot's run every stage, and
# compare the gold tables and the audit's outcome too
REPLAYED = ("ingest", "replay")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("line_end", "cut_after", "reread"),
    [
        (b"\n", 5, 1),  # the first copy cuts a line short: quarantined, then read again whole
        (b"\r\n", 0, 0),  # CRLF lines, the first copy's last line whole but for its line end: read once
    ],
    ids=["cut-line", "crlf-whole-line"],
)
def test_a_grown_commit_file_adds_only_its_new_lines(spark, tmp_path, line_end, cut_after, reread):
    spec = SimulationSpec(
        start=START, duration=timedelta(hours=1), topics=1, queues_per_topic=(2,), groups=1, clients_per_group=(2,),
        snapshot_interval=timedelta(minutes=10), bak_every=0, progress_interval=timedelta(minutes=30), client_logs_for=0,
        rate_scale=0.3,
    )  # fmt: skip
    whole, landing = tmp_path / "whole", tmp_path / "landing"
    simulate(spec, whole)
    shutil.copytree(whole, landing)
    commit_files = sorted((landing / "commits").rglob("*.jsonl"))
    assert commit_files
    for path in commit_files:
        (whole / path.relative_to(landing)).write_bytes(path.read_bytes().replace(b"\n", line_end))
        data = (whole / path.relative_to(landing)).read_bytes()
        # the collector's first copy: the first half, up to a line's end or into the next line
        path.write_bytes(data[: data.index(line_end, len(data) // 2) + cut_after])

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    first = run_stages(settings, lake, landing, START, END, "r1")
    for path in commit_files:  # the next copies: the whole files
        shutil.copy(whole / path.relative_to(landing), path)
    second = run_stages(settings, lake, landing, START, END, "r2")
    once = run_stages(settings, reference, landing, START, END, "r1")  # the whole files, landed once
    assert not (first.quality_failed or second.quality_failed or once.quality_failed)

    lines = sum(len(p.read_bytes().splitlines()) for p in commit_files)
    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    grown = [r for r in runs if r["run_id"] == "r2" and r["source_kind"] == "commits"]
    assert len(grown) == len(commit_files)
    first_copies = sum(
        r["records_read"] for r in runs if r["run_id"] == "r1" and r["source_kind"] == "commits"
    )
    # a cut-short line was quarantined with the first copy and is read again, whole; a whole one is not
    assert sum(r["records_read"] for r in grown) == lines - first_copies + reread * len(commit_files)
    _assert_replays_agree_but_for_hashes(reference, lake)
    for path in ("silver/stored_offset_timeline", "silver/offset_regressions"):
        assert sorted(_seqs_without_hash(lake / path)) == sorted(_seqs_without_hash(reference / path))
    commits = DeltaTable(str(lake / "bronze/offset_commits")).to_pyarrow_table()
    assert (
        commits.num_rows == DeltaTable(str(reference / "bronze/offset_commits")).to_pyarrow_table().num_rows
    )


def _assert_replays_agree_but_for_hashes(reference, lake, also_ignored=frozenset()) -> None:
    """Every silver and gold table of ``lake`` holds ``reference``'s rows, but for the content hash
    that names a row's copy of its file (the first copy's rows keep the first copy's hash, also in
    their observation_seq)."""
    assert "silver/offset_commits_replayed" in delta_tables(lake)
    for path in sorted({*delta_tables(reference), *delta_tables(lake)}):
        if path.split("/")[0] in ("silver", "gold"):
            latest = "as_of" if path == "silver/replay_checkpoints" else None
            ignored = RUN_COLUMNS | {"_file_hash", "observation_seq"} | also_ignored
            result = compare_table(reference, lake, path, ignored, latest_of=latest)
            assert result.agrees, result.line()


def _assert_landed_as_once(reference, lake, cut_rows: int = 0) -> None:
    """``lake`` replays as ``reference``, which landed the whole files once from another directory
    (its paths differ), and its bronze holds the same commits and ``cut_rows`` more (each cut log
    line's row, kept in bronze as its copy said it)."""
    _assert_replays_agree_but_for_hashes(reference, lake, also_ignored={"source_file", "cause_source_file"})
    commits = DeltaTable(str(lake / "bronze/offset_commits")).to_pyarrow_table()
    once_commits = DeltaTable(str(reference / "bronze/offset_commits")).to_pyarrow_table()
    assert commits.num_rows == once_commits.num_rows + cut_rows


def _seqs_without_hash(table) -> list[str]:
    """The table's observation_seq values, "rank|path|line" (what a copy's hash leaves the same)."""
    seqs = DeltaTable(str(table)).to_pyarrow_table().column("observation_seq").to_pylist()
    return ["|".join(seq.split("|")[:3]) for seq in seqs]


@pytest.mark.slow
def test_a_commit_file_rewritten_with_other_content_is_a_second_version(spark, tmp_path):
    """The same path landed again with other lines at the same instants and line numbers: both
    versions are evidence, every observation keeps its own timeline row, and the audit passes."""
    landing = tmp_path / "landing"
    simulate(SMALL, landing)
    commit_files = sorted((landing / "commits").rglob("*.jsonl"))
    assert commit_files
    settings, lake = Settings(), tmp_path / "lake"
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    lines = 0
    for path in commit_files:  # the same commits, each one message further: another version of the file
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row["offset"] += 1
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        lines += len(rows)
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)

    commits = DeltaTable(str(lake / "silver/offset_commits_replayed")).to_pyarrow_table()
    assert commits.num_rows == 2 * lines
    timeline = DeltaTable(str(lake / "silver/stored_offset_timeline")).to_pyarrow_table().to_pylist()
    keys = {tuple(r[k] for k in STORED_OFFSET_TIMELINE.keys) for r in timeline}
    assert len(keys) == len(timeline)
    assert sum(r["observation"] == "commit" for r in timeline) == 2 * lines


@pytest.mark.slow
def test_a_snapshot_rewritten_with_other_content_replaces_what_it_said(spark, tmp_path):
    """A snapshot is the broker's table at one instant: its path landed again with other offsets
    supersedes the earlier version, and the lake's replay equals one that saw only the new one."""
    landing = tmp_path / "landing"
    simulate(SMALL, landing)
    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    first = run_stages(settings, lake, landing, START, END, "r1")
    snapshots = sorted((landing / "snapshots").rglob("consumerOffset.json"))
    assert snapshots
    for path in snapshots:  # every stored offset one further: "queue: offset" pairs in the offset table
        path.write_text(re.sub(r"(\d+):(\d+)", lambda m: f"{m[1]}:{int(m[2]) + 1}", path.read_text()))
    second = run_stages(settings, lake, landing, START, END, "r2")
    once = run_stages(settings, reference, landing, START, END, "r1")
    assert not (first.quality_failed or second.quality_failed or once.quality_failed)

    files = DeltaTable(str(lake / "bronze/snapshot_files")).to_pyarrow_table().to_pylist()
    assert sorted(
        r["selection"] for r in files if r["source_file"].endswith("consumerOffset.json")
    ) == sorted(["main"] * len(snapshots) + ["superseded"] * len(snapshots))
    for path in sorted({*delta_tables(reference), *delta_tables(lake)}):
        if path.split("/")[0] in ("silver", "gold"):
            latest = "as_of" if path == "silver/replay_checkpoints" else None
            result = compare_table(reference, lake, path, RUN_COLUMNS, latest_of=latest)
            assert result.agrees, result.line()


def _cut_in_last_number(data: bytes, marker: bytes, at: int | None = None) -> bytes:
    """``data`` cut two digits before the end of the first line past its middle (or byte ``at``) that
    holds ``marker`` and ends in a number of four digits or more: a cut line that still parses."""
    at = len(data) // 2 if at is None else at
    while True:
        newline = data.index(b"\n", at)
        end = newline - 1 if data[newline - 1 : newline] == b"\r" else newline  # LF or CRLF
        line = data[data.rfind(b"\n", 0, end) + 1 : end]
        if marker in line and re.search(rb"\d{4}$", line):
            return data[: end - 2]
        at = newline + 1


@pytest.mark.slow
def test_a_log_line_cut_where_it_still_parses_is_replayed_once(spark, tmp_path):
    """A collector copied a client log inside a commit's offset (``queueId=3] 14`` of ``1470``)
    and a broker log inside a NOTIFYME's ``storeOffset``: each cut line parses, and lands. The
    longer copy reads the line again, whole; the replay takes the whole line's row alone, so the
    lake's replay equals one that landed the whole logs once, and no false regression appears."""
    spec = SMALL.model_copy(update={"client_logs_for": 1, "rate_scale": 0.3})
    whole, landing = tmp_path / "whole", tmp_path / "landing"
    simulate(spec, whole)
    shutil.copytree(whole, landing)
    logs = {
        path: marker
        for kind, marker in (("client_logs", b"updateConsumeOffsetToBroker"), ("broker_logs", b"[NOTIFYME]"))
        for path in sorted((landing / kind).rglob("*.log"))
        if marker in path.read_bytes()
    }
    assert {p.relative_to(landing).parts[0] for p in logs} == {"client_logs", "broker_logs"}
    for path, marker in logs.items():
        path.write_bytes(_cut_in_last_number(path.read_bytes(), marker))

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    for path in logs:  # the next copies: the whole logs
        shutil.copy(whole / path.relative_to(landing), path)
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, landing, START, END, "r1", REPLAYED)

    _assert_replays_agree_but_for_hashes(reference, lake)
    # bronze keeps what the first copies said: each cut line's row beside the whole line's, and
    # ops/ingest_runs names the rows the longer copies read again
    commits = DeltaTable(str(lake / "bronze/offset_commits")).to_pyarrow_table()
    once_commits = DeltaTable(str(reference / "bronze/offset_commits")).to_pyarrow_table()
    assert commits.num_rows == once_commits.num_rows + len(logs)
    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    reread = {r["source_file"]: r for r in runs if r["run_id"] == "r2" and r["reread_line"] is not None}
    assert sorted(reread) == sorted(str(p) for p in logs)
    firsts = {r["source_file"]: r["_file_hash"] for r in runs if r["run_id"] == "r1"}
    assert all(r["grew_from_hash"] == firsts[path] for path, r in reread.items())


def _streams_and_logs(whole, landing):
    """A simulated hour with a client log, in ``whole`` and copied to ``landing``: the landing's commit
    streams, and its logs that hold commit lines, each with its commit lines' marker."""
    simulate(SMALL.model_copy(update={"client_logs_for": 1, "rate_scale": 0.3}), whole)
    shutil.copytree(whole, landing)
    commit_files = sorted((landing / "commits").rglob("*.jsonl"))
    logs = {
        path: marker
        for kind, marker in (("client_logs", b"updateConsumeOffsetToBroker"), ("broker_logs", b"[NOTIFYME]"))
        for path in sorted((landing / kind).rglob("*.log"))
        if marker in path.read_bytes()
    }
    assert commit_files and logs
    return commit_files, logs


@pytest.mark.slow
def test_a_compressed_copy_of_a_live_file_adds_only_the_lines_its_copies_did_not_land(spark, tmp_path):
    """Each commit stream and log lands first as a live file's copy (a commit stream cut at a line's
    end, a log inside its last number); then its whole content lands again compressed under another
    path (logback's ``otherdays/broker.1.log.gz``, an archived stream) beside the live copy. The
    compressed copy adds only the lines the live copy did not land, the cut line among them, and the
    lake's replay equals one that landed the whole files once."""
    whole, landing = tmp_path / "whole", tmp_path / "landing"
    commit_files, logs = _streams_and_logs(whole, landing)
    for path in commit_files:
        data = path.read_bytes()
        path.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    for path, marker in logs.items():
        path.write_bytes(_cut_in_last_number(path.read_bytes(), marker))

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    for path in [*commit_files, *logs]:
        rotated = path.parent / "otherdays" / f"{path.name}.gz"
        rotated.parent.mkdir()
        rotated.write_bytes(gzip.compress((whole / path.relative_to(landing)).read_bytes()))
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, whole, START, END, "r1", REPLAYED)

    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    rotated = [r for r in runs if r["run_id"] == "r2" and r["source_file"].endswith(".gz")]
    assert len(rotated) == len(commit_files) + len(logs)
    assert all(r["grew_from_hash"] is not None for r in rotated)
    assert sum(r["reread_line"] is not None for r in rotated) == len(logs)
    _assert_landed_as_once(reference, lake, cut_rows=len(logs))


@pytest.mark.slow
def test_an_archive_landed_again_longer_or_compressed_otherwise_adds_only_its_new_lines(spark, tmp_path):
    """Each commit stream and log lands first as a compressed archive of part of it (a commit stream
    cut at a line's end, a log inside its last number); then the same path lands again with the whole
    content, and beside it another archive of the whole content, compressed otherwise. Each adds only
    the lines no archive before it held, and the lake's replay equals one that landed the whole
    files once."""
    whole, landing = tmp_path / "whole", tmp_path / "landing"
    commit_files, logs = _streams_and_logs(whole, landing)
    archives = {path: path.with_name(path.name + ".gz") for path in [*commit_files, *logs]}
    for path, archive in archives.items():
        data = path.read_bytes()
        cut = (
            _cut_in_last_number(data, logs[path])
            if path in logs
            else data[: data.index(b"\n", len(data) // 2) + 1]
        )
        archive.write_bytes(gzip.compress(cut))
        path.unlink()

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    for path, archive in archives.items():
        content = (whole / path.relative_to(landing)).read_bytes()
        archive.write_bytes(gzip.compress(content))
        again = archive.parent / "otherdays" / archive.name
        again.parent.mkdir(exist_ok=True)
        again.write_bytes(gzip.compress(content, compresslevel=1))
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, whole, START, END, "r1", REPLAYED)

    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    landed_again = [r for r in runs if r["run_id"] == "r2"]
    assert len(landed_again) == 2 * len(archives)
    assert all(r["status"] == "ingested" and r["grew_from_hash"] is not None for r in landed_again)
    assert all(r["content_size"] == (whole / Path(r["source_file"]).relative_to(landing).with_suffix("")).stat().st_size
               for r in landed_again if "otherdays" not in r["source_file"])  # fmt: skip
    # of each pair, one continues the first archive, the other holds nothing more
    assert sum(r["records_read"] == 0 for r in landed_again) == len(archives)
    assert sum(r["reread_line"] is not None for r in landed_again) == len(logs)
    _assert_landed_as_once(reference, lake, cut_rows=len(logs))


@pytest.mark.slow
@pytest.mark.parametrize(
    "earlier_version", [False, True], ids=["this-version", "archives-ingested-by-an-earlier-version"]
)
def test_a_plain_copy_of_an_archive_adds_only_the_lines_the_archive_did_not_hold(
    spark, tmp_path, earlier_version
):
    """Each commit stream and log lands first as a compressed archive of part of it (a commit stream
    cut at a line's end, a log inside its last number); then the whole content lands plain beside it
    (the archive unpacked, or the file it was made of collected later). The plain file adds only the
    lines the archive did not hold, and the lake's replay equals one that landed the whole files once.
    Also when the archives were ingested by a version that recorded none of their content: the next
    run records it from the archives, still landed as they were."""
    whole, landing = tmp_path / "whole", tmp_path / "landing"
    commit_files, logs = _streams_and_logs(whole, landing)
    for path in [*commit_files, *logs]:
        data = path.read_bytes()
        cut = (
            _cut_in_last_number(data, logs[path])
            if path in logs
            else data[: data.index(b"\n", len(data) // 2) + 1]
        )
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(cut))
        path.unlink()

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    if earlier_version:
        _forget_content_columns(lake / "ops/ingest_runs")
    for path in [*commit_files, *logs]:
        shutil.copy(whole / path.relative_to(landing), path)
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, whole, START, END, "r1", REPLAYED)

    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    archives = {r["source_file"]: r["_file_hash"] for r in runs if r["run_id"] == "r1"}
    unpacked = [r for r in runs if r["run_id"] == "r2"]
    assert len(unpacked) == len(commit_files) + len(logs)
    assert all(r["grew_from_hash"] == archives[r["source_file"] + ".gz"] for r in unpacked)
    assert sum(r["reread_line"] is not None for r in unpacked) == len(logs)
    _assert_landed_as_once(reference, lake, cut_rows=len(logs))


@pytest.mark.slow
@pytest.mark.parametrize("inside_a_line", [False, True], ids=["at-a-line-end", "inside-a-line"])
def test_a_renamed_plain_file_adds_only_the_lines_after_a_short_copy_of_its_live_file(
    spark, tmp_path, inside_a_line
):
    """Each commit stream and log lands first as a copy of its live file taken when it held a few
    lines (shorter than the head a copy records), ending with a whole line or inside one (a log inside
    a commit line's last number); then the live file is renamed without being compressed (logback's
    ``otherdays/broker.log``) and lands whole under its new path. The renamed file adds only the lines
    after the early copy (the cut one again, whole), and the lake's replay equals one that landed the
    whole files once."""
    whole, landing = tmp_path / "whole", tmp_path / "landing"
    commit_files, logs = _streams_and_logs(whole, landing)
    cut_rows = 0  # logs cut inside a commit line's number: a row that still parses
    for path in [*commit_files, *logs]:
        data = path.read_bytes()
        if not inside_a_line:
            path.write_bytes(data[: data.index(b"\n", 1000) + 1])
        else:
            try:  # a commit line in the first 4 KiB, cut inside its last number
                path.write_bytes(_cut_in_last_number(data[:4000], logs[path], at=0))
                cut_rows += 1
            except (KeyError, ValueError):  # a commit stream, or a log without one there
                path.write_bytes(data[: data.index(b"\n", 1000) + 20])
        assert path.stat().st_size < 4096
    assert cut_rows or not inside_a_line

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    for path in [*commit_files, *logs]:
        renamed = path.parent / "otherdays" / path.name
        renamed.parent.mkdir(exist_ok=True)
        shutil.copy(whole / path.relative_to(landing), renamed)
        path.unlink()
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, whole, START, END, "r1", REPLAYED)

    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    early = {r["source_file"]: r["_file_hash"] for r in runs if r["run_id"] == "r1"}
    renamed = [r for r in runs if r["run_id"] == "r2"]
    assert len(renamed) == len(commit_files) + len(logs)
    assert all(r["grew_from_hash"] == early[r["source_file"].replace("/otherdays", "")] for r in renamed)
    assert all((r["reread_line"] is not None) == inside_a_line for r in renamed)
    _assert_landed_as_once(reference, lake, cut_rows=cut_rows)


def _forget_content_columns(table: Path) -> None:
    """ops/ingest_runs as a version before the content columns wrote it."""
    rows = DeltaTable(str(table)).to_pyarrow_table()
    kept = rows.drop_columns(["content_size", "content_hash", "content_head"])
    write_deltalake(str(table), kept, mode="overwrite", schema_mode="overwrite")


@pytest.mark.slow
def test_an_archive_continues_one_a_crashed_run_left_pending(spark, tmp_path, monkeypatch):
    """A run lands an archive of each commit stream's first half and crashes before recording it
    ingested; the complete archive lands beside it. The next run completes the crashed batch first,
    then the complete archive adds only the second half."""
    import jobs.stages.ingest as ingest_stage

    whole, landing = tmp_path / "whole", tmp_path / "landing"
    commit_files, logs = _streams_and_logs(whole, landing)
    for path in [*commit_files, *logs]:
        data = path.read_bytes()
        if path in commit_files:
            path.with_name(path.name + ".gz").write_bytes(
                gzip.compress(data[: data.index(b"\n", len(data) // 2) + 1])
            )
        path.unlink()
    for path in logs:  # the logs land whole, once, in the first run
        shutil.copy(whole / path.relative_to(landing), path)

    def crash(*args, **kwargs):
        raise RuntimeError("simulated crash after the bronze tables were written")

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    monkeypatch.setattr(ingest_stage, "_final_rows", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_stages(settings, lake, landing, START, END, "r1", ("ingest",))
    monkeypatch.undo()
    for path in commit_files:
        complete = path.parent / "otherdays" / (path.name + ".gz")
        complete.parent.mkdir(exist_ok=True)
        complete.write_bytes(gzip.compress((whole / path.relative_to(landing)).read_bytes()))
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, whole, START, END, "r1", REPLAYED)

    _assert_landed_as_once(reference, lake)


@pytest.mark.slow
def test_a_commit_file_written_on_while_its_run_ingests_it_lands_each_line_once(spark, tmp_path, monkeypatch):
    """A collector goes on writing a commit stream after the run found it (its size and hash): the
    run reads the file as it was found, and the next run reads only the lines written after that."""
    import jobs.stages.ingest as ingest_stage

    whole, landing = tmp_path / "whole", tmp_path / "landing"
    simulate(SMALL, whole)
    shutil.copytree(whole, landing)
    commit_files = sorted((landing / "commits").rglob("*.jsonl"))
    for path in commit_files:
        data = path.read_bytes()
        path.write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    hashed = ingest_stage.content_hashes

    def hashed_then_written_on(files):
        hashes = hashed(files)
        for path in commit_files:
            shutil.copy(whole / path.relative_to(landing), path)
        return hashes

    settings, lake, reference = Settings(), tmp_path / "lake", tmp_path / "reference"
    monkeypatch.setattr(ingest_stage, "content_hashes", hashed_then_written_on)
    run_stages(settings, lake, landing, START, END, "r1", REPLAYED)
    monkeypatch.undo()
    run_stages(settings, lake, landing, START, END, "r2", REPLAYED)
    run_stages(settings, reference, whole, START, END, "r1", REPLAYED)

    runs = DeltaTable(str(lake / "ops/ingest_runs")).to_pyarrow_table().to_pylist()
    first = {r["source_file"]: r for r in runs if r["run_id"] == "r1" and r["source_kind"] == "commits"}
    assert all(
        r["file_size"] < (whole / Path(p).relative_to(landing)).stat().st_size for p, r in first.items()
    )
    _assert_landed_as_once(reference, lake)
