"""``offsetlake maintain``: its arguments, its refusals, and a maintenance of a lake a run wrote."""

from __future__ import annotations

import argparse
from datetime import timedelta

import pytest

from jobs.cli.durations import iso_duration
from jobs.cli.main import EXIT_BUSY, EXIT_OK, EXIT_USAGE, main
from jobs.cli.maintain import table_line
from jobs.io.engines import TableMaintenance
from jobs.io.lake_lock import LakeLock


@pytest.mark.parametrize(
    ("text", "duration"),
    [("PT168H", timedelta(hours=168)), ("P7D", timedelta(days=7)), ("p7dt12h", timedelta(days=7, hours=12)),
     ("PT90M", timedelta(minutes=90))],
)  # fmt: skip
def test_retentions_are_iso_8601_durations(text, duration):
    assert iso_duration(text) == duration


@pytest.mark.parametrize("text", ["168", "P", "PT", "P7DT", "7 days", "PT-1H"])
def test_other_texts_are_usage_errors(text):
    with pytest.raises(argparse.ArgumentTypeError, match="not an ISO-8601 duration"):
        iso_duration(text)


def test_a_retention_shorter_than_a_week_is_refused_with_exit_code_2_before_spark_starts(tmp_path, capsys):
    assert main(["maintain", "--lake", str(tmp_path / "lake"), "--retention", "PT24H"]) == EXIT_USAGE
    assert "a vacuum retention of 1 day, 0:00:00 is shorter than the safe minimum of 168 hours" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "lake").exists()


def test_the_line_of_a_table_says_files_bytes_and_log_before_and_after():
    line = table_line(
        TableMaintenance("bronze/offset_commits", 212, 3, 1_234_000, 1_100_000, 380_200, 12_400, 0)
    )
    assert line.split() == ["bronze/offset_commits", "files", "212", "→", "3", "bytes", "1.2", "MB", "→", "1.1",
                            "MB", "log", "380.2", "kB", "→", "12.4", "kB", "vacuumed", "0"]  # fmt: skip


@pytest.mark.integration
def test_maintain_waits_for_no_run_it_refuses_while_one_holds_the_lake(spark, tmp_path, capsys):
    lake = tmp_path / "lake"
    with LakeLock(lake, "run-1"):
        assert main(["maintain", "--lake", str(lake)]) == EXIT_BUSY
    assert "run-1" in capsys.readouterr().err
    assert main(["maintain", "--lake", str(lake)]) == EXIT_OK  # an empty lake: nothing to maintain
