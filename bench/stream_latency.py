"""How long a sysbench line takes to reach a browser.

    .venv/bin/python bench/stream_latency.py [--runs 4] [--time 80]

Starts benchdash as `make start` does (uvicorn serving the ASGI app, a real Celery worker),
on a database of its own (benchdash_bench), then runs several `sysbench cpu` batches at
once, each on a load host of its own (local-1, local-2, ...: one benchmark per load host),
at --report-interval=1. One Server-Sent Events client per run records, for every sample,
the time it received the event minus the time the worker read the line (the sample's
received_at). Both clocks are this machine's wall clock. Prints p50, p95 and max.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
os.environ["BENCHDASH_DB_NAME"] = "benchdash_bench"
os.environ["BENCHDASH_REDIS_URL"] = "redis://127.0.0.1:6379/14"

import django  # noqa: E402
import requests  # noqa: E402


def setup_database() -> None:
    for sql in ("DROP DATABASE IF EXISTS benchdash_bench", "CREATE DATABASE benchdash_bench"):
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", sql], check=True)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)


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


def follow(url: str, cookies: dict[str, str], lags: list[float]) -> None:
    """Read one run's events until its end, recording each sample's lag in seconds.

    Samples read before the client connected come from the replay, not live: not counted.
    """
    connected = time.time()
    with requests.get(url, cookies=cookies, stream=True, timeout=300) as response:
        event: dict[str, str] = {}
        for raw in response.iter_lines(decode_unicode=True):
            if raw:
                key, _, value = str(raw).partition(": ")
                event[key] = value
                continue
            if event.get("event") == "sample":
                read_at = json.loads(event["data"])["received_at"]
                if read_at >= connected:
                    lags.append(time.time() - read_at)
            elif event.get("event") == "end":
                return
            event = {}


def launch(runs: int, duration: int) -> list[Any]:
    from runs.models import LoadHost, Plan
    from runs.services import batches

    launched = []
    for i in range(runs):
        host, _ = LoadHost.objects.get_or_create(name=f"local-{i + 1}", kind="local", port=0)
        plan = Plan.objects.create(
            name=f"latency {i}",
            load_host=host,
            test="cpu",
            options={"time": duration, "report-interval": 1, "cpu-max-prime": 2000},
            threads=[1],
        )
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--time", type=int, default=80)
    args = parser.parse_args()
    setup_database()
    django.setup()
    port = free_port()
    web = start(
        [sys.executable, "-m", "uvicorn", "benchdash.asgi:application", "--port", str(port)],
        "/tmp/bench-uvicorn.log",
    )
    worker = start(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "benchdash",
            "worker",
            "-Q",
            "benchmarks,celery",
            "--pool=threads",
            f"--concurrency={args.runs + 1}",
            "--loglevel=WARNING",
        ],
        "/tmp/bench-latency-worker.log",
    )
    try:
        time.sleep(6)
        cookies = session_cookie()
        lags: list[float] = []
        followers = []
        for batch in launch(args.runs, args.time):
            run = wait_running(batch)
            url = f"http://127.0.0.1:{port}/runs/{run.pk}/events"
            thread = threading.Thread(target=follow, args=(url, cookies, lags))
            thread.start()
            followers.append(thread)
        for thread in followers:
            thread.join()
    finally:
        worker.terminate()
        web.terminate()
        worker.wait(timeout=60)
        web.wait(timeout=30)
    ms = sorted(1000 * lag for lag in lags)
    result = {
        "lines": len(ms),
        "concurrent_runs": args.runs,
        "p50_ms": statistics.median(ms),
        "p95_ms": ms[int(0.95 * (len(ms) - 1))],
        "max_ms": ms[-1],
        "load_average": os.getloadavg(),
    }
    out = ROOT / "bench" / "results" / "stream_latency.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
