"""How long a sysbench line takes to reach a browser: as a sample, and as a raw line.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/stream_latency.py [--runs 4] [--time 80]

Starts benchdash as `make start` does (uvicorn serving the ASGI app, a real Celery worker)
on the results database and Redis named by the environment (created if missing, and then
dropped at the end; otherwise only the rows made here are deleted), then runs several
`sysbench cpu` batches at once, each on a load host of its own (one benchmark per load
host), at --report-interval=1. One Server-Sent Events client per run records:

- samples: the time it received the sample event minus the time the worker read its line
  (the sample's received_at);
- raw lines: the time it received the `lines` event holding an interval line
  (`[ 5s ] ...`) minus the received_at of the sample parsed from that same line.

Both clocks are this machine's wall clock. Prints p50, p95 and max of both paths.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402
import requests  # noqa: E402

from bench._harness import (  # noqa: E402
    cpu_batches,
    load,
    measured_and_cleaned,
    percentiles,
    wait_running,
    web_and_worker,
    write_result,
)
from bench.serving import free_port, session_cookie  # noqa: E402

INTERVAL_LINE = re.compile(r"^\[ (\d+)s \] thds:")


def follow(url: str, cookies: dict[str, str], lags: dict[str, list[float]]) -> None:
    """Read one run's events until its end, recording each sample's and each interval
    line's lag in seconds. What was read before the client connected comes from the
    replay, not live: not counted."""
    connected = time.time()
    read_at: dict[int, float] = {}  # the sample's time_s -> when the worker read its line
    line_arrivals: list[tuple[int, float]] = []
    with requests.get(url, cookies=cookies, stream=True, timeout=300) as response:
        event: dict[str, str] = {}
        for raw in response.iter_lines(decode_unicode=True):
            now = time.time()
            if raw:
                key, _, value = str(raw).partition(": ")
                event[key] = value
                continue
            if event.get("event") == "sample":
                sample = json.loads(event["data"])
                read_at[round(sample["time_s"])] = sample["received_at"]
                if sample["received_at"] >= connected:
                    lags["samples"].append(now - sample["received_at"])
            elif event.get("event") == "lines":
                for line in json.loads(event["data"])["lines"]:
                    match = INTERVAL_LINE.match(line)
                    if match:
                        line_arrivals.append((int(match.group(1)), now))
            elif event.get("event") == "end":
                break
            event = {}
    for time_s, arrived in line_arrivals:
        if time_s in read_at and read_at[time_s] >= connected:
            lags["lines"].append(arrived - read_at[time_s])


def measure(args: argparse.Namespace, made: list[Any]) -> dict[str, Any]:
    port = free_port()
    web = [sys.executable, "-m", "uvicorn", "benchdash.asgi:application", "--port", str(port)]
    with web_and_worker(web, port=port, name="latency", runs=args.runs):
        cookies = session_cookie()
        lags: dict[str, list[float]] = {"samples": [], "lines": []}
        followers = []
        load_before = load()
        for batch in cpu_batches(args.runs, args.time, f"latency-{os.getpid()}", made):
            run = wait_running(batch)
            url = f"http://127.0.0.1:{port}/runs/{run.pk}/events"
            thread = threading.Thread(target=follow, args=(url, cookies, lags))
            thread.start()
            followers.append(thread)
        for thread in followers:
            thread.join()
    return {
        "when": datetime.now().isoformat(timespec="seconds"),
        "concurrent_runs": args.runs,
        "samples": percentiles(lags["samples"]),
        "lines": percentiles(lags["lines"]),
        "load_before": load_before,
        "load_after": load(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--time", type=int, default=80)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "stream_latency.json"))
    args = parser.parse_args()
    django.setup()
    result = measured_and_cleaned(lambda made: measure(args, made))
    write_result(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
