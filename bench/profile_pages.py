"""Where a page's server CPU goes, by function, with py-spy.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/profile_pages.py [--seconds 20] [--top 40] PAGE [PAGE ...]

A PAGE is a name of bench/pages.py's list ("compare, 2 batches of 200 runs"; any part of
it: "compare, 2 batches of 200") or a path ("/batches/3/results"); the batches are those
bench/pages.py makes (made first when missing), their answers stored as a batch's end
stores them. "results, 200 runs x 600, built each time" deletes the batch's stored answers
before each request, as bench/pages.py does.

Each page is asked again and again for --seconds through Django's request handler in this
process (every middleware, no network; a web worker's start-up first, as bench/pages.py),
while `py-spy record` samples this process. Printed: the page's CPU per request, and the
share of its busy samples spent in each function (inclusive: a function's callees count for
it), benchdash's own and the framework's largest. py-spy pauses the process for each
sample: the shares hold, the CPU per request is bench/pages.py's to give. Idle samples
(waiting on PostgreSQL) are not recorded, so the shares are of CPU, not of time.

    .venv/bin/python bench/profile_pages.py --mix [--seconds 20]

profiles the pages of bench/load.py's `--mix pages` instead, in its world: a private
PostgreSQL and Redis, its batches (100 small ones for the list, a finished 50-run and
200-run batch, answers stored), removed at the end.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import pages  # noqa: E402  (sets the settings module)

# Frames of the framework worth naming beside benchdash's own.
FRAMEWORK = (
    "django/template/",
    "django/db/models/sql/compiler.py",
    "django/db/models/query.py",
    "django/contrib/sessions/",
    "django/contrib/auth/",
    "django/middleware/",
    "rest_framework/",
    "psycopg/",
    "json/",
    "gzip.py",
    "zlib",
)


def chosen(names: list[str], found: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    picked = []
    for name in names:
        if name.startswith("/"):
            picked.append((name, name, None))
            continue
        matches = [page for page in found if name in page[0]]
        if not matches:
            raise SystemExit(f"no page of bench/pages.py is named like {name!r}")
        picked.append(matches[0])
    return picked


def asked(browser: Any, url: str, seconds: float, before: Any) -> list[float]:
    """The CPU seconds of each request, asking `url` for `seconds`."""
    cpu = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        if before is not None:
            before()
        began = time.thread_time()
        response = browser.get(url)
        pages._body(response)
        cpu.append(time.thread_time() - began)
        assert response.status_code == 200, (url, response.status_code)
    return cpu


def shares(raw: Path) -> tuple[int, collections.Counter[str]]:
    """(busy samples, samples per function: inclusive, each function once a stack)."""
    total, inclusive = 0, collections.Counter[str]()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        frames = {_frame(f) for f in stack.split(";")}
        for frame in frames - {""}:
            inclusive[frame] += int(count)
    return total, inclusive


def _frame(frame: str) -> str:
    """`function (path:line)` as `function path`, for benchdash's frames and the chosen
    framework's; "" for the others (py-spy names a file as its module was found: from
    the checkout, `runs/...`; from the venv, `django/...`)."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    if path.startswith(("runs/", "benchdash/")):
        return f"{name} {path}"
    for part in FRAMEWORK:
        if part in path:
            return f"{name} {path[path.index(part) :]}"
    return ""


def profile(browser: Any, name: str, url: str, before: Any, seconds: float, top: int) -> None:
    browser.get(url)  # warm: templates compiled, connection open, the answer stored
    if top == 0:  # CPU alone, no py-spy: on a loaded machine, read the lowest quartile
        cpu = sorted(asked(browser, url, seconds, before))
        quartile, median = cpu[len(cpu) // 4], cpu[len(cpu) // 2]
        print(f"{name}: {len(cpu)} requests, CPU ms min {1000 * cpu[0]:.1f}, lowest quartile "
              f"{1000 * quartile:.1f}, median {1000 * median:.1f}")  # fmt: skip
        return
    raw = Path(tempfile.mkdtemp(prefix="benchdash-profile-")) / "raw.txt"
    spy = subprocess.Popen(
        [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(os.getpid()),
         "--rate", "250", "--format", "raw", "--output", str(raw)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(1.0)  # py-spy attached
    cpu = asked(browser, url, seconds, before)
    count = len(cpu)
    spy.send_signal(signal.SIGINT)  # py-spy writes its profile on Ctrl-C
    spy.wait(timeout=60)
    total, inclusive = shares(raw)
    print(f"\n## {name}: {count} requests, {1000 * sum(cpu) / max(count, 1):.1f} ms of CPU each "
          f"(under py-spy), {total} busy samples")  # fmt: skip
    print("| share | function |\n|---|---|")
    for frame, n in inclusive.most_common(top):
        print(f"| {100 * n / max(total, 1):.1f} % | `{frame}` |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help="names from bench/pages.py, or paths")
    parser.add_argument("--mix", action="store_true", help="bench/load.py's pages mix")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--top", type=int, default=40, help="0: the CPU alone, no py-spy")
    args = parser.parse_args()
    if not args.mix:
        pages.setup()
        profiled(chosen(args.pages, pages.pages()), args)
        return
    from bench import load

    postgres, redis = load.start_servers()
    try:
        pages.setup()
        from runs.models import LoadHost, Plan

        local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
        load.store_batches(Plan.objects.create(name="stored", load_host=local, test="cpu"))
        mix = load.store_finished_pages()
        profiled([(name, url, None) for name, url in mix.items()], args)
    finally:
        redis.stop()
        postgres.stop()


def profiled(found: list[tuple[str, str, Any]], args: argparse.Namespace) -> None:
    browser = pages.client()
    import benchdash.asgi  # noqa: F401  (a web worker's start-up)

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for name, url, before in found:
        profile(browser, name, url, before, args.seconds, args.top)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
