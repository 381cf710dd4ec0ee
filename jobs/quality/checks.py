"""Every check the audit runs, by its full name: the tables' expectations and the monitoring checks."""

from __future__ import annotations

from collections.abc import Mapping

from pipelines.monitoring import CHECKS
from schemas.config import ConfigError
from schemas.quality import SUITES

CHECK_NAMES = frozenset(
    [s.check_name(e) for s in SUITES for e in s.expectations] + [m.check_name for m in CHECKS]
)


def check_severities(severities: Mapping[str, str]) -> None:
    """A ConfigError for a ``[quality] severities`` entry that names no check."""
    unknown = sorted(set(severities) - CHECK_NAMES)
    if unknown:
        raise ConfigError(
            f"[quality] severities names unknown checks {unknown}; names look like 'monitoring.large_regressions' "
            "or 'gold.consumer_lag.keys_unique'"
        )
