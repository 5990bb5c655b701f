"""What benchdash costs while nobody uses it: the CPU of every process `make start` runs
(web, benchmark worker, housekeeper, drivers, beat), idle, in ms of CPU per second.

Reads the process groups scripts/start records in var/run/ (each the keep loop and what it
runs) and sums utime + stime of every process in each group over a window, several
windows in a row. CPU seconds, not wall: the figure holds on a loaded machine. Run it with
benchdash started and idle (`make start`, no batch running, no page open).

    .venv/bin/python bench/idle.py --window 120 --windows 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import CLK_TCK, ROOT, load, spread, write_result

PROCESSES = ("web", "worker", "housekeeper", "drivers", "beat")
GOAL_MS_S = 3.0


def group_cpu_s(pgid: int) -> float:
    """CPU seconds (user + system) of every live process of a process group."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def groups(run_dir: Path) -> dict[str, int]:
    found = {}
    for name in PROCESSES:
        try:
            found[name] = int((run_dir / f"{name}.pid").read_text())
        except (OSError, ValueError):
            sys.exit(f"idle: {run_dir}/{name}.pid is missing: start benchdash with `make start`")
    return found


def window(pgids: dict[str, int], seconds: float) -> dict[str, float]:
    before = {name: group_cpu_s(pgid) for name, pgid in pgids.items()}
    time.sleep(seconds)
    return {
        name: (group_cpu_s(pgid) - before[name]) * 1000 / seconds for name, pgid in pgids.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=120, help="seconds per window")
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--run-dir", type=Path, default=ROOT / "var" / "run")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "idle.json")
    args = parser.parse_args()
    pgids = groups(args.run_dir)
    loads, windows = [], []
    for _ in range(args.windows):
        figures = window(pgids, args.window)
        figures["total"] = sum(figures.values())
        windows.append(figures)
        loads.append(load()[0])
        print("  ".join(f"{name} {ms:.2f}" for name, ms in figures.items()), "ms/s")
    per_process = {name: spread([w[name] for w in windows]) for name in (*PROCESSES, "total")}
    write_result(
        args.out,
        {
            "window_s": args.window,
            "goal_ms_per_s": GOAL_MS_S,
            "load_1min": spread(loads),
            "ms_per_s": per_process,
            "windows": windows,
        },
    )


if __name__ == "__main__":
    main()
