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
import socket
import statistics
import subprocess
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
    delete_made,
    load,
    results_database,
    start_worker,
    stop_process,
    write_result,
)

INTERVAL_LINE = re.compile(r"^\[ (\d+)s \] thds:")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(argv: list[str], log: str) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)


def session_cookie() -> dict[str, str]:
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench")
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


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


def launch(runs: int, duration: int, made: list[Any]) -> list[Any]:
    from runs.models import LoadHost, Plan
    from runs.services import batches

    launched = []
    tag = f"latency-{os.getpid()}"
    for i in range(runs):
        host = LoadHost.objects.create(name=f"{tag}-{i + 1}", kind="local", port=0)
        made.append(host)
        plan = Plan.objects.create(
            name=f"{tag} {i}",
            load_host=host,
            test="cpu",
            options={"time": duration, "report-interval": 1, "cpu-max-prime": 2000},
            threads=[1],
        )
        made.insert(0, plan)
        launched.append(batches.batch_launch(plan=plan, launched_by="cli"))
    return launched


def wait_running(batch: Any) -> Any:
    from runs.models import Run

    for _ in range(300):
        run = Run.objects.filter(batch=batch, status="running").first()
        if run is not None:
            return run
        time.sleep(0.1)
    raise RuntimeError(f"batch {batch.pk} did not start")


def percentiles(lags: list[float]) -> dict[str, float]:
    ms = sorted(1000 * lag for lag in lags)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1),
        "max_ms": round(ms[-1], 1),
    }


def measure(args: argparse.Namespace, made: list[Any]) -> dict[str, Any]:
    port = free_port()
    web = start(
        [sys.executable, "-m", "uvicorn", "benchdash.asgi:application", "--port", str(port)],
        "/tmp/bench-uvicorn.log",
    )
    worker = start_worker(
        Path("/tmp/bench-latency-worker.log"),
        name=f"latency-{os.getpid()}",
        pool="threads",
        concurrency=str(args.runs + 1),
    )
    try:
        time.sleep(6)
        cookies = session_cookie()
        lags: dict[str, list[float]] = {"samples": [], "lines": []}
        followers = []
        load_before = load()
        for batch in launch(args.runs, args.time, made):
            run = wait_running(batch)
            url = f"http://127.0.0.1:{port}/runs/{run.pk}/events"
            thread = threading.Thread(target=follow, args=(url, cookies, lags))
            thread.start()
            followers.append(thread)
        for thread in followers:
            thread.join()
    finally:
        stop_process(worker)
        stop_process(web)
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
    made: list[Any] = []
    with results_database():
        try:
            result = measure(args, made)
        finally:
            delete_made(
                plans=[m for m in made if m._meta.model_name == "plan"],
                others=[m for m in made if m._meta.model_name != "plan"],
            )
    write_result(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
