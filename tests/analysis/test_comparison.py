"""A compare page (runs/analysis/comparison.py) as one family of tests, and what it says
about sides that ran at different times or under different host load."""

from __future__ import annotations

import dataclasses

from runs.analysis import comparison
from runs.analysis.noise import verdicts
from runs.analysis.pairs import cell_verdicts
from tests.analysis.test_results import run


def side(key, values, *, start=0, busy=None):
    runs = [
        dataclasses.replace(
            run(i + 1, 1, v, round=i, start=start + i * 10),
            finished_at=run(1, 1, v, start=start + i * 10 + 5).started_at,
        )
        for i, v in enumerate(values)
    ]
    return comparison.Side(key, key, runs, busy)


def test_the_cells_of_a_page_are_corrected_together():
    base = side("b1", [100, 101, 99])
    # significant alone (p ≈ 0.02), not once corrected over the 8 cells of the page
    close = side("b2", [102.5, 103.0, 101.5])
    quiet = [side(f"b{i}", [100, 101, 99.5]) for i in range(3, 10)]
    alone = comparison.compare_sides(base, close)[0].verdict
    assert alone is not None and alone.significant

    pairs = comparison.compare_all([base, close, *quiet])

    assert [p.side.key for p in pairs] == ["b2", *[s.key for s in quiet]]
    corrected = pairs[0].rows[0].verdict
    assert corrected is not None and corrected.verdict == verdicts.SAME
    assert corrected.correction == "Holm's correction over 8 cells"
    assert "significant alone" in (pairs[0].rows[0].sentence or "")


def test_sides_that_ran_apart_or_under_other_load_say_so_and_name_the_stronger_test():
    base = side("b1", [100, 101, 99], start=0, busy=20.0)
    later = side("b2", [100, 101, 99], start=3600, busy=65.0)
    (time_apart, load_apart) = comparison.caveats(base, later)
    assert time_apart.startswith("the two ran at different times (")
    assert "interleaved A/A or A/B in one batch" in time_apart
    assert load_apart.startswith(
        "under different host load (the server host 20 % busy against 65 %)"
    )
    overlapping = side("b3", [100, 101, 99], start=5, busy=25.0)
    assert comparison.caveats(base, overlapping) == []


def test_the_server_hosts_load_is_read_from_the_runs_host_summaries():
    summaries = [
        {"hosts": [{"role": "server", "busy_pct": 30.0}, {"role": "load", "busy_pct": 90.0}]},
        {"hosts": [{"role": "server", "busy_pct": 50.0}]},
        {},  # a run sampled before telemetry
    ]
    assert comparison.host_busy_pct(summaries) == 40.0
    assert comparison.host_busy_pct([{}]) is None


def test_a_verdict_resting_on_a_client_bound_run_says_so():
    base, other = side("b1", [100, 101, 99]), side("b2", [150, 152, 149])
    saturated = {"kind": "load_cpu", "client_bound": True, "evidence": []}
    other_bound = dataclasses.replace(
        other, runs=[dataclasses.replace(other.runs[0], bottleneck=saturated), *other.runs[1:]]
    )

    (clean,) = comparison.compare_sides(base, other)
    (bound,) = comparison.compare_sides(base, other_bound)

    assert clean.verdict is not None and not clean.verdict.client_bound
    assert "measures the client" not in (clean.sentence or "")
    assert bound.verdict is not None and bound.verdict.client_bound
    assert bound.verdict.verdict == clean.verdict.verdict == verdicts.FASTER  # same answer,
    assert (bound.sentence or "").endswith(verdicts.CLIENT_BOUND)  # and what it rests on
    # The batch's results page asks the same question cell by cell.
    runs = [
        dataclasses.replace(r, settings={"flush": flush})
        for flush, group in (("1", base.runs), ("0", other_bound.runs))
        for r in group
    ]
    (cell,) = cell_verdicts(runs, runs[0].series_key).values()
    assert cell[1].client_bound
