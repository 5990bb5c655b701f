"""Holm's correction (runs/analysis/noise/multiplicity.py), and the false alarms it prevents:
A/A batches replayed from the noise of recorded runs."""

from __future__ import annotations

import math
import random

import pytest

from runs.analysis.noise import multiplicity, verdicts
from tests.analysis.recorded import noise_of_repeats

ALPHA = 1 - verdicts.CONFIDENCE
CELLS = 16  # the A/A comparison: 16 cells
BATCHES = 1000  # A/A batches replayed: 16,000 A/A pairs


def test_holm_adjusts_step_down_and_keeps_the_order():
    # Worked by hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06,
    # 0.04, the last raised to 0.06 to stay monotone.
    assert multiplicity.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert multiplicity.holm([0.5, 0.9]) == [1.0, 1.0]
    assert multiplicity.holm([]) == []
    assert multiplicity.correction_text(16) == "Holm's correction over 16 cells"


def test_a_cell_significant_alone_is_not_once_corrected_and_says_so():
    alone = verdicts.welch([100.0, 101.0, 99.0], [102.5, 103.0, 101.5])
    assert alone.significant and alone.p_value is not None
    quiet = verdicts.welch([100.0, 101.0, 99.0], [100.0, 101.0, 99.5])
    fixed = verdicts.corrected([alone] + [quiet] * 15)
    assert fixed[0].verdict == verdicts.SAME and fixed[0].corrected_away
    assert fixed[0].p_adjusted == pytest.approx(min(1.0, alone.p_value * 16))
    assert "but not after Holm's correction over 16 cells" in fixed[0].caveat
    assert "significant alone, not after Holm's correction over 16 cells" in verdicts.sentence(
        "b", "a", 1, fixed[0]
    )
    clear = verdicts.welch([100.0, 101.0, 99.0], [150.0, 151.0, 149.0])
    assert verdicts.corrected([clear, quiet])[0].verdict == verdicts.FASTER


def _aa_batch(rng: random.Random, noise: list[float], repeats: int = 3) -> list[verdicts.Verdict]:
    """One A/A batch: CELLS cells, each the same setting twice, `repeats` runs a side."""

    def side() -> list[float]:
        return [1000 * math.exp(rng.choice(noise)) for _ in range(repeats)]

    return [verdicts.welch(side(), side()) for _ in range(CELLS)]


@pytest.mark.filterwarnings("ignore:Precision loss")
def test_a_a_batches_replayed_from_recorded_runs_keep_the_stated_error_rate():
    rng = random.Random(24)  # deterministic: the same replay every time
    noise = noise_of_repeats()
    alone = corrected = cells_alone = 0
    for _ in range(BATCHES):
        found = _aa_batch(rng, noise)
        cells_alone += sum(v.significant for v in found)
        alone += any(v.significant for v in found)
        corrected += any(v.significant for v in verdicts.corrected(found))
    # Before (main): each cell at 95 % alone; most batches of 16 have a false alarm.
    per_cell = cells_alone / (BATCHES * CELLS)
    batch_alone, batch_holm = alone / BATCHES, corrected / BATCHES
    print(f"\nA/A, {BATCHES} batches of {CELLS} cells: per cell {per_cell:.3f}, a batch with "
          f"a false alarm {batch_alone:.3f} alone, {batch_holm:.3f} with Holm")  # fmt: skip
    assert per_cell <= ALPHA  # each test alone holds its level
    assert alone / BATCHES > 0.3  # the false alarms, reproduced
    assert corrected / BATCHES <= ALPHA  # the family of 16 holds it once corrected
