"""``offsetlake sql`` and ``offsetlake tables`` on a small lake: every output format, the
prompt, errors with exit code 2, and the same answer from Spark SQL."""

from __future__ import annotations

import csv
import io
import json

import pyarrow.parquet as pq
import pytest

from jobs.cli import sql
from jobs.cli.main import main
from tests.lakes import small_lake

GROUPS = (
    "SELECT consumer_group, sum(regression_size) AS consumed_twice FROM silver_offset_regressions "
    "GROUP BY 1 ORDER BY 1"
)


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    return small_lake(tmp_path_factory.mktemp("lake"))


def test_a_query_prints_an_aligned_table(lake, capsys):
    assert main(["sql", "--lake", str(lake), GROUPS]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "consumer_group  consumed_twice",
        "--------------  --------------",
        "billing                    320",
        "shipping                     5",
        "(2 rows)",
    ]


def test_the_dotted_name_is_the_same_table(lake, capsys):
    assert main(["sql", "--lake", str(lake), "--format", "csv", GROUPS.replace("silver_", "silver.")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        '"consumer_group","consumed_twice"',
        '"billing",320',
        '"shipping",5',
    ]


def test_csv_and_json_to_a_file(lake, tmp_path):
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    query = (
        "SELECT consumer_group, detected_at, cause_detail FROM silver_offset_regressions ORDER BY detected_at"
    )
    assert main(["sql", "--lake", str(lake), "--format", "csv", "--out", str(out_csv), query]) == 0
    assert main(["sql", "--lake", str(lake), "--format", "json", "--out", str(out_json), query]) == 0
    assert list(csv.reader(io.StringIO(out_csv.read_text()))) == [
        ["consumer_group", "detected_at", "cause_detail"],
        ["billing", "2026-11-21 01:00:00.000000Z", "reset by admin"],
        ["billing", "2026-11-21 02:00:00.000000Z", ""],
        ["shipping", "2026-11-21 03:00:00.000000Z", ""],
    ]
    assert [json.loads(line) for line in out_json.read_text().splitlines()] == [
        {
            "consumer_group": "billing",
            "detected_at": "2026-11-21T01:00:00Z",
            "cause_detail": "reset by admin",
        },
        {"consumer_group": "billing", "detected_at": "2026-11-21T02:00:00Z", "cause_detail": None},
        {"consumer_group": "shipping", "detected_at": "2026-11-21T03:00:00Z", "cause_detail": None},
    ]


def test_parquet_to_a_file_and_to_standard_output(lake, tmp_path, capsysbinary):
    out = tmp_path / "r.parquet"
    assert main(["sql", "--lake", str(lake), "--format", "parquet", "--out", str(out), GROUPS]) == 0
    assert pq.read_table(out).to_pylist() == [
        {"consumer_group": "billing", "consumed_twice": 320},
        {"consumer_group": "shipping", "consumed_twice": 5},
    ]
    assert main(["sql", "--lake", str(lake), "--format", "parquet", GROUPS]) == 0
    piped = pq.read_table(io.BytesIO(capsysbinary.readouterr().out))
    assert piped.to_pylist() == pq.read_table(out).to_pylist()


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("SELECT * FROM silver_offset_regresions", "silver_offset_regresions' not found; the tables of"),
        ("SELEC 1", "Expected: an SQL statement, found: SELEC"),
        ("SELECT no_such_column FROM gold_consume_throughput", "No field named no_such_column"),
        ("   ", "the query is empty"),
    ],
)
def test_an_unknown_table_or_bad_sql_is_a_usage_error(lake, capsys, query, says):
    assert main(["sql", "--lake", str(lake), query]) == 2
    err = capsys.readouterr().err
    assert err.startswith("offsetlake: query error: ") and says in err


def test_the_unknown_table_message_lists_the_lakes_tables(lake, capsys):
    main(["sql", "--lake", str(lake), "SELECT * FROM nope"])
    assert (
        "silver_offset_regressions, silver_replay_checkpoints, gold_consumer_lag" in capsys.readouterr().err
    )


def test_a_lake_that_is_not_there_is_an_input_error(tmp_path, capsys):
    assert main(["sql", "--lake", str(tmp_path / "nowhere"), "SELECT 1"]) == 3
    assert "no lake at" in capsys.readouterr().err


def test_statements_from_standard_input(lake, capsys, monkeypatch):
    monkeypatch.setattr(
        "sys.stdin", io.StringIO("SELECT 'a;b' AS x;\nSELECT count(*) AS n\n FROM silver_offset_regressions;")
    )
    assert main(["sql", "--lake", str(lake), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ['"x"', '"a;b"', '"n"', "3"]


def test_the_prompt_runs_each_statement_keeps_going_after_an_error_and_saves_its_history(
    lake, capsys, tmp_path, monkeypatch
):
    history = tmp_path / "history"
    monkeypatch.setattr(sql, "HISTORY_FILE", history)
    typed = iter(
        ["SELECT count(*) AS n", "FROM silver_offset_regressions;", "SELECT * FROM nope;", ".tables", ".quit"]
    )
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        return next(typed)

    assert sql.prompt(sql.open_lake_sql(lake), "table", None, read) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:4] == ["n", "-", "3", "(1 row)"]
    assert "silver_offset_regressions" in captured.out.splitlines()[4:]
    assert "error: Error during planning: table 'datafusion.public.nope' not found" in captured.err
    assert prompts == [sql.PROMPT, sql.CONTINUATION, sql.PROMPT, sql.PROMPT, sql.PROMPT]
    assert history.is_file()


def test_tables_lists_each_table_with_rows_version_and_grain(lake, capsys):
    assert main(["tables", "--lake", str(lake)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["table", "rows", "version", "grain"]
    regressions = next(line for line in lines if line.startswith("silver_offset_regressions "))
    assert regressions.split()[:4] == ["silver_offset_regressions", "3", "0", "one"]
    stored = {f"{log.parent.parent.name}_{log.parent.name}" for log in lake.glob("*/*/_delta_log")}
    assert {line.split()[0] for line in lines[2:-1]} == stored
    assert lines[-1] == f"({len(stored)} rows)"


def test_spark_sql_answers_under_the_same_names(spark, lake, capsys):
    assert main(["sql", "--lake", str(lake), "--engine", "spark", "--format", "csv", GROUPS]) == 0
    assert capsys.readouterr().out.splitlines() == [
        '"consumer_group","consumed_twice"',
        '"billing",320',
        '"shipping",5',
    ]
    assert main(["sql", "--lake", str(lake), "--engine", "spark", "SELECT * FROM nope"]) == 2
    assert "TABLE_OR_VIEW_NOT_FOUND" in capsys.readouterr().err
