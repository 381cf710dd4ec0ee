"""``offsetlake run`` killed with SIGKILL at eight points over every stage, each on the lake the previous kill
left, two runs started at once, then a run to the end: every table equals a lake that never crashed."""

from __future__ import annotations

import json

import pytest

from jobs.tools.crash_trial import STAGES, kill_points, main


def test_kill_points_cover_every_stage_and_give_the_longest_the_spare_ones():
    reference = {"ingest": 40.0, "replay": 15.0, "marts": 8.0, "audit": 20.0, "publish": 3.0}
    points = kill_points(reference, 8)
    assert [stage for stage, _ in points] == [
        "ingest",
        "ingest",
        "replay",
        "replay",
        "marts",
        "audit",
        "audit",
        "publish",
    ]
    assert points[0] == ("ingest", 10.0) and points[1] == ("ingest", 30.0) and points[-1] == ("publish", 1.5)
    assert {stage for stage, _ in kill_points(reference, 5)} == set(STAGES)


@pytest.mark.slow
@pytest.mark.long
def test_a_lake_killed_at_any_stage_ends_equal_to_one_that_never_crashed(tmp_path):
    assert main(["--workdir", str(tmp_path), "--kills", "8", "--hours", "0.5"]) == 0
    report = json.loads((tmp_path / "crash-trial.json").read_text())
    assert report["agrees"] and len(report["tables"]) >= 14
    killed = [k for k in report["kills"] if not k["finished_before"]]
    assert len(killed) >= 6 and {k["stage"] for k in killed} >= {"ingest", "replay", "marts", "audit"}
    assert report["concurrent_exit_codes"] in ([0, 5], [0, 0])
