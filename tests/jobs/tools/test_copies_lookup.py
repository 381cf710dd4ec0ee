"""The copies-lookup measurement (jobs.tools.bench.copies_lookup) runs and prints its figure."""

from __future__ import annotations

from jobs.tools.bench.copies_lookup import main, measure


def test_it_times_each_round_of_a_batch_that_continues_no_copy(capsys):
    assert len(measure(files=4, copies=50, short=True, rounds=2)) == 2
    main(["--files", "3", "--copies", "10", "--rounds", "1"])
    assert "_growth: 3 files against 10 copies with 4 KiB heads: median" in capsys.readouterr().out
