"""A lake's maintenance: every table compacted, its log checkpointed and cleaned, its old files vacuumed.

Hourly runs add a few small files and a commit to each table every hour; a year of them
would leave thousands of files per table and a Delta log that every read replays. The
maintenance (``offsetlake maintain``, the DAG's daily task) undoes that, table by table,
holding the lake's lock as a run does: a run and a maintenance never write at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from jobs.io.engines import MIN_RETENTION, TableMaintenance, check_retention
from jobs.io.lake import Lake
from jobs.io.lake_lock import LakeLock
from jobs.runtime.session import build_session
from schemas.config import Settings
from schemas.tables import ALL_TABLES, QUALITY_TABLES, STAGING_TABLES

DEFAULT_RETENTION = MIN_RETENTION
# the published tables (the staging lake holds schemas.tables.STAGING_TABLES)
LAKE_TABLES = (*ALL_TABLES, *QUALITY_TABLES)


def maintain_tables(
    lake: Lake,
    retention: timedelta = DEFAULT_RETENTION,
    *,
    zorder: bool = False,
    on_table: Callable[[TableMaintenance], None] | None = None,
) -> list[TableMaintenance]:
    """Maintain every existing table of ``lake`` and of its staging area (the caller holds the
    lake's lock); ``on_table`` hears of each table as it is done."""
    check_retention(retention)
    done = []
    for target, specs in ((lake, LAKE_TABLES), (lake.staging(), STAGING_TABLES)):
        for spec in specs:
            result = target.maintain(spec, retention=retention, zorder=zorder)
            if result is None:
                continue
            if target is not lake:
                result = replace(result, table=f"_staging/{result.table}")
            done.append(result)
            if on_table is not None:
                on_table(result)
    return done


def maintain_lake(
    settings: Settings,
    lake_root: Path | str,
    run_id: str,
    retention: timedelta = DEFAULT_RETENTION,
    *,
    zorder: bool = False,
    output: Path | None = None,
    on_table: Callable[[TableMaintenance], None] | None = None,
) -> list[TableMaintenance]:
    """:func:`maintain_tables` on the lake at ``lake_root``, holding its lock as ``run_id``
    (a JVM started here writes what it prints to ``output`` when given)."""
    check_retention(retention)  # before the session starts: a refused retention touches nothing
    spark = build_session(settings.spark, output)
    lake = Lake(spark, lake_root, settings.spark.delta_engine)
    with LakeLock(lake.root, run_id):
        lake.discard_unfinished_writes()
        return maintain_tables(lake, retention, zorder=zorder, on_table=on_table)
