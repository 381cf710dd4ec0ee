"""ISO-8601 durations on the command line (the standard library alone: the shared session's quick
commands parse them before anything heavy is imported)."""

from __future__ import annotations

import argparse
import re
from datetime import timedelta

_DURATION = re.compile(r"P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?)?", re.IGNORECASE)


def iso_duration(text: str) -> timedelta:
    """An ISO-8601 duration of days, hours and minutes: ``PT168H``, ``P7D``, ``P7DT12H``."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groupdict().values()) or text.strip().upper().endswith("T"):
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 duration such as PT168H or P7D")
    return timedelta(**{unit: int(value) for unit, value in match.groupdict().items() if value})
