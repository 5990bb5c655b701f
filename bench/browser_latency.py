"""How long a sysbench line takes to reach a real Chromium page: read by the worker, drawn
on the run page's chart.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/browser_latency.py [--runs 2] [--time 30] [--repeats 3]

Starts benchdash as bench/stream_latency.py does (the web server as `make start` runs it, a real
Celery worker, on the results database and Redis of the environment), launches `--runs`
`sysbench cpu` batches at once at --report-interval=1, and opens each running run's page
(/runs/<id>/, the page's own live_follow.js) in headless Chromium (Playwright). A script
put in the page before its own wraps EventSource: for each sample event it records when
the page received it, and when the frame that drew it had run (a zero-delay timeout
after the next animation frame: the chart is drawn in that frame), each minus the time
the worker read the sample's line (the sample's received_at). Both clocks are this
machine's wall clock. Samples the page got from the replay of what was stored before it
opened are not counted. Prints p50, p95 and max of both, each repeat and all together.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import (  # noqa: E402
    delete_made,
    load,
    results_database,
    start_worker,
    stop_process,
    write_result,
)
from bench.stream_latency import free_port, session_cookie, start, wait_running  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

# Put in each page before its scripts: every EventSource's samples timed as they arrive
# and once drawn. Registered in the constructor, so before the page's own listener.
PROBE = """
(() => {
  window.__lags = [];
  const opened = Date.now() / 1000;
  const Original = window.EventSource;
  window.EventSource = class extends Original {
    constructor(url, options) {
      super(url, options);
      this.addEventListener("sample", (e) => {
        const read = JSON.parse(e.data).received_at;
        const got = Date.now() / 1000;
        if (read === undefined || read < opened) return;  // replayed, not live
        requestAnimationFrame(() => setTimeout(() => {
          window.__lags.push([got - read, Date.now() / 1000 - read]);
        }, 0));
      });
    }
  };
})();
"""


def percentiles(values: list[float]) -> dict[str, float]:
    ms = sorted(1000 * v for v in values)
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1),
        "max_ms": round(ms[-1], 1),
    }


def launch(runs: int, duration: int, tag: str, made: list[Any]) -> list[Any]:
    """`runs` one-run `sysbench cpu` batches, each on a load host of its own."""
    from runs.models import LoadHost, Plan
    from runs.services import batches

    launched = []
    for i in range(runs):
        host = LoadHost.objects.create(name=f"{tag}-{i + 1}", kind="local", port=0)
        made.append(host)
        plan = Plan.objects.create(
            name=f"{tag} {i}", load_host=host, test="cpu",
            options={"time": duration, "report-interval": 1, "cpu-max-prime": 2000},
            threads=[1],
        )  # fmt: skip
        made.insert(0, plan)
        launched.append(batches.batch_launch(plan=plan, launched_by="cli"))
    return launched


def one_repeat(args: argparse.Namespace, port: int, repeat: int, made: list[Any]) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from runs.models import FINISHED_STATUSES, Batch

    cookies = session_cookie()
    load_before = load()
    got: list[float] = []
    drawn: list[float] = []
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1400, "height": 900})
        context.add_cookies(
            [
                {"name": k, "value": v, "domain": "127.0.0.1", "path": "/"}
                for k, v in cookies.items()
            ]
        )
        context.add_init_script(PROBE)
        pages = []
        batches = launch(args.runs, args.time, f"browser-{os.getpid()}-{repeat}", made)
        for batch in batches:
            run = wait_running(batch)
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{port}/runs/{run.pk}/")
            pages.append(page)
        while (
            Batch.objects.filter(pk__in=[b.pk for b in batches])
            .exclude(status__in=FINISHED_STATUSES)
            .exists()
        ):
            pages[0].wait_for_timeout(500)  # the pages' event loop runs meanwhile
        for page in pages:
            for arrived, shown in page.evaluate("window.__lags"):
                got.append(arrived)
                drawn.append(shown)
        chromium.close()
    return {
        "received": percentiles(got),
        "drawn": percentiles(drawn),
        "load_before": load_before,
        "load_after": load(),
        "lags": {"received": got, "drawn": drawn},
    }


def measure(args: argparse.Namespace, made: list[Any]) -> dict[str, Any]:
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)  # as `make start` does
    port = free_port()
    web = start(  # as `make start` serves it
        [sys.executable, "-m", "benchdash.serve", "--host", "127.0.0.1", "--port", str(port)],
        "/tmp/bench-browser-uvicorn.log",
    )
    worker = start_worker(
        Path("/tmp/bench-browser-latency-worker.log"),
        name=f"browser-latency-{os.getpid()}",
        pool="threads",
        concurrency=str(args.runs + 1),
    )
    repeats = []
    try:
        time.sleep(6)
        for repeat in range(args.repeats):
            repeats.append(one_repeat(args, port, repeat, made))
            print({k: v for k, v in repeats[-1].items() if k != "lags"}, flush=True)
    finally:
        stop_process(worker)
        stop_process(web)
    every = {k: [v for r in repeats for v in r["lags"][k]] for k in ("received", "drawn")}
    return {
        "when": datetime.now().isoformat(timespec="seconds"),
        "concurrent_runs": args.runs,
        "seconds": args.time,
        "received": percentiles(every["received"]),
        "drawn": percentiles(every["drawn"]),
        "repeats": [{k: v for k, v in r.items() if k != "lags"} for r in repeats],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--time", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "browser_latency.json"))
    args = parser.parse_args()
    # Playwright's sync API runs an event loop in this thread; the ORM calls meanwhile are
    # plain synchronous ones.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
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
