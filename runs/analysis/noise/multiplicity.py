"""Honest error rates when many cells are tested at once: Holm's step-down correction.

A batch of 16 cells each tested at 95 % calls about one of them "significantly different"
when nothing differs at all (an A/A batch): the chance that at least one of 16 true nulls
falls under p < 0.05 is 1 - 0.95^16, 56 %. Holm's correction (Holm 1979) keeps that
family-wise error rate at 5 % whatever the cells' dependence, and loses less power than
Bonferroni: sort the m p-values, multiply the i-th smallest by (m - i + 1), keep them
monotone, cap at 1. A cell is significant when its adjusted p-value is under 0.05.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

METHOD = "Holm"
DESCRIPTION = "Holm's correction for the number of cells tested (family-wise error 5 %)"


def holm(p_values: Sequence[float]) -> list[float]:
    """The Holm-adjusted p-values, in the order given."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    adjusted = [1.0] * count
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def correction_text(tests: int, noun: str = "cell") -> str:
    """`Holm's correction over 16 cells`; `over 3 comparisons` where pairs of cells beside
    the baseline are tested with them (a cell is then in more than one test)."""
    return f"{METHOD}'s correction over {tests} {noun if tests == 1 else noun + 's'}"
