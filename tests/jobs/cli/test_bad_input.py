"""Bad settings files and arguments, generated: each is exit 2 (usage, configuration) or 3 (input,
lake) with one line naming what to fix, never a traceback, and nothing runs. No Spark: the run
itself is replaced by a stub that fails the test if it is reached."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.cli import main as cli
from jobs.cli import shared_session
from schemas.config import ConfigError, LogSettings, ReplaySettings, Settings, SparkSettings, load_settings
from schemas.quality import AlertSinkSettings, QualitySettings

EXAMPLES = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# each table of the settings file and its known keys, as the models declare them
SECTIONS = {
    "spark": tuple(SparkSettings.model_fields),
    "logs": tuple(LogSettings.model_fields),
    "replay": tuple(ReplaySettings.model_fields),
    "quality": tuple(QualitySettings.model_fields),
    "quality.sink": tuple(AlertSinkSettings.model_fields),
}
INTEGERS = {
    "spark.shuffle_partitions", "replay.checkpoints_kept", "replay.broadcast_logged_commits",
    "quality.max_missed_snapshots", "quality.regression_alert_above", "quality.max_queue_id",
    "quality.sink.retries", "quality.sink.max_alerts_per_check", "quality.sink.top_findings",
    "quality.sink.max_payload_bytes",
}  # fmt: skip
DURATIONS = {"replay.throughput_window", "quality.snapshot_interval", "quality.stalled_after",
             "quality.snapshot_commit_tolerance", "quality.lookback"}  # fmt: skip
STRINGS = {"spark.master", "spark.app_name", "spark.driver_memory", "spark.partition_bytes", "spark.delta_engine",
           "quality.expectation_engine", "quality.sink.kind"}  # fmt: skip

# values TOML can hold (no dates); text without surrogates, which TOML cannot encode
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_SCALARS = st.one_of(
    _TEXT, st.integers(-(2**63), 2**63 - 1), st.booleans(), st.floats(allow_nan=False, allow_infinity=False)
)
TOML_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                           max_leaves=8)  # fmt: skip


def toml_value(value: object) -> str:
    """``value`` as a TOML value: JSON's strings, numbers and lists are TOML's; tables are inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def toml_at(dotted: str, value: object) -> str:
    """A TOML document setting only ``dotted`` (``quality.sink.retries``) to ``value``."""
    *table, key = dotted.split(".")
    return (f"[{'.'.join(table)}]\n" if table else "") + f"{json.dumps(key)} = {toml_value(value)}\n"


@pytest.fixture(autouse=True)
def nothing_runs(monkeypatch):
    """A bad input must stop before any table is touched: reaching the run fails the test."""

    def touched(*args, **kwargs):
        raise AssertionError("the run started on a bad input")

    monkeypatch.setattr(cli, "run_with_display", touched)
    monkeypatch.setattr(shared_session, "start", touched)


def outcome(argv: list[str]) -> tuple[int, str]:
    """The exit code and standard error of ``offsetlake argv`` (argparse's exit included)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as stop:
            code = stop.code
    return code, err.getvalue()


def assert_refused(argv: list[str], code: int, *named: str) -> str:
    """``argv`` exits ``code`` with one line (after argparse's usage, if any) naming each of ``named``."""
    got, err = outcome(argv)
    last = err.rstrip("\n").split("\n")[-1]
    assert (got, "Traceback" not in err) == (code, True), err
    assert last.startswith("offsetlake"), err
    assert all(name in last for name in named), err
    return last


def run_argv(tmp: Path, *extra: str) -> list[str]:
    (tmp / "landing").mkdir(exist_ok=True)
    return ["run", "--landing", str(tmp / "landing"), "--lake", str(tmp / "lake"), *extra]


def run_with_config(text: str) -> tuple[str, Path]:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "offsetlake.toml"
        config.write_text(text, encoding="utf-8")
        last = assert_refused(run_argv(Path(tmp), "--config", str(config)), 2)
        assert not (Path(tmp) / "lake").exists()  # nothing written, not even a log
        return last, config


@EXAMPLES
@given(section=st.sampled_from(["", *SECTIONS]), key=st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True))
def test_an_unknown_key_in_any_section_is_named(section, key):
    if key in SECTIONS.get(section, ()) or (not section and key in Settings.model_fields):
        return
    last, _ = run_with_config(toml_at(f"{section}.{key}".lstrip("."), 1))
    assert f"{section}.{key}".lstrip(".") + ": unknown setting" in last


@EXAMPLES
@given(data=st.data())
def test_a_value_of_the_wrong_type_is_named_with_its_key(data):
    key = data.draw(st.sampled_from(sorted(INTEGERS | DURATIONS | STRINGS)))
    if key in STRINGS:
        wrong = data.draw(st.one_of(st.integers(), st.lists(st.integers(), max_size=2), st.booleans()))
    else:
        wrong = data.draw(
            st.one_of(st.from_regex(r"[a-z ]{1,8}", fullmatch=True), st.lists(st.integers(), max_size=2))
        )
    last, _ = run_with_config(toml_at(key, wrong))
    assert f"{key}: " in last


@EXAMPLES
@given(document=st.dictionaries(st.sampled_from(["spark", "logs", "replay", "quality", "patterns", "clusters", "x"]),
                                TOML_VALUES, max_size=3))  # fmt: skip
def test_any_toml_document_gives_settings_or_one_configuration_error(document):
    text = "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in document.items())
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "any.toml"
        config.write_text(text, encoding="utf-8")
        try:
            assert isinstance(load_settings(config), Settings)
        except ConfigError as error:
            assert str(error).startswith(f"configuration file {config}")


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("quality.snapshot_interval", "PT0S", "quality.snapshot_interval: Input should be greater than 0"),
        ("quality.stalled_after", "-PT1H", "quality.stalled_after: Input should be greater than 0"),
        ("quality.stalled_after", "PT12H", "quality: lookback (6:00:00) must cover stalled_after"),
        ("quality.snapshot_interval", "P100000D", "quality.snapshot_interval: Input should be less than"),
        (
            "quality.max_missed_snapshots",
            0,
            "quality.max_missed_snapshots: Input should be greater than or equal",
        ),
        ("replay.throughput_window", "PT90S", "replay.throughput_window: throughput_window must be a whole"),
        ("replay.throughput_window", "P400D", "replay.throughput_window: Input should be less than"),
        ("spark.master", "spark:/x", "spark.master: 'spark:/x' is no Spark master URL"),
        ("spark.driver_memory", "0g", "spark.driver_memory: '0g' is no size"),
        (
            "spark.delta_engine",
            "iceberg",
            "spark.delta_engine: Input should be 'auto', 'spark' or 'delta-rs'",
        ),
        ("clusters.a.admin_timezone", "Mars/Olympus", "clusters.a.admin_timezone: unknown time zone"),
        ("quality.sink.kind", "pager", "quality.sink.kind: Input should be 'log', 'file' or 'webhook'"),
        ("quality.sink.headers", {"X": "a\nb"}, "quality.sink: a webhook header or url holds a line break"),
        (
            "quality.sink.url",
            "https://[::1/hook",
            "quality.sink: the webhook alert sink's 'url' names no host",
        ),
    ],
)
def test_impossible_values_and_intervals_say_which_setting(key, value, named):
    text = toml_at(key, value)
    if "sink.headers" in key:
        text += 'kind = "webhook"\nurl = "https://hooks.example/x"\n'
    if "sink.url" in key:
        text += 'kind = "webhook"\n'
    last, config = run_with_config(text)
    assert last == f"offsetlake: configuration error: configuration file {config}: {named}" or named in last


def test_an_odd_key_is_quoted_on_one_line():
    last, _ = run_with_config('[spark]\n"<b>\\n\\"x" = 1\n')
    assert 'spark."<b>\\n\\"x": unknown setting' in last


@EXAMPLES
@given(start=st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1), timezones=st.just(UTC)),
       back=st.timedeltas(timedelta(0), timedelta(days=3650)), command=st.sampled_from(["run", "replay", "report"]))  # fmt: skip
def test_from_not_before_to_is_refused(start, back, command):
    end = start - back
    interval = ["--from", start.isoformat(), "--to", end.isoformat()]
    with tempfile.TemporaryDirectory() as tmp:
        if command == "report":
            argv = ["report", "--lake", tmp, "--out", f"{tmp}/r.html", *interval]
        elif command == "run":
            argv = run_argv(Path(tmp), *interval)
        else:
            argv = [command, "--lake", f"{tmp}/lake", *interval]
        assert_refused(argv, 2, "--from", "must be before --to")


def test_a_shared_session_that_would_stop_at_once_is_refused(tmp_path):
    assert_refused(["session", "start", "--lake", str(tmp_path / "lake"), "--idle", "PT0M"], 2, "--idle")
    assert not (tmp_path / "lake").exists()


@EXAMPLES
@given(text=st.text(max_size=20), option=st.sampled_from(["--from", "--to"]))
def test_a_time_that_is_not_iso_is_a_usage_error(text, option):
    try:
        cli.utc_time(text)
    except Exception:  # whatever utc_time raises, the command line must turn into a usage error
        with tempfile.TemporaryDirectory() as tmp:
            assert_refused(run_argv(Path(tmp), f"{option}={text}"), 2, option)


def test_paths_that_are_files_or_directories_where_the_other_is_needed(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    landing = tmp_path / "landing"
    landing.mkdir()
    assert_refused(["run", "--landing", str(a_file), "--lake", str(tmp_path / "l")], 3, "landing directory")
    assert_refused(
        ["run", "--landing", str(landing), "--lake", str(a_file)], 3, f"lake path {a_file}", "is a file"
    )
    assert_refused(
        ["ingest", "--landing", str(landing), "--lake", str(a_file / "under")], 3, "is not a directory"
    )
    assert_refused(["run", "--landing", str(landing), "--lake", str(tmp_path), "--config", str(landing)], 2,
                   "is a directory")  # fmt: skip
    for toml, named in (
        (f'[logs]\ndirectory = "{a_file}"\n', "[logs] directory"),
        (f'[quality.sink]\nkind = "file"\npath = "{landing}"\n', "[quality.sink] path"),
        (
            f'[quality.sink]\nkind = "file"\npath = "{a_file}/alerts.jsonl"\n',
            "[quality.sink] path's directory",
        ),
    ):
        (tmp_path / "c.toml").write_text(toml)
        assert_refused(run_argv(tmp_path, "--lake", str(tmp_path / "l2"), "--config", str(tmp_path / "c.toml")), 2,
                       named)  # fmt: skip
    assert_refused(["report", "--lake", str(tmp_path), "--out", str(landing)], 2, "--out", "is a directory")
    assert_refused(["sql", "--lake", str(tmp_path), "--out", str(landing), "SELECT 1"], 2, "--out")


def test_an_unwritable_lake_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("jobs.cli.settings.os.access", lambda path, mode: False)  # root may write anywhere
    assert_refused(run_argv(tmp_path, "--lake", str(tmp_path / "lake")), 3, "is not writable", "--lake")


def test_a_bad_master_or_engine_on_the_command_line_is_named(tmp_path):
    assert_refused(run_argv(tmp_path, "--master", "spark//nohost"), 2, "--master", "is no Spark master URL")
    assert_refused(run_argv(tmp_path, "--delta-engine", "iceberg"), 2, "--delta-engine")


def test_an_unreadable_config_is_a_configuration_error(tmp_path, monkeypatch):
    config = tmp_path / "c.toml"
    config.write_text("")

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", denied)
    assert_refused(run_argv(tmp_path, "--config", str(config)), 2, "cannot be read: Permission denied")
