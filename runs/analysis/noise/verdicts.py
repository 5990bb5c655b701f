"""Verdicts: is one setting really faster than another here, or is it noise?

A cell is compared with the same cell of the baseline by Welch's t-test (scipy.stats,
unequal variances: two settings rarely vary alike) on the logarithms of the throughputs.
The difference of the mean logs is the log of the ratio of the geometric means, so the
test's 95 % confidence interval, exponentiated, is the interval of the ratio: "2.2x
faster (95 % CI 2.1-2.3x)", and a verdict never disagrees with its interval.

When several cells are tested at once (a batch's cells against the baseline, a compare
page's cells), each p-value is adjusted for how many were tested (multiplicity.py, Holm's
correction): a cell is significant when its adjusted p-value is under 0.05, so that an A/A
batch of 16 cells calls none different 95 % of the time, not 44 %. The interval shown stays
the cell's own 95 % interval; a cell that is significant alone but not once corrected says
so.

The sample is the cell's repeats, at least 3 a side. Two single runs are compared on
their interval samples instead: consecutive interval tps are correlated (a slow second
is often followed by another), so they are first reduced to batch means (means of
consecutive stretches of the steady state, close to independent once long enough), and
the answer says that it measures the noise within each run, not between runs.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from scipy import special as scipy_special

from runs.analysis.noise import multiplicity, power, stats
from runs.analysis.noise.stats import lag1_autocorrelation
from runs.analysis.percent import signed_pct
from runs.analysis.results import FINISHED_WELL, RunFigures

CONFIDENCE = 0.95
MIN_REPEATS = 3  # below this Welch's test has almost no power: say so rather than guess
MIN_BATCHES = 3  # batch means a single run needs to be compared on its intervals
CORRELATED = 0.5  # lag-1 autocorrelation of batch means above which the answer warns

FASTER = "faster"
SLOWER = "slower"
SAME = "no significant difference"
TOO_FEW = "too few repeats"
NO_RATIO = "cannot compare"
# A run whose load host was CPU-bound (runs/analysis/host_metrics/bottleneck.py) measured
# sysbench, not the server: a verdict resting on one says so.
CLIENT_BOUND = "resting on a run whose load host was CPU-bound: this figure measures the client"

TIMES = "\u00d7"
DASH = "\u2013"

REPEATS = "repeats"
INTERVALS = "intervals"


@dataclass(frozen=True)
class Verdict:
    """How `other` compares with `base` in throughput: their ratio, other / base."""

    verdict: str  # FASTER, SLOWER, SAME, TOO_FEW or NO_RATIO
    n_base: int
    n_other: int
    ratio: float | None = None  # of the geometric means
    low: float | None = None  # 95 % confidence interval of the ratio
    high: float | None = None
    p_value: float | None = None
    basis: str = ""  # REPEATS or INTERVALS
    caveat: str = ""
    p_adjusted: float | None = None  # after the correction for the cells tested with it
    correction: str = ""  # `Holm's correction over 16 cells`, "" for a test alone
    client_bound: bool = False  # a run of either side measured the load host (CLIENT_BOUND)
    # the sides' variances of log throughput (repeats): what these could see (power.py)
    log_variances: tuple[float, float] | None = None

    @property
    def text(self) -> str:
        """The verdict in words: `faster`, or `too few repeats (n=2; 3 needed)`."""
        if self.verdict == TOO_FEW:
            return f"{TOO_FEW} (n={min(self.n_base, self.n_other)}; {MIN_REPEATS} needed)"
        return self.verdict

    @cached_property
    def power_text(self) -> str:
        """`with 3 repeats at this noise, a difference under 2.8x would go unseen; ...`, or
        "" (computed when first read, once: a search's many tests never read it, a page
        reads it two to four times)."""
        if self.verdict != SAME or self.log_variances is None:
            return ""
        found = power.of_spread(*self.log_variances, self.n_base, self.n_other, self.ratio)
        return found.text if found else ""

    @property
    def significant(self) -> bool:
        return self.verdict in (FASTER, SLOWER)

    @property
    def corrected_away(self) -> bool:
        """Significant alone, but not once corrected for the cells tested with it."""
        alone = self.p_value is not None and self.p_value < 1 - CONFIDENCE
        return self.verdict == SAME and alone and self.p_adjusted is not None

    @property
    def diff_percent(self) -> float | None:
        return _percent(self.ratio)

    @property
    def diff_low_percent(self) -> float | None:
        return _percent(self.low)

    @property
    def diff_high_percent(self) -> float | None:
        return _percent(self.high)

    @property
    def difference(self) -> str:
        """`2.2x faster`, `4.3 % slower`, `-3.1 % to +2.0 %`: what a person reads."""
        if self.ratio is None:
            return ""
        if self.verdict == SAME:
            return f"{signed_pct(self.diff_low_percent)} to {signed_pct(self.diff_high_percent)}"
        return f"{magnitude(self.ratio)} {FASTER if self.ratio >= 1 else SLOWER}"

    @property
    def interval(self) -> str:
        """The 95 % confidence interval in the units of `difference`."""
        if self.low is None or self.high is None or self.ratio is None:
            return ""
        if self.verdict == SAME or not _in_times(self.ratio):
            return f"{signed_pct(self.diff_low_percent)} to {signed_pct(self.diff_high_percent)}"
        if self.ratio >= 1:
            return _range(self.low, self.high)
        return _range(1 / self.high, 1 / self.low)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "text": self.text,
            "ratio": self.ratio,
            "ratio_low": self.low,
            "ratio_high": self.high,
            "diff_percent": self.diff_percent,
            "diff_low_percent": self.diff_low_percent,
            "diff_high_percent": self.diff_high_percent,
            "difference": self.difference,
            "interval": self.interval,
            "p_value": self.p_value,
            "n_base": self.n_base,
            "n_other": self.n_other,
            "basis": self.basis,
            "caveat": self.caveat,
            "p_adjusted": self.p_adjusted,
            "correction": self.correction,
            "power": self.power_text,
        }


# --- the test ------------------------------------------------------------------------------


def welch(base: Sequence[float], other: Sequence[float], *, basis: str = REPEATS) -> Verdict:
    """Welch's t-test on the logs of two samples (at least 2 values a side)."""
    n_base, n_other = len(base), len(other)
    if min(n_base, n_other) < 2:
        raise ValueError("Welch's t-test needs at least 2 values a side")
    if min(*base, *other) <= 0:
        return Verdict(
            NO_RATIO, n_base, n_other, basis=basis, caveat="a throughput of 0 has no ratio"
        )
    log_base = [math.log(v) for v in base]
    log_other = [math.log(v) for v in other]
    # statistics' exact variances (stats.variance: the same bits, faster), each computed
    # once (a verdict computed six)
    spread = stats.variance(log_base), stats.variance(log_other)
    if spread == (0, 0):
        return _constant(log_base[0], log_other[0], n_base, n_other, basis)
    difference, low, high, p_value = _welch_logs(log_base, log_other, spread)
    ratio = math.exp(difference)
    verdict = SAME if p_value >= 1 - CONFIDENCE else (FASTER if ratio > 1 else SLOWER)
    return Verdict(
        verdict=verdict,
        n_base=n_base,
        n_other=n_other,
        ratio=ratio,
        low=math.exp(low),
        high=math.exp(high),
        p_value=p_value,
        basis=basis,
        log_variances=spread if basis == REPEATS else None,
    )


def _welch_logs(
    base: list[float], other: list[float], variances: tuple[float, float]
) -> tuple[float, float, float, float]:
    """The difference of the means (other - base), its CONFIDENCE interval and the
    two-sided p-value of Welch's test: scipy's ttest_ind(other, base, equal_var=False), the
    same arithmetic without its wrapper's checks (2.5 ms a call: a comparison of 20 cells
    spent 50 ms in it). `variances`: the samples' (stats.variance)."""
    n_base, n_other = len(base), len(other)
    difference = statistics.fmean(other) - statistics.fmean(base)
    var_base, var_other = variances[0] / n_base, variances[1] / n_other
    error = math.sqrt(var_base + var_other)
    dof = (var_base + var_other) ** 2 / (var_base**2 / (n_base - 1) + var_other**2 / (n_other - 1))
    t = difference / error
    p_value = float(min(1.0, 2 * scipy_special.stdtr(dof, -abs(t))))
    half = float(scipy_special.stdtrit(dof, 0.5 + CONFIDENCE / 2)) * error
    return difference, difference - half, difference + half, p_value


def _constant(log_a: float, log_b: float, n_a: int, n_b: int, basis: str) -> Verdict:
    # No spread on either side (rounded figures, a cpu test): the ratio is what it is.
    ratio = math.exp(log_b - log_a)
    verdict = SAME if ratio == 1 else (FASTER if ratio > 1 else SLOWER)
    p_value = 1.0 if ratio == 1 else 0.0
    return Verdict(verdict, n_a, n_b, ratio, ratio, ratio, p_value, basis)


def compare_runs(base: Iterable[RunFigures], other: Iterable[RunFigures]) -> Verdict | None:
    """The verdict on two sets of runs of a cell; None when a side has no finished run."""
    base_runs, other_runs = _finished(base), _finished(other)
    verdict = _compare_finished(base_runs, other_runs)
    if verdict is not None and any(r.limit.client_bound for r in (*base_runs, *other_runs)):
        return dataclasses.replace(verdict, client_bound=True)
    return verdict


def _compare_finished(base_runs: list[RunFigures], other_runs: list[RunFigures]) -> Verdict | None:
    a = [v for r in base_runs if (v := r.throughput) is not None]
    b = [v for r in other_runs if (v := r.throughput) is not None]
    if not a or not b:
        return None
    if len(a) >= MIN_REPEATS and len(b) >= MIN_REPEATS:
        return welch(a, b)
    if len(a) == 1 and len(b) == 1:
        return _single_runs(base_runs[0], other_runs[0])
    return Verdict(TOO_FEW, len(a), len(b), ratio=geometric_ratio(a, b))


def geometric_ratio(base: Sequence[float], other: Sequence[float]) -> float | None:
    """The ratio of the geometric means: what the verdict's interval is centred on, and
    the table's "x baseline" (report_table.ratios), one estimator for both."""
    return stats.geometric_ratio(base, other)


def _finished(runs: Iterable[RunFigures]) -> list[RunFigures]:
    return [r for r in runs if r.status in FINISHED_WELL and r.throughput is not None]


def _single_runs(base: RunFigures, other: RunFigures) -> Verdict:
    means_a, means_b = run_batch_means(base), run_batch_means(other)
    if min(len(means_a), len(means_b)) < MIN_BATCHES:
        return Verdict(
            TOO_FEW,
            1,
            1,
            ratio=geometric_ratio([base.throughput or 0.0], [other.throughput or 0.0]),
            caveat="one run each, too short to be compared on its interval samples "
            f"(at least {MIN_BATCHES**2} report intervals after the warmup)",
        )
    verdict = welch(means_a, means_b, basis=INTERVALS)
    caveat = (
        f"one run each: from {len(means_a)} and {len(means_b)} batch means of the interval "
        "samples, so it shows the noise within each run, not between runs"
    )
    correlation = max(
        (r for r in (lag1_autocorrelation(means_a), lag1_autocorrelation(means_b)) if r),
        default=0.0,
    )
    if correlation > CORRELATED:
        caveat += f"; the batch means are still correlated (r = {correlation:.2f})"
    return Verdict(
        verdict.verdict, 1, 1, verdict.ratio, verdict.low, verdict.high, verdict.p_value,
        INTERVALS, caveat,
    )  # fmt: skip


# --- interval samples ----------------------------------------------------------------------


def run_batch_means(run: RunFigures) -> list[float]:
    return run.figures.interval_batch_means


# --- cells tested together ----------------------------------------------------------------


def corrected(found: Sequence[Verdict], *, noun: str = "cell") -> list[Verdict]:
    """The verdicts of cells tested together, each judged on its p-value adjusted for how
    many were tested (Holm); verdicts without a p-value stay as they are."""
    tested = [i for i, v in enumerate(found) if v.p_value is not None]
    adjusted = multiplicity.holm([found[i].p_value or 0.0 for i in tested])
    correction = multiplicity.correction_text(len(tested), noun)
    result = list(found)
    for index, p_adjusted in zip(tested, adjusted, strict=True):
        result[index] = _with_correction(found[index], p_adjusted, correction)
    return result


def _with_correction(verdict: Verdict, p_adjusted: float, correction: str) -> Verdict:
    caveat = verdict.caveat
    if verdict.significant and p_adjusted >= 1 - CONFIDENCE:
        lost = f"significant alone (p = {verdict.p_value:.3f}) but not after {correction}"
        caveat = f"{caveat}; {lost}" if caveat else lost
        return dataclasses.replace(
            verdict, verdict=SAME, p_adjusted=p_adjusted, correction=correction, caveat=caveat
        )
    return dataclasses.replace(verdict, p_adjusted=p_adjusted, correction=correction)


# --- in words ------------------------------------------------------------------------------


def sentence(other: str, base: str, threads: int, verdict: Verdict) -> str:
    """`flush=0 is 2.2x faster than flush=1 at 1 thread (95 % CI 2.1-2.3x, 3 repeats each)`,
    and `; resting on a run whose load host was CPU-bound: ...` when it does."""
    said = _sentence(other, base, threads, verdict)
    return f"{said}; {CLIENT_BOUND}" if verdict.client_bound else said


def _sentence(other: str, base: str, threads: int, verdict: Verdict) -> str:
    at = f"at {threads_text(threads)}"
    if verdict.verdict == TOO_FEW:
        return f"{other} against {base} {at}: {verdict.text}"
    if verdict.verdict == NO_RATIO:
        return f"{other} against {base} {at}: {NO_RATIO} ({verdict.caveat})"
    how = f"95 % CI {verdict.interval}, {sample_text(verdict)}"
    if verdict.verdict == SAME:
        lost = f"; significant alone, not after {verdict.correction}" * verdict.corrected_away
        unseen = f"; {verdict.power_text}" if verdict.power_text else ""
        return f"no significant difference between {other} and {base} {at} ({how}{lost}){unseen}"
    return f"{other} is {verdict.difference} than {base} {at} ({how})"


def sample_text(verdict: Verdict) -> str:
    if verdict.basis == INTERVALS:
        return "one run each, from its interval samples"
    if verdict.n_base == verdict.n_other:
        return f"{verdict.n_base} repeats each"
    return f"{verdict.n_other} and {verdict.n_base} repeats"


def threads_text(threads: int) -> str:
    return "1 thread" if threads == 1 else f"{threads} threads"


def magnitude(ratio: float) -> str:
    """How many times, or how many percent, apart: 2.2x, 4.3 %."""
    if _in_times(ratio):
        return f"{_times(ratio if ratio >= 1 else 1 / ratio)}{TIMES}"
    return f"{abs(ratio - 1) * 100:.1f} %"


def _in_times(ratio: float) -> bool:
    # Small differences read better in percent: 4.3 % faster, not 1.0x faster.
    return (ratio if ratio >= 1 else 1 / ratio) >= 1.1


def _times(factor: float) -> str:
    return f"{factor:.0f}" if factor >= 10 else f"{factor:.1f}"


def _range(low: float, high: float) -> str:
    return f"{_times(low)}{DASH}{_times(high)}{TIMES}"


def _percent(ratio: float | None) -> float | None:
    return None if ratio is None else (ratio - 1) * 100
