"""What the answer pages cost as batches grow: server time, bytes and queries.

    BENCHDASH_DB_NAME=benchdash_mine .venv/bin/python bench/pages.py [--repeats 7]

Uses the database and Redis of the environment, like the product (never drops anything).
Makes, once, finished batches of 4, 50 and 200 runs x 600 one-second samples, a partner
batch of each size for the compare page, and a plan with 60 scheduled nights of 20 cells
(bench/benchdata.py); then asks each page `--repeats` times through Django's request
handler in this process (all middleware, no network) as a logged-in user, and prints the
min / median / max server time, the bytes of the body (and gzipped, when the server
compresses), and the number of SQL queries. The load average is printed before and after:
on a shared machine, read the figures with it.

Each request's server CPU is measured too (the thread's CPU time: Django's, not
PostgreSQL's). A finished batch's answer is stored on its first request (issue 27): the
first, unmeasured, request of each page stores it, and the 200-run page is also measured
with its stored answers deleted before each request (the cost of building and storing
it). The stored 200-run page and the compare page of 2 x 200 runs are measured a third way
too, "first in the process": with nothing held in memory before each request (what a web
process remembers of stored answers and of the power of a comparison: issue 39). --only
NAME measures the pages whose name holds NAME.
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import write_result  # noqa: E402

SIZES = (4, 50, 200)
SAMPLES = 600
NIGHTS = 60


def setup() -> None:
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def history_plan() -> Any:
    """A plan with NIGHTS scheduled nights of 20 cells, each checked as after a night."""
    from django.utils import timezone

    from bench import benchdata
    from runs.models import Batch
    from runs.services.nightly import check as nightly_check

    plan = benchdata.plan("bench nightly")
    made = Batch.objects.filter(plan=plan, label__startswith="bench:night").count()
    first = timezone.now() - timedelta(days=NIGHTS)
    for night in range(made, NIGHTS):
        batch = benchdata.batch(
            f"night-{night}", runs=20, samples=0, of_plan=plan, launched_by="schedule",
            started_at=first + timedelta(days=night),
        )  # fmt: skip
        Batch.objects.filter(pk=batch.pk).update(created_at=batch.started_at)
        batch.refresh_from_db()
        nightly_check.batch_analyse(batch=batch, notify=False)
    return plan


def client() -> Any:
    from django.contrib.auth.models import User
    from django.test import Client

    user = User.objects.get_or_create(username="bench-pages")[0]
    browser = Client(HTTP_HOST="127.0.0.1", HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    browser.force_login(user)
    return browser


def measure(browser: Any, url: str, repeats: int, before: Any = None) -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, cpu, queries, body, response = [], [], 0, b"", None
    browser.get(url)  # warm: templates compiled, connection open, the answer stored
    for _ in range(repeats):
        if before is not None:
            before()
        with CaptureQueriesContext(connection) as captured:
            began, began_cpu = time.perf_counter(), time.thread_time()
            response = browser.get(url)
            body = _body(response)
            cpu.append(time.thread_time() - began_cpu)
            times.append(time.perf_counter() - began)
        queries = len(captured.captured_queries)
    assert response is not None and response.status_code == 200, (url, response)
    gzipped = response.get("Content-Encoding") == "gzip"
    raw = gzip.decompress(body) if gzipped else body
    return {
        "url": url,
        "ms": [round(t * 1000, 1) for t in times],
        "cpu_ms": [round(t * 1000, 1) for t in cpu],
        "bytes": len(raw),
        "sent": len(body),
        "gzip": gzipped,
        "queries": queries,
    }


def _body(response: Any) -> bytes:
    """The whole body, of a streamed answer too (a live run's events are an async one)."""
    if not response.streaming:
        return bytes(response.content)
    content = response.streaming_content
    if not hasattr(content, "__aiter__"):
        return b"".join(content)
    from asgiref.sync import async_to_sync

    async def joined() -> bytes:
        return b"".join([chunk async for chunk in content])

    return bytes(async_to_sync(joined)())


def forget(label: str) -> Any:
    """Deletes the stored answers of the batch labelled so (before each request)."""
    from runs.models import StoredResults

    return lambda: StoredResults.objects.filter(batch__label=f"bench:{label}").delete()


def cold() -> None:
    """Before each request: nothing held by this process (runs/services/answers/held.py)
    and no power remembered (runs/analysis/noise/power.py), as for the first request of a page in
    a web process (commits without them: nothing to forget)."""
    try:
        from runs.services.answers import held

        held.forget_all()
        from runs.analysis.noise import power

        power.detectable.cache_clear()
    except (ImportError, AttributeError):
        pass


def pages() -> list[tuple[str, str, Any]]:
    from bench import benchdata

    found: list[tuple[str, str, Any]] = []
    for size in SIZES:
        one = benchdata.batch(f"{size}x{SAMPLES}", runs=size, samples=SAMPLES)
        found.append((f"results, {size} runs x {SAMPLES}", f"/batches/{one.pk}/results", None))
    big = benchdata.batch(f"200x{SAMPLES}", runs=200, samples=SAMPLES)
    found.append((
        f"results, 200 runs x {SAMPLES}, built each time", f"/batches/{big.pk}/results",
        forget(f"200x{SAMPLES}"),
    ))  # fmt: skip
    found.append((f"API results, 200 runs x {SAMPLES}", f"/api/v1/batches/{big.pk}/results", None))
    first = f"results, 200 runs x {SAMPLES}, stored, first in the process"
    found.append((first, f"/batches/{big.pk}/results", cold))
    for size in SIZES:
        one = benchdata.batch(f"{size}x{SAMPLES}", runs=size, samples=SAMPLES)
        two = benchdata.batch(f"{size}x{SAMPLES}-partner", runs=size, samples=0)
        found.append(
            (f"compare, 2 batches of {size} runs", f"/compare?s=b{one.pk}&s=b{two.pk}", None)
        )
    found.append(("compare, 2 batches of 200 runs, first in the process", found[-1][1], cold))
    found.append(
        (f"history, {NIGHTS} nights x 20 cells", f"/plans/{history_plan().pk}/history", None)
    )
    # The live page of a batch and what it polls, as batches grow (issue 39).
    for size in (20, 2000):
        one = benchdata.batch(f"{size}x0", runs=size, samples=0)
        found.append((f"batch page, {size} runs", f"/batches/{one.pk}/", None))
        found.append((f"batch progress, {size} runs", f"/batches/{one.pk}/progress", None))
    long_run = benchdata.batch("1x3600", runs=1, samples=3600).runs.get()
    found.append(("events of a finished run, 3600 samples", f"/runs/{long_run.pk}/events", None))
    queued = benchdata.queued_batch("queued-1000-cells", cells=1000)
    found.append(("batch page, queued, 1000 cells", f"/batches/{queued.pk}/", None))
    found.append(("batch progress, queued, 1000 cells", f"/batches/{queued.pk}/progress", None))
    benchdata.store_answers()
    return found


def row(name: str, result: dict[str, Any]) -> str:
    ms, cpu = result["ms"], result["cpu_ms"]
    sent = f"{result['sent'] / 1e3:,.0f} kB gzip" if result["gzip"] else "not compressed"
    return (
        f"| {name} | {min(ms):.0f} / {statistics.median(ms):.0f} / {max(ms):.0f} | "
        f"{min(cpu):.0f} / {statistics.median(cpu):.0f} / {max(cpu):.0f} | "
        f"{result['bytes'] / 1e3:,.0f} kB | {sent} | {result['queries']} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default="", help="measure the pages whose name holds this")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "pages.json"))
    args = parser.parse_args()
    setup()
    found = pages()
    browser = client()
    # A web worker's start-up, once the data is made: every view imported, and what is
    # loaded left out of the garbage collector's full collections.
    import benchdash.asgi  # noqa: F401

    before = os.getloadavg()
    print(f"load average before: {before[0]:.2f} / {before[1]:.2f} / {before[2]:.2f}")
    print("| page | server ms min / median / max | server CPU ms | body | sent | queries |")
    print("|---|---|---|---|---|---|")
    results = {}
    for name, url, before_each in found:
        if args.only not in name:
            continue
        results[name] = measure(browser, url, args.repeats, before_each)
        print(row(name, results[name]), flush=True)
    after = os.getloadavg()
    print(f"load average after: {after[0]:.2f} / {after[1]:.2f} / {after[2]:.2f}")
    write_result(args.out, {"load_before": before, "load_after": after, "pages": results}, indent=1)


if __name__ == "__main__":
    main()
