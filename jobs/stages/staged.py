"""Whose gold rows wait in staging: the marts stage of one run stages them, its own audit and
publish take them.

The staging lake (``<lake>/_staging``) holds one set of gold rows at a time. A run holds the
lake's lock for one command, and run stage by stage (Airflow's tasks) it is one command per
stage, so another run can come between its marts and its publish: a hand run between two
Airflow tasks, or a failed audit cleared and run again after the next interval's marts.
Publishing the other run's staged rows over this run's ranges would delete the gold rows of
one interval and double those of another; publishing the rows of an earlier replay of the run
would miss what its replay since changed. So the marts stage records its run and replay in
``ops/staged_gold`` once every staged table is written (none while it writes them), and the
audit and publish stages take only their own: otherwise the marts stage runs again first.
"""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, StageOrderError
from schemas.instants import from_collected
from schemas.tables import STAGED_GOLD

_ROW = "gold"


def staging_begins(staging: Lake) -> None:
    """The staged rows (of the staging lake, ``Lake.staging``) are about to be replaced: they
    are no run's until :func:`staged_by`."""
    staging.merge_rows(STAGED_GOLD, [(_ROW, None, None, datetime.now(UTC))])


def staged_by(staging: Lake, run_id: str, interval: ReplayInterval) -> None:
    """Every staged table now holds ``run_id``'s gold rows of its replay ``interval``."""
    staging.merge_rows(STAGED_GOLD, [(_ROW, run_id, interval.replayed_at, datetime.now(UTC))])


def require_staged_by(staging: Lake, run_id: str, interval: ReplayInterval) -> None:
    """A StageOrderError unless the staged gold rows are ``run_id``'s, of its replay ``interval``
    (its latest), naming what to run."""
    rows = staging.read(STAGED_GOLD).collect()
    staged = rows[0] if rows else None
    if staged is None or staged.run_id is None:
        found = "no gold rows a marts stage finished staging"
    elif staged.run_id != run_id:
        found = f"the gold rows of run {staged.run_id}"
    elif interval.replayed_at is None or from_collected(staged.replayed_at) != interval.replayed_at:
        found = f"the gold rows of an earlier replay of run {run_id}"
    else:
        return
    raise StageOrderError(
        f"staging holds {found}, not those of run {run_id}'s latest replay: "
        "run its marts stage again, then its audit (same --run-id)"
    )
