"""Issue 36: the rate search models failure against the offered rate (runs/analysis/auto/
failures.py, rate.py). A try is held on its whole run; every try at every rate counts,
through a chance of failing fitted non-decreasing in the rate; failures at every rate (a
shared host's stalls) are told from failures that grow with the load, said, and kept from
setting the bracket; a fixed rate gets the same verdict; without an SLO the answer says
which latency counted as held."""

from __future__ import annotations

import random

from runs.analysis.auto import failures, rounds
from runs.analysis.auto import rate as rate_search
from runs.analysis.auto.cells import CellFigures, cell_figures
from runs.analysis.auto.settings import RateAuto
from tests.analysis.recorded import point_select_burst

SLO = RateAuto(start=175, max=4800, slo_p95_ms=50)


def a_try(rate, *, p95=10.65, achieved=None, interval_median=None):
    achieved = rate * 0.999 if achieved is None else achieved
    return CellFigures(1, (achieved,), p95, achieved, 0, None, "")


def tries(rate, *each):
    return CellFigures(len(each), tuple(t.values[0] for t in each),
                       sorted(t.p95 or 0.0 for t in each)[len(each) // 2],
                       each[0].achieved, 0, None, "", tuple(each))  # fmt: skip


def spiked(rate, failed, of=3):
    """`of` tries at a rate, `failed` of them a neighbour's CPU stall (p95 over the SLO)."""
    return tries(rate, *[a_try(rate, p95=170.0 if i < failed else 10.65) for i in range(of)])


def issue_ladder():
    """The fixed-rate ladder of issue 36, built from its description: the achieved rate
    within 1 % of the offered up to 2,400 tps, p95 over the 50 ms SLO in about one try in
    four at every rate from 175 to 2,400 (600 failed 2 of 3, 750 held 2 of 3), and 3,000
    out of reach (achieved 2,650)."""
    ladder = {175: spiked(175, 1), 350: spiked(350, 0), 600: spiked(600, 2),
              750: spiked(750, 1), 900: spiked(900, 0), 1200: spiked(1200, 1),
              1800: spiked(1800, 1), 2400: spiked(2400, 1)}  # fmt: skip
    ladder[3000] = tries(3000, *[a_try(3000, achieved=2650.0, p95=300.0)] * 3)
    return ladder


def test_the_ladder_with_spikes_at_every_rate_answers_the_loads_bracket_and_names_the_noise():
    ladder = issue_ladder()
    # the majority of each rate's own tries (main's rule) ended the range at 600
    assert not rate_search.point_verdict(600, ladder[600], SLO).ok
    text = rate_search.offered_conclusion(ladder, SLO)
    assert text.startswith(
        "sustainable up to 2,400 tps: 2,400 held 2/3 (achieved 2,398 tps, queue ≤ 0, p95 "
        "10.65 ms); 3,000 failed 3/3 (achieved 2,650 of 3,000 tps); "
    )
    assert "lower rates with failed tries: 175 failed 1/3, 600 failed 2/3, 750 failed 1/3, " in text
    assert (
        "the host's noise, not the load: 7 of 24 tries at rates held failed (29 %), at 175 "
        "(1/3), 600 (2/3), 750 (1/3), 1,200 (1/3), 1,800 (1/3), 2,400 (1/3), with higher rates "
        "held, so these failures do not grow with the load and do not set the bracket"
    ) in text
    assert text.endswith("estimated chance of failing: 33 % up to 2,400 tps, 100 % at 3,000")


def test_the_chance_of_failing_is_fitted_non_decreasing_in_the_rate():
    # 1/3 then 0/3 pool to 1/6; 2/3, 1/3 and 0/3 pool to 3/9, above it
    assert failures.monotone_fit([(3, 1), (3, 0), (3, 2), (3, 1), (3, 0)]) == [
        1 / 6, 1 / 6, 1 / 3, 1 / 3, 1 / 3
    ]  # fmt: skip
    assert failures.monotone_fit([(3, 0), (3, 1), (3, 3)]) == [0.0, 1 / 3, 1.0]
    fitted = failures.fit({600: [False, False, True], 900: [True, True, True]})
    assert fitted[600].fitted == fitted[900].fitted == 2 / 6 and fitted[600].held


def test_a_try_is_held_on_its_whole_run_not_one_intervals_median():
    # issue 36: a try at 175 tps "failed" by 0.2 tps on an interval median of 166.03
    # against the 5 % band's 166.25, while its whole run achieved 170 tps, p95 10.65 ms
    whole = CellFigures(1, (170.0,), 10.65, 170.0, 0, None, "")
    assert rate_search.sustained(175, whole, SLO) == (
        True,
        "achieved 170 tps, queue ≤ 0, p95 10.65 ms",
    )
    # recorded: the whole run's rate is what the cell reads as achieved
    run = point_select_burst(1000, 1)
    assert cell_figures([run]).achieved == run.throughput != run.figures.interval_tps_median


def simulated_launch(seed, auto, capacity=2500, spikes=0.25):
    """A search against a server that holds every rate up to `capacity`, beside a host
    whose stalls put p95 over the SLO in one try in `1 / spikes` at every rate."""
    rng, runs = random.Random(seed), 0
    measured: dict[int, list[CellFigures]] = {}

    def one(rate):
        if rate > capacity:
            return a_try(rate, achieved=capacity * 0.97, p95=300.0)
        return a_try(rate, p95=170.0 if rng.random() < spikes else 10.0)

    while runs < 80:
        points = {r: t[0] if len(t) == 1 else tries(r, *t) for r, t in measured.items()}
        probe = rate_search.rate_probe(points, auto)
        if probe.value is None:
            return rate_search.rate_bracket(points, auto), points
        for _ in range(probe.repeats or 1):
            measured.setdefault(probe.value, []).append(one(probe.value))
            runs += 1
    raise AssertionError("the search did not end within 80 runs")


def test_launches_beside_spikes_at_every_rate_find_the_loads_bracket():
    # Main's search, on the same simulated host (40 launches): 16 found the bracket around
    # the capacity, the others stopped where 2 of 3 tries happened to spike (59 to 1,750)
    auto = RateAuto(start=175, max=10_000, slo_p95_ms=50)
    brackets = [simulated_launch(seed, auto)[0] for seed in range(40)]
    assert brackets.count((2450, 2625)) >= 36, brackets
    pairs = list(zip(brackets[::2], brackets[1::2], strict=True))
    agreeing = [a for a, b in pairs if a[0] <= b[1] and b[0] <= a[1]]
    assert len(agreeing) >= 18, pairs  # two launches agree within their brackets


def test_a_failure_ends_the_range_only_once_a_higher_rate_fails_too():
    auto = RateAuto(start=1000, max=100_000, slo_p95_ms=50, precision_pct=60)
    measured = {1000: spiked(1000, 0), 2000: spiked(2000, 3)}
    probe = rate_search.rate_probe(measured, auto)
    # One precision step above (60 % of 2,000), not a doubling: far past the load,
    # sysbench's event queue overflows.
    assert (probe.value, probe.repeats) == (3200, 3)
    assert probe.reason == (
        "rate search: 3,200 tps, whether the failures at 2,000 grow with the load"
    )
    measured[3200] = spiked(3200, 0)  # held above: 2,000's failures were the host's
    low, high = rate_search.rate_bracket(measured, auto)
    assert (low, high) == (3200, None)


def test_a_fixed_rate_gets_the_same_held_or_not_held_verdict():
    held = rate_search.fixed_conclusion(500, spiked(500, 1), SLO)
    assert held.startswith("at the fixed rate of 500 tps: held, held 2/3 (achieved 500 tps")
    assert "the host's noise" not in held and "500 itself failed 1 of 3 tries" in held
    short = tries(500, *[a_try(500, achieved=400.0)] * 3)
    assert rate_search.fixed_conclusion(500, short, SLO) == (
        "at the fixed rate of 500 tps: not held, failed 3/3 (achieved 400 of 500 tps)"
    )


def test_without_an_slo_the_answer_says_which_latency_counted_as_held():
    # issue 36: without an SLO, p95 170 ms counted as held, silently
    slow = tries(500, *[a_try(500, p95=170.0)] * 3)
    text = rate_search.fixed_conclusion(500, slow, RateAuto())
    assert text.endswith(
        "no latency SLO: held counts any latency, up to p95 170.00 ms here (set slo_p95_ms to "
        "bound it)"
    )


def test_a_fixed_rate_option_is_answered_per_cell_in_the_batchs_summary():
    runs = [point_select_burst(1000, a) for a in (1, 2, 3)]
    fixed = [r.__class__(**{**r.__dict__, "axis_options": {}}) for r in runs]
    (answer,) = rounds.fixed_rate(fixed, 1000)
    assert answer.startswith("all runs at 2 threads: at the fixed rate of 1,000 tps: held, ")
