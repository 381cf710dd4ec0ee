"""QualitySettings: defaults, TOML-shaped input, and the messages of invalid settings."""

from __future__ import annotations

import tomllib
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from jobs.quality.checks import check_severities
from schemas.config import ConfigError
from schemas.quality import AlertSinkSettings, QualitySettings

TOML = """
snapshot_interval = "PT10M"
max_missed_snapshots = 2
stalled_after = "PT2H"
regression_alert_above = 500
lookback = "PT4H"

[severities]
"monitoring.large_regressions" = "error"
"bronze.offset_commits.keys_unique" = "warn"

[sink]
kind = "webhook"
url = "https://hooks.example/offsetlake"
headers = { Authorization = "Bearer t0ken" }
timeout_seconds = 2.5
retries = 5
backoff_seconds = 0.5
"""


def test_defaults_alert_to_the_log():
    quality = QualitySettings()
    assert (quality.sink.kind, quality.max_snapshot_gap, quality.stalled_after, quality.regression_alert_above) == (
        "log", timedelta(minutes=15), timedelta(hours=1), 100
    )  # fmt: skip
    assert quality.severity("monitoring.negative_lag", "warn") == "warn"


def test_toml_section_is_read_with_durations_and_severity_overrides():
    quality = QualitySettings.model_validate(tomllib.loads(TOML))
    assert quality.max_snapshot_gap == timedelta(minutes=20)
    assert quality.severity("monitoring.large_regressions", "warn") == "error"
    assert quality.severity("bronze.offset_commits.keys_unique", "error") == "warn"
    assert quality.sink == AlertSinkSettings(
        kind="webhook", url="https://hooks.example/offsetlake", headers={"Authorization": "Bearer t0ken"},
        timeout_seconds=2.5, retries=5, backoff_seconds=0.5,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"severities": {"monitoring.large_regressions": "fatal"}}, "Input should be 'error' or 'warn'"),
        ({"sink": {"kind": "file"}}, "the file alert sink needs 'path'"),
        (
            {"sink": {"kind": "webhook", "url": "ftp://hooks.example"}},
            "needs 'url' starting with http:// or https://",
        ),
        ({"sink": {"kind": "webhook", "url": "https://x", "timeout_seconds": 0}}, "greater than 0"),
        ({"stalled_after": "PT8H"}, "lookback (6:00:00) must cover stalled_after"),
        ({"max_missed_snapshots": 0}, "greater than or equal to 1"),
        ({"snapshot_intervall": "PT1M"}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_settings_say_what_to_fix(raw, message):
    with pytest.raises(ValidationError) as error:
        QualitySettings.model_validate(raw)
    assert message in str(error.value)


def test_file_sink_path_is_a_path():
    assert QualitySettings.model_validate(
        {"sink": {"kind": "file", "path": "/var/log/offsetlake/alerts.jsonl"}}
    ).sink.path == Path("/var/log/offsetlake/alerts.jsonl")


def test_a_severity_for_a_check_that_does_not_exist_is_a_configuration_error():
    check_severities({"monitoring.large_regressions": "error", "gold.consumer_lag.keys_unique": "warn"})
    with pytest.raises(ConfigError, match=r"unknown checks \['monitoring.large_regresions'\]"):
        check_severities({"monitoring.large_regresions": "error"})
