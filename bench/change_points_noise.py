"""How often the nightly check alerts on nights of pure noise, and how soon on a real step.

    .venv/bin/python bench/change_points_noise.py [--replays 1000] [--nights 60] [--noise 1.5]

Each replay is one cell's 60 nights of seeded noise around 1,000 tps (Gaussian, or
Student's t with 3 degrees of freedom for the occasional wild night: --tails), checked
night after night as the nightly check does (runs/analysis/nightly/check.py), each check knowing
the steps the previous one saw. A replay with any alert is a false alarm. Counted on the
same nights: the alerts at the plan's default 5 % threshold, the new slower steps of any
size (threshold 0), and the nights the previous rule (one night beyond max(5 %, 3 x
noise) of the median of the last 7) would have flagged; and of the alerts, those whose step
is at the newest night (one night after it: what a confirmation re-run would settle).
Then --replays series with a 5 % drop at night 30: how many nights after the drop the
first alert came. Pure arithmetic, no database: writes bench/results/change_points_noise.json
(or _tails.json).

With --confirm N, every alert (at the 5 % threshold) is re-run as benchdash does before
telling anyone (runs/services/nightly/alerts.py): a re-run figure drawn from the same noise at the
cell's true level that night (the median of N draws: --confirm 1 says the re-run's repeats
share one evening's noise, the cautious reading; --confirm 3 that they are independent),
judged by runs/analysis/nightly/confirmation.py. A re-run that lands on the nights-before side of
the step's midpoint rules the alert noise: nobody is told, and the next night's check does
not count that step as seen (so a real step re-alerts the next night, as in the service).
Counted: the alerts told (confirmed), the alerts ruled noise, and for the drop, how soon
the first told alert came. Writes change_points_noise_confirm{N}[_tails].json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._harness import write_result  # noqa: E402
from runs.analysis.nightly import check as nightly  # noqa: E402
from runs.analysis.nightly import confirmation, regressions  # noqa: E402
from runs.analysis.nightly.regressions import CellNight  # noqa: E402

LEVEL = 1000.0
THRESHOLD_PCT = 5.0
WINDOW = 7


def cell(value: float) -> dict[str, CellNight]:
    """One night of one cell; no latency, so that only throughput is looked at."""
    return {
        "cell": CellNight(
            identity="cell",
            label="threads=1",
            threads=1,
            settings={},
            axis_options={},
            repeats=1,
            throughput=value,
            throughput_unit="tps",
            latency_ms=None,
            latency_pct=None,
        )
    }


def series(rng: np.random.Generator, nights: int, noise: float, tails: bool, step_at: int | None):
    shocks = rng.standard_t(3, nights) / np.sqrt(3) if tails else rng.standard_normal(nights)
    levels = [LEVEL * (0.95 if step_at is not None and n >= step_at else 1) for n in range(nights)]
    return [float(level * (1 + noise * s)) for level, s in zip(levels, shocks, strict=True)]


def shock(rng: np.random.Generator, noise: float, tails: bool, draws: int) -> float:
    """The relative error of a re-run's figure: the median of `draws` draws of the noise."""
    shocks = rng.standard_t(3, draws) / np.sqrt(3) if tails else rng.standard_normal(draws)
    return float(noise * np.median(shocks))


def replay(values: list[float], rerun: Any = None, level: Any = None) -> dict[str, list[int]]:
    """The nights (indexes) alerted at 5 %, with a new slower step of any size, and flagged
    by the previous rule. With `rerun` (night -> relative error of a re-run) and `level`
    (night -> the true level): each alert re-run and judged, told or ruled noise."""
    nights = [cell(v) for v in values]
    alerted: dict[str, list[int]] = {
        "alert": [],
        "alert_of_one_night": [],
        "new_slower_step": [],
        "band": [],
        "told": [],
        "ruled_noise": [],
    }
    seen: dict[str, Any] | None = None
    for n in range(regressions.MIN_NIGHTS, len(values)):
        previous = nights[:n][::-1]
        check = nightly.analyse(
            nights[n],
            previous,
            threshold_pct=0,
            history_nights=WINDOW,
            seen=nightly.Seen(batches=list(range(n, -1, -1)), steps=seen),
        )
        (judged,) = check.cells
        new = [s for s in judged.steps if s["new"] and s["direction"] == "slower"]
        if new:
            alerted["new_slower_step"].append(n)
        big = [s for s in new if abs(s["change_pct"]) >= THRESHOLD_PCT]
        if big:
            alerted["alert"].append(n)
        if any(s["nights_ago"] == 0 for s in big):
            alerted["alert_of_one_night"].append(n)
        band = regressions.judge(
            regressions.THROUGHPUT,
            name="tps",
            value=values[n],
            history=values[max(0, n - WINDOW) : n][::-1],
            threshold_pct=THRESHOLD_PCT,
        )
        if band.verdict == regressions.REGRESSION:
            alerted["band"].append(n)
        seen = {"cell": judged.steps}
        if big and rerun is not None:
            value = level(n) * (1 + rerun(n))
            verdicts = [confirmation.confirm_step(s, [value]).verdict for s in big]
            told = confirmation.CONFIRMED in verdicts
            alerted["told" if told else "ruled_noise"].append(n)
            if not told:  # as the service: a step ruled noise is not seen by the next check
                seen = {"cell": [s for s in judged.steps if s not in big]}
    return alerted


def measure(args: argparse.Namespace) -> dict[str, Any]:
    noise = args.noise / 100

    def run(seed: int, step_at: int | None) -> dict[str, list[int]]:
        values = series(np.random.default_rng(seed), args.nights, noise, args.tails, step_at)
        if not args.confirm:
            return replay(values)
        reruns = np.random.default_rng(2 * 10**6 + seed)
        return replay(
            values,
            rerun=lambda n: shock(reruns, noise, args.tails, args.confirm),
            level=lambda n: LEVEL * (0.95 if step_at is not None and n >= step_at else 1),
        )

    quiet = [run(seed, None) for seed in range(args.replays)]
    stepped = [run(10**6 + seed, 30) for seed in range(args.replays)]
    checks = args.replays * (args.nights - regressions.MIN_NIGHTS)
    figures: dict[str, Any] = {"noise": {}, "step_5pct_at_night_30": {}}
    kinds = ["alert", "alert_of_one_night", "new_slower_step", "band"]
    for kind in [*kinds, "told", "ruled_noise"] if args.confirm else kinds:
        figures["noise"][kind] = {
            "replays_with_any": sum(bool(r[kind]) for r in quiet),
            "nights_flagged": sum(len(r[kind]) for r in quiet),
            "checks": checks,
        }
        delays = [
            min(n for n in r[kind] if n >= 30) - 30
            for r in stepped
            if any(n >= 30 for n in r[kind])
        ]
        figures["step_5pct_at_night_30"][kind] = {
            "replays_alerted": len(delays),
            "replays_before_the_step": sum(any(n < 30 for n in r[kind]) for r in stepped),
            "median_nights_after": statistics.median(delays) if delays else None,
            "max_nights_after": max(delays) if delays else None,
            "alerts_per_replay": statistics.fmean(len(r[kind]) for r in stepped),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replays", type=int, default=1000)
    parser.add_argument("--nights", type=int, default=60)
    parser.add_argument("--noise", type=float, default=1.5, help="percent of the level")
    parser.add_argument("--tails", action="store_true", help="Student's t (3) noise")
    parser.add_argument(
        "--confirm", type=int, default=0, help="re-run each alert: the median of N draws"
    )
    args = parser.parse_args()
    figures = {"args": vars(args), **measure(args)}
    print(json.dumps(figures, indent=2))
    confirm = f"_confirm{args.confirm}" if args.confirm else ""
    name = f"change_points_noise{confirm}{'_tails' if args.tails else ''}.json"
    write_result(ROOT / "bench" / "results" / name, figures)


if __name__ == "__main__":
    main()
