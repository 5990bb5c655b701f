"""How a family of the relative table (runs/analysis/relative.py) moved in one column:
the geometric mean of its tested rows' ratios, and how many were faster, slower, the same
or never tested. Pure: no Django, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runs.analysis.noise import stats, verdicts
from runs.analysis.noise.verdicts import Verdict

# The verdicts of a test; the others (too few repeats, no ratio) were not tested.
TESTED = frozenset({verdicts.FASTER, verdicts.SLOWER, verdicts.SAME})


@dataclass(frozen=True)
class Move:
    """How a family moved in one column: the geometric mean of its tested rows' ratios.
    A cell with too few repeats (or no ratio) was not tested: counted apart, never as
    "no significant change"."""

    family: str
    column: str
    ratio: float | None
    faster: int
    slower: int
    tested: int  # cells with a verdict from a test: faster, slower or the same
    untested: int = 0
    fewest: int = 0  # the fewest repeats of a side among the untested cells

    @property
    def moved(self) -> bool:
        return bool(self.faster or self.slower)

    @property
    def text(self) -> str:
        """`point 12.3 % faster with config=odirect (2 faster of 2)`."""
        if not self.tested:
            if not self.untested:
                return f"{self.family}: nothing to compare with {self.column}"
            cells = f"{self.untested} cell{'s' if self.untested > 1 else ''}"
            return f"{self.family}: not tested against {self.column} ({cells}: n={self.fewest})"
        untested = f"; {self.untested} not tested" if self.untested else ""
        if not self.moved or self.ratio is None:
            return (
                f"{self.family}: no significant change with {self.column} "
                f"({self.tested} tested{untested})"
            )
        how = verdicts.magnitude(self.ratio)
        way = verdicts.FASTER if self.ratio >= 1 else verdicts.SLOWER
        counted = [f"{n} {w}" for n, w in ((self.faster, "faster"), (self.slower, "slower")) if n]
        tests = f"{' and '.join(counted)} of {self.tested}{untested}"
        return f"{self.family} {how} {way} with {self.column} ({tests})"


def family_move(family: str, column: str, found: Sequence[Verdict]) -> Move:
    """The move of a family's cells in `column`, from their verdicts against the baseline."""
    tested = [v for v in found if v.verdict in TESTED]
    ratios = [v.ratio for v in tested if v.ratio is not None]
    untested = [v for v in found if v.verdict not in TESTED]
    return Move(
        family=family,
        column=column,
        # the geometric mean of the tested rows' ratios: each test counts alike
        ratio=stats.geometric_ratio([1.0], ratios) if ratios else None,
        faster=sum(v.verdict == verdicts.FASTER for v in tested),
        slower=sum(v.verdict == verdicts.SLOWER for v in tested),
        tested=len(tested),
        untested=len(untested),
        fewest=min((min(v.n_base, v.n_other) for v in untested), default=0),
    )
