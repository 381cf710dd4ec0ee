"""OffsetLake on Airflow: session -> ingest -> replay -> marts -> audit -> publish -> report, once per
data interval, then end_session and, once a day, maintain.

Each task runs one stage of the ``offsetlake`` command line in its own process on the
run's data interval (``--from {{ data_interval_start }} --to {{ data_interval_end }}``,
ISO-8601 UTC, never "now") with the run's id shared by all stages. The setup task ``session``
starts a Spark session the stages share (``offsetlake session start``, jobs.cli.shared_session):
each stage's process hands its command to it instead of starting a JVM of its own, and the
teardown task ``end_session`` releases it, whatever the stages did: the session stays for the
next interval (its ``session`` task then finds it running, warm) unless it has served a day
(then it stops, and the next interval starts a fresh one); it stops on its own after
``keep_session`` without a command. A session whose code or settings differ from the next
interval's (a new release installed) is replaced by that interval's ``session`` task. A session
that cannot start leaves each stage to run in its own process; ``OFFSETLAKE_SHARED_SESSION=off``
does the same.
The audit exits with code 4 when a data-quality check of severity ``error`` fails: the task fails, is retried,
and publish does not run, so analysts keep the last audited gold tables. Runs are
processed one at a time and in order (``max_active_runs=1``, ``depends_on_past``), and
``catchup`` backfills every interval since the start date. ``publish`` declares the gold
tables as Airflow assets (``offsetlake.gold.<table>``), so a downstream DAG can be scheduled
on them; ``report`` then writes the interval's charts to ``<lake>/reports/lake/<run id>.html``
(the one writer of that page: a stage run alone writes none), linked both ways with the run's
data-quality report. Once a day, after the interval that ends at (or
crosses) midnight UTC, ``maintain`` compacts every table, checkpoints its Delta log and vacuums
old files (``offsetlake maintain``); the other intervals skip it. It runs inside the hourly DAG so
that it never overlaps a run (``max_active_runs=1``); a backfill maintains once per day it covers.

Read when the file is parsed (environment only, so parsing never touches the metadata DB):

- ``OFFSETLAKE_SCHEDULE``: cron expression or preset in UTC (default ``@hourly``)
- ``OFFSETLAKE_START_DATE``: first interval's start, ISO-8601 (default ``2026-01-01T00:00:00Z``)
- ``OFFSETLAKE_RETRIES``: retries per task (default 2); ``OFFSETLAKE_RETRY_DELAY_SECONDS`` (default 300)

Read when a task runs (Airflow Variable, else the environment variable):

- ``offsetlake_command`` / ``OFFSETLAKE_COMMAND``: command prefix (default ``offsetlake``), e.g.
  ``spark-submit --master spark://spark-master:7077 --packages io.delta:delta-spark_2.13:4.4.1 /opt/offsetlake/cli.py``
- ``offsetlake_landing`` / ``OFFSETLAKE_LANDING``: landing directory (required)
- ``offsetlake_lake`` / ``OFFSETLAKE_LAKE``: lake root (required)
- ``offsetlake_config`` / ``OFFSETLAKE_CONFIG``: TOML settings file (optional)
- ``offsetlake_retention`` / ``OFFSETLAKE_RETENTION``: the maintenance's vacuum retention, ISO-8601
  (optional; default and minimum ``PT168H``)
- ``offsetlake_keep_session`` / ``OFFSETLAKE_KEEP_SESSION``: how long the shared session waits for
  the next interval, ISO-8601 (default ``PT2H``: longer than an hourly schedule's gap), or ``off``
  to stop it at the end of each interval

This file only wires tasks: it imports no Spark and no data-quality library.
"""

from __future__ import annotations

import os
import shlex
from datetime import UTC, datetime, timedelta

from airflow.sdk import Asset, CronDataIntervalTimetable, Variable, chain, dag, task
from airflow.sdk.exceptions import AirflowFailException

STAGES = ("ingest", "replay", "marts", "audit", "publish")
REPORT = "report"
MAINTAIN = "maintain"
SESSION, END_SESSION = "session", "end_session"
# longer than an hourly schedule's gap between one interval's end and the next one's start
DEFAULT_KEEP_SESSION = "PT2H"
# the gold tables publish writes (schemas.tables.GOLD_TABLES; a test holds the two together)
GOLD_TABLES = (
    "consumer_lag",
    "consumer_lag_by_group",
    "consume_throughput",
    "produce_throughput",
    "consumer_status",
    "duplicate_exposure",
)
GOLD_ASSETS = tuple(
    Asset(name=f"offsetlake.gold.{table}", uri=f"offsetlake://gold/{table}", group="offsetlake")
    for table in GOLD_TABLES
)
INTERVAL_START = "{{ data_interval_start | ts }}"
INTERVAL_END = "{{ data_interval_end | ts }}"
RUN_ID = "{{ run_id }}"

SCHEDULE = os.environ.get("OFFSETLAKE_SCHEDULE", "@hourly")
START_DATE = datetime.fromisoformat(
    os.environ.get("OFFSETLAKE_START_DATE", "2026-01-01T00:00:00Z").replace("Z", "+00:00")
)
RETRIES = int(os.environ.get("OFFSETLAKE_RETRIES", "2"))
RETRY_DELAY = timedelta(seconds=int(os.environ.get("OFFSETLAKE_RETRY_DELAY_SECONDS", "300")))


class MissingSettingError(AirflowFailException):
    """A run-time setting the stages need is not configured (the task fails without retrying)."""


def setting(name: str, default: str | None = None) -> str | None:
    """Airflow Variable ``offsetlake_<name>``, else environment ``OFFSETLAKE_<NAME>``, else ``default``."""
    value = Variable.get(f"offsetlake_{name}", default=None)
    return value or os.environ.get(f"OFFSETLAKE_{name.upper()}") or default


def stage_command(stage: str, *, command: str, landing: str, lake: str, config: str | None) -> str:
    """The shell command of one stage (or of the report); the interval and run id stay Jinja
    templates until the run."""
    if stage not in (*STAGES, REPORT):
        raise ValueError(f"unknown stage {stage!r}; expected one of {(*STAGES, REPORT)}")
    words = [*shlex.split(command), stage, "--lake", lake]
    if stage == "ingest":
        words += ["--landing", landing]
    words += ["--from", INTERVAL_START, "--to", INTERVAL_END, "--run-id", RUN_ID]
    if config and stage != REPORT:  # the report reads the lake alone, without Spark's settings
        words += ["--config", config]
    return shlex.join(words)


def session_command(
    action: str, *, command: str, lake: str, config: str | None, keep: str | None = None
) -> str:
    """The shell command that starts the interval's shared session (or finds it running), or ends the
    interval: releases the session, kept for ``keep`` (an ISO-8601 duration), or stops it when
    ``keep`` is off."""
    if action == "end":
        kept = (keep or "").strip().lower() not in ("off", "0", "false", "no")
        action = "release" if kept else "stop"
    words = [*shlex.split(command), "session", action, "--lake", lake]
    if action == "start":
        words += ["--optional"]
        if config:
            words += ["--config", config]
    if action == "release":
        words += ["--idle", keep]
    return shlex.join(words)


def maintain_command(*, command: str, lake: str, config: str | None, retention: str | None) -> str:
    """The shell command of the daily maintenance; the run id stays a Jinja template until the run."""
    words = [*shlex.split(command), MAINTAIN, "--lake", lake, "--run-id", f"{RUN_ID}-maintain"]
    if retention:
        words += ["--retention", retention]
    if config:
        words += ["--config", config]
    return shlex.join(words)


def maintenance_due(start: datetime, end: datetime) -> bool:
    """True for the interval that ends at midnight UTC or crosses it: one a day, whatever the schedule."""
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    return end.time() == datetime.min.time() or start.date() != (end - timedelta(microseconds=1)).date()


def configured_command(stage: str) -> str:
    """``stage_command`` from the run-time settings; fails with a clear message when one is missing."""
    landing, lake = setting("landing"), setting("lake")
    missing = [
        name for name, value in (("offsetlake_landing", landing), ("offsetlake_lake", lake)) if not value
    ]
    if missing:
        raise MissingSettingError(
            f"set the Airflow Variables {missing} (or the environment variables "
            f"{[m.upper() for m in missing]}) to the landing directory and the lake root"
        )
    if stage in (SESSION, END_SESSION):
        return session_command("start" if stage == SESSION else "end", command=setting("command", "offsetlake"),
                               lake=lake, config=setting("config"), keep=setting("keep_session", DEFAULT_KEEP_SESSION))  # fmt: skip
    if stage == MAINTAIN:
        return maintain_command(
            command=setting("command", "offsetlake"), lake=lake, config=setting("config"),
            retention=setting("retention"),
        )  # fmt: skip
    return stage_command(
        stage, command=setting("command", "offsetlake"), landing=landing, lake=lake, config=setting("config")
    )


@dag(
    dag_id="offsetlake",
    description="RocketMQ consumer offsets: ingest, replay, marts, audit, publish per interval",
    schedule=CronDataIntervalTimetable(SCHEDULE, timezone="UTC"),
    start_date=START_DATE.astimezone(UTC),
    catchup=True,
    max_active_runs=1,
    tags=["offsetlake", "rocketmq", "delta-lake", "data-quality"],
    default_args={
        "owner": "offsetlake",
        "retries": RETRIES,
        "retry_delay": RETRY_DELAY,
        "retry_exponential_backoff": True,
        "depends_on_past": True,
        "execution_timeout": timedelta(hours=3),
    },
    doc_md=__doc__,
)
def offsetlake():
    def stage_task(stage: str):
        @task.bash(task_id=stage, outlets=list(GOLD_ASSETS) if stage == "publish" else [])
        def run_stage() -> str:
            return configured_command(stage)

        return run_stage()

    # a failed maintenance must not hold back the next day's: the runs' order is the stages'
    @task.short_circuit(task_id="maintenance_due", depends_on_past=False)
    def is_maintenance_due(data_interval_start=None, data_interval_end=None) -> bool:
        return maintenance_due(data_interval_start, data_interval_end)

    @task.bash(task_id=MAINTAIN, depends_on_past=False)
    def maintain() -> str:
        return configured_command(MAINTAIN)

    # the shared session: a setup and a teardown task, neither waiting for the previous run's
    @task.bash(task_id=SESSION, depends_on_past=False)
    def start_session() -> str:
        return configured_command(SESSION)

    @task.bash(task_id=END_SESSION, depends_on_past=False)
    def stop_session() -> str:
        return configured_command(END_SESSION)

    session = start_session().as_setup()
    stages = [stage_task(stage) for stage in (*STAGES, REPORT)]
    chain(session, *stages, is_maintenance_due(), maintain())
    stages[-1] >> stop_session().as_teardown(setups=session)


offsetlake()
