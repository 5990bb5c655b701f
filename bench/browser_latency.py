"""How long a sysbench line takes to reach a real Chromium page: read by the worker, drawn
on the run page's chart.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/browser_latency.py [--runs 2] [--time 30] [--repeats 3]

Starts benchdash (the web server as `make start` runs it, a real Celery worker, on the
results database and Redis of the environment), launches `--runs` `sysbench cpu` batches
at once at --report-interval=1, and opens each running run's page
(/runs/<id>/, the page's own live_follow.js) in headless Chromium (Playwright). A script
put in the page before its own wraps EventSource: for each sample event it records when
the page received it, when the next animation frame began (the chart is drawn in it),
and when that frame had run (a zero-delay timeout after it), each minus the time the
worker read the sample's line (the sample's received_at). Both clocks are this machine's
wall clock. Samples the page got from the replay of what was stored before it opened are
not counted; "drawn_settled" counts apart the samples read 3 s or more after their page
opened (before, the page is loading its scripts and charts). Prints p50, p95 and max of
each, each repeat and all together.

The web server and the worker are started as bench/stream_latency.py starts them
(bench/_harness.py's `web_and_worker`), the batches launched as it launches them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

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

CHROMIUM = "/usr/bin/chromium"
# Each live sample's lags behind the worker's read of its line: received by the page, the
# next animation frame begun (the chart is drawn in it), that frame done.
KINDS = ("received", "frame", "drawn")
# A page's first seconds are its own loading (scripts, charts, the stored samples), in
# which a sample waits its turn: "drawn_settled" counts the samples read after them.
SETTLE_S = 3.0
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
        requestAnimationFrame(() => {
          const frame = Date.now() / 1000;
          setTimeout(() => {
            const drawn = Date.now() / 1000;
            window.__lags.push([got - read, frame - read, drawn - read, read - opened]);
          }, 0);
        });
      });
    }
  };
})();
"""


def one_repeat(args: argparse.Namespace, port: int, repeat: int, made: list[Any]) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from runs.models import FINISHED_STATUSES, Batch

    cookies = session_cookie()
    load_before = load()
    lags: dict[str, list[float]] = {name: [] for name in (*KINDS, "drawn_settled")}
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        pages = []
        batches = cpu_batches(args.runs, args.time, f"browser-{os.getpid()}-{repeat}", made)
        for batch in batches:
            run = wait_running(batch)
            page = _window(chromium, cookies)
            page.goto(f"http://127.0.0.1:{port}/runs/{run.pk}/")
            pages.append(page)
        while (
            Batch.objects.filter(pk__in=[b.pk for b in batches])
            .exclude(status__in=FINISHED_STATUSES)
            .exists()
        ):
            pages[0].wait_for_timeout(500)  # the pages' event loop runs meanwhile
        for page in pages:
            for sample in page.evaluate("window.__lags"):
                for name, lag in zip(KINDS, sample, strict=False):
                    lags[name].append(lag)
                if sample[3] >= SETTLE_S:
                    lags["drawn_settled"].append(sample[2])
        chromium.close()
    return {
        **{name: percentiles(values) for name, values in lags.items()},
        "load_before": load_before,
        "load_after": load(),
        "lags": lags,
    }


def _window(chromium: Any, cookies: dict[str, str]) -> Any:
    """A page in a browser context of its own, as two people watching a run each: two
    pages of one context stalled a frame for a second now and then (before 2026-11-27
    the bench opened both in one, and its tail was mostly that)."""
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    context.add_cookies(
        [{"name": k, "value": v, "domain": "127.0.0.1", "path": "/"} for k, v in cookies.items()]
    )
    context.add_init_script(PROBE)
    return context.new_page()


def measure(args: argparse.Namespace, made: list[Any]) -> dict[str, Any]:
    from django.core.management import call_command

    call_command("collectstatic", interactive=False, verbosity=0)  # as `make start` does
    port = free_port()
    # The web server as `make start` serves it.
    web = [sys.executable, "-m", "benchdash.serve", "--host", "127.0.0.1", "--port", str(port)]
    repeats = []
    with web_and_worker(web, port=port, name="browser-latency", runs=args.runs):
        for repeat in range(args.repeats):
            repeats.append(one_repeat(args, port, repeat, made))
            print({k: v for k, v in repeats[-1].items() if k != "lags"}, flush=True)
    every = {k: [v for r in repeats for v in r["lags"][k]] for k in repeats[0]["lags"]}
    return {
        "when": datetime.now().isoformat(timespec="seconds"),
        "concurrent_runs": args.runs,
        "seconds": args.time,
        **{name: percentiles(values) for name, values in every.items()},
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
    result = measured_and_cleaned(lambda made: measure(args, made))
    write_result(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
