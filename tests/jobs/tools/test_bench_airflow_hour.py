"""offsetlake bench --case airflow-hour: the hour's spec and each task's time read from dag.test()'s output."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jobs.tools.bench.airflow_hour import hour_spec, in_airflow_seconds

LOG = """\
2026-11-25T14:41:36.191824Z [info     ] [DAG TEST] starting task_id=ingest map_index=-1 [airflow.sdk.definitions.dag]
2026-11-25T14:42:52.071365Z [info     ] Running command: ['/usr/bin/bash', '-c', 'offsetlake -v ingest']
2026-11-25T14:43:36.191824Z [info     ] [DAG TEST] starting task_id=replay map_index=-1 [airflow.sdk.definitions.dag]
"""


def test_each_task_runs_in_airflow_until_the_next_is_taken_up():
    began_at = datetime(2026, 11, 25, 14, 41, 36, tzinfo=UTC).timestamp()
    ended_at = datetime(2026, 11, 25, 14, 44, 6, 191824, tzinfo=UTC).timestamp()
    assert {k: round(v, 3) for k, v in in_airflow_seconds(LOG, began_at, ended_at).items()} == {
        "ingest": 120.0,
        "replay": 30.0,
    }
    # the tasks of an interval run between two instants: another interval's are not its
    assert in_airflow_seconds(LOG, began_at + 60, ended_at) == {"replay": 30.0}


def test_the_hour_is_one_interval_of_a_group_per_15_500_commits():
    spec = hour_spec(13_000)
    assert (spec.duration, spec.groups, spec.topics, spec.queues_per_topic) == (
        timedelta(hours=1),
        1,
        1,
        (8,),
    )
    assert hour_spec(500_000).groups == 32
    assert hour_spec(13_000, hours=2).duration == timedelta(hours=2)
