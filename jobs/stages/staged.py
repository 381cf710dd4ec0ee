"""Whose gold rows wait in staging: the marts stage of one run stages them, its own audit and
publish take them.

The staging lake (``<lake>/_staging``) holds one set of gold rows at a time. Runs of one lake
take its lock stage by stage, so another run's stages can come between a run's marts and its
publish: a hand run between two Airflow tasks, or a failed audit cleared and run again after
the next interval's marts. Publishing the other run's staged rows over this run's ranges would
delete the gold rows of one interval and double those of another; publishing rows of an
earlier replay of the run would miss what its replay since widened to. So the marts stage
records its run and replayed interval in ``ops/staged_gold`` once every staged table is written
(none while it writes them), and the audit and publish stages take only their own.
"""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.io.lake import Lake
from jobs.stages.context import ReplayInterval, StageOrderError
from schemas.instants import from_collected
from schemas.tables import STAGED_GOLD

_ROW = "gold"


def staging_begins(lake: Lake) -> None:
    """The staged rows are about to be replaced: they are no run's until :func:`staged_by`."""
    lake.staging().merge_rows(STAGED_GOLD, [(_ROW, None, None, None, datetime.now(UTC))])


def staged_by(lake: Lake, run_id: str, interval: ReplayInterval) -> None:
    """Every staged table now holds ``run_id``'s gold rows of ``interval``."""
    row = (_ROW, run_id, interval.replayed_from, interval.replayed_to, datetime.now(UTC))
    lake.staging().merge_rows(STAGED_GOLD, [row])


def require_staged_by(lake: Lake, run_id: str, interval: ReplayInterval) -> None:
    """A StageOrderError unless the staged gold rows are ``run_id``'s, of ``interval`` (its
    replay as it stands), naming what to run."""
    staging = lake.staging()
    rows = staging.read(STAGED_GOLD).collect() if staging.exists(STAGED_GOLD) else []
    staged = rows[0] if rows else None
    if staged is None or staged.run_id is None:
        whose = "no finished marts stage's"
    elif staged.run_id != run_id:
        whose = f"run {staged.run_id}'s"
    elif (from_collected(staged.replayed_from), from_collected(staged.replayed_to)) != (
        interval.replayed_from,
        interval.replayed_to,
    ):
        whose = f"of an earlier replay of run {run_id}"
    else:
        return
    raise StageOrderError(
        f"the staged gold rows are {whose}, not run {run_id}'s replay as it stands: "
        "run the marts stage again (same --run-id)"
    )
