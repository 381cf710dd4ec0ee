"""Every example query a user is shown runs: the README's ``offsetlake sql`` lines and the ones
each run prints (jobs.cli.summary)."""

from __future__ import annotations

import re
import shlex

import pytest

from jobs.cli.main import main
from jobs.cli.summary import EXAMPLE_QUERIES, example_commands
from tests.conftest import REPO_ROOT
from tests.lakes import small_lake

README_SQL = [
    line.strip()
    for line in (REPO_ROOT / "README.md").read_text().splitlines()
    if re.match(r"\s*(\.venv/bin/)?offsetlake sql --lake \S+ .*\"", line)
]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    return small_lake(tmp_path_factory.mktemp("lake"))


def test_the_readme_shows_sql_examples():
    assert len(README_SQL) >= 2


@pytest.mark.parametrize("line", README_SQL)
def test_each_readme_query_runs(lake, tmp_path, monkeypatch, line):
    monkeypatch.chdir(tmp_path)  # where an example's --out file goes
    words = shlex.split(line.split("#")[0])
    words[words.index("--lake") + 1] = str(lake)
    assert main(words[words.index("sql") :]) == 0


@pytest.mark.parametrize("command", example_commands("LAKE"))
def test_each_printed_query_runs(lake, capsys, command):
    words = shlex.split(command)
    words[words.index("--lake") + 1] = str(lake)
    assert main(words[words.index("sql") :]) == 0
    assert re.fullmatch(r"\(\d+ rows?\)", capsys.readouterr().out.splitlines()[-1])


def test_the_printed_regression_query_answers_who_consumed_what_twice(lake, capsys):
    assert main(["sql", "--lake", str(lake), "--format", "csv", EXAMPLE_QUERIES[0]]) == 0
    assert capsys.readouterr().out.splitlines() == [
        '"consumer_group","client_host","regressions","consumed_twice"',
        '"billing","10.0.0.1:1",1,300',
        '"billing","10.0.0.2:2",1,20',
        '"shipping","10.0.0.1:1",1,5',
    ]
