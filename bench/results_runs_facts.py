"""What the results' per-run facts cost the runs query: each run's final report (without
its histogram) and its raw log's error lines, picked out by PostgreSQL.

    BENCHDASH_DB_NAME=benchdash_mine .venv/bin/python bench/results_runs_facts.py [--repeats 7]

Uses the database of the environment. Makes, once, a finished batch of 200 runs whose
raw logs hold 600 interval lines each (a 10-minute run at --report-interval=1, ~80 kB) and
whose reports hold a checkpoint and a final report with a 120-row histogram each
(bench/benchdata.py, then the logs and reports written over). Times the runs query as
main reads it (`before`: the runs, raw log, reports and histogram deferred), with the two
annotations (`after`: runs/services/answers/results.py results_runs), and the whole of
batch_results() (the results page's, report's and API's build). Min / median / max.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

RUNS, LINES = 200, 600
LINE = (
    "[ {s}s ] thds: 16 tps: 4321.00 qps: 86420.00 (r/w/o: 60494.00/17284.00/8642.00) "
    "lat (ms,95%): 5.47 err/s: 0.00 reconn/s: 0.00\n"
)


def made_batch(error: bool) -> Any:
    """The batch, its logs ending with an error line or not."""
    from bench import benchdata
    from runs.models import Run

    batch = benchdata.batch("runs-facts-200", runs=RUNS, samples=10)
    log = "Initializing worker threads...\n"
    log += "".join(LINE.format(s=s) for s in range(1, LINES + 1))
    if error:
        log += "FATAL: mysql_stmt_execute() returned error 1213 (Deadlock found)\n"
    histogram = [[0.5 + i, 10] for i in range(120)]
    report = {"sql": {"tps": 4321.0, "read": 1.0}, "latency": {"min": 0.5}, "histogram": histogram}
    reports = [{**report, "checkpoint_s": 10.0}, {**report, "checkpoint_s": None}]
    Run.objects.filter(batch=batch).update(raw_log=log, reports=reports, outcome="ok")
    return batch


def timed(work: Callable[[], Any], repeats: int) -> str:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(1000 * (time.perf_counter() - started))
    return f"{min(times):.1f} / {statistics.median(times):.1f} / {max(times):.1f} ms"


def measure(batch: Any, repeats: int) -> None:
    from runs.services.answers.results import batch_results, results_runs

    def before() -> list[Any]:  # the runs query as main reads it
        return list(
            batch.runs.order_by("position").defer("raw_log", "reports", "argv", "histogram")
        )

    print("  runs query before:", timed(before, repeats))
    print("  runs query after: ", timed(lambda: results_runs(batch), repeats))
    print("  batch_results():  ", timed(lambda: batch_results(batch=batch), repeats))
    found = batch_results(batch=batch)
    print(f"  rows: {len(found.runs)}; errors of the first: {found.runs[0]['errors']}"[:120])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    repeats = parser.parse_args().repeats
    django.setup()
    print(f"load average {os.getloadavg()[0]:.2f}; {RUNS} runs of {LINES} log lines")
    for error in (False, True):
        print("every log with an error line:" if error else "no log with an error line:")
        measure(made_batch(error), repeats)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
