"""Landed files written by hand, for the tests that run the ingest on a small landing."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


def land_snapshot(landing: Path, when: datetime, name: str, text: str) -> None:
    """Write ``text`` as the snapshot file ``name`` of cluster c1's broker-a taken at ``when``."""
    path = landing / "snapshots" / "c1" / "broker-a" / when.strftime("%Y-%m-%dT%H:%M:%SZ") / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
