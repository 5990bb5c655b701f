"""Capture real noisy runs for the searches' tests (issue 24), against a private MariaDB:
sysbench oltp_point_select at 2 threads and a fixed rate while a CPU burner beside it
switches on and off, so that some seconds stall and others do not; and, with `threads`,
a closed-loop grid of 2, 3 and 4 threads x 3 repeats, interleaved, whose peaks lie within
a few % of each other on this 2-core machine; with `plateau`, the same grid at 1 to 4
threads (point_plateau_t*), whose peaks lie within 3 % of each other. The outputs go to
tests/fixtures/recorded/noisy/, one file a run, as sysbench printed them.

    .venv/bin/python -m bench.capture_rate_stalls [rate ...]
    .venv/bin/python -m bench.capture_rate_stalls threads
    .venv/bin/python -m bench.capture_rate_stalls plateau
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.servers import PrivateMariaDB  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "recorded" / "noisy"
RATES = (1000, 2000)
TRIES = 3
SECONDS = 8
THREADS = (2, 3, 4)
PLATEAU = (1, 2, 3, 4)


def _burn(seconds_on: float, seconds_off: float, stop_at: float) -> None:
    # bursts, as a neighbour's job: on for a while, then quiet
    while time.monotonic() < stop_at:
        until = time.monotonic() + seconds_on
        while time.monotonic() < until:
            pass
        time.sleep(seconds_off)


def _sysbench(config: Path, *args: str) -> str:
    argv = ["sysbench", f"--config-file={config}", "oltp_point_select", *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    return done.stdout + done.stderr


def main(rates: list[int], grid: tuple[int, ...] = THREADS, name: str = "point") -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    server = PrivateMariaDB(log_bin=False).start()
    try:
        server.create_database("sbtest")
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "sysbench.conf"
            config.write_text(
                f"db-driver=mysql\nmysql-host={server.host}\nmysql-port={server.port}\n"
                f"mysql-user={server.user}\nmysql-password={server.password}\n"
                "mysql-db=sbtest\ntables=1\ntable-size=10000\n"
            )
            _sysbench(config, "prepare")
            if not rates:
                _threads_grid(config, grid, name)
            for rate in rates:
                for attempt in range(1, TRIES + 1):
                    _capture(config, rate, attempt)
    finally:
        server.stop()


def _capture(config: Path, rate: int, attempt: int) -> None:
    stop_at = time.monotonic() + SECONDS + 1
    burners = [
        multiprocessing.Process(target=_burn, args=(1.5, 2.0 + i, stop_at)) for i in range(2)
    ]
    for burner in burners:
        burner.start()
    output = _sysbench(
        config, "run", "--threads=2", f"--time={SECONDS}", "--report-interval=1",
        f"--rate={rate}", "--percentile=95",
    )  # fmt: skip
    for burner in burners:
        burner.join()
    (OUT / f"point_rate{rate}_burst_r{attempt}.txt").write_text(output)
    print(
        rate,
        attempt,
        "queue:",
        [
            line.split(":")[1].split(",")[0].strip()
            for line in output.splitlines()
            if "queue length" in line
        ],
    )


def _threads_grid(config: Path, grid: tuple[int, ...], name: str) -> None:
    for attempt in range(1, TRIES + 1):
        for threads in grid:
            output = _sysbench(
                config, "run", f"--threads={threads}", "--time=3", "--report-interval=1",
                "--percentile=95",
            )  # fmt: skip
            (OUT / f"{name}_t{threads}_r{attempt}.txt").write_text(output)
            done = [line for line in output.splitlines() if "transactions:" in line]
            print(threads, attempt, done)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what",
        nargs="*",
        help="rates to capture (default 1000 2000), or 'threads', or 'plateau'",
    )
    return parser.parse_args()


if __name__ == "__main__":
    what = _arguments().what
    if what == ["threads"]:
        main([])
    elif what == ["plateau"]:
        main([], PLATEAU, "point_plateau")
    else:
        main([int(a) for a in what] or list(RATES))
