"""Where the benchmark worker's CPU goes, by function, with py-spy.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/profile_worker.py [--time 60] [--rate 250]

Starts what bench/overhead.py starts (a private MariaDB, a real worker process on the
environment's database and Redis), runs one one-cell batch of `oltp_read_only` (2 threads,
report interval 1 s) under `py-spy record` (which pauses the worker for each sample: the
shares hold, but take the worker's CPU time from bench/overhead.py, not from this run), and
prints, for benchdash's own functions, the share of the worker's busy samples spent
in them (inclusive: a function's callees count for it). Idle samples (blocked in a
read, a select or a sleep) are not recorded, so the shares are of CPU, not of time.
Writes the raw profile to bench/results/profile_worker.txt.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import delete_made, load, results_database, start_worker, stop_process  # noqa: E402
from bench.overhead import DATA, make_target, one_batch, prepare_tables  # noqa: E402
from tests.servers import PrivateMariaDB  # noqa: E402

# Where the worker's busy samples went, for before/after tables (docs/PERFORMANCE.md):
# (label, frames that mark it); "a@b" is a frame a under a frame b; the first match wins.
OTHER = "other (Celery and Django around the batch)"
BUCKETS = [
    ("store samples", ["samples_copy sink.py", "bulk_create query.py@flush sink.py"]),
    (
        "store counter readings",
        [
            "create query.py@_read counters.py",
            "bulk_create query.py@_write sink.py",
            "counters_copy sink.py",
        ],
    ),
    ("append raw log", ["_write_log sink.py", "update query.py@flush sink.py"]),
    # Since the heartbeat's writes became one statement: samples, readings, log and beats.
    ("store with the heartbeat (one statement)", ["run_write sink.py"]),
    (
        "publish live (Redis)",
        ["publish_sample live.py", "publish_lines live.py", "publish sink.py", "publish live.py"],
    ),
    ("cancel check", ["check heartbeat.py"]),
    ("heartbeat", ["_beat runner.py", "beat heartbeat.py"]),
    ("read counters from the target", ["_read counters.py", "_sample_until_stopped counters.py"]),
    ("parse lines", ["feed parser.py"]),
    ("build sample objects", ["_sample sink.py", "add sink.py"]),
    ("wait for output (select loop)", ["lines local.py", "read local.py"]),
    (
        "end of run (result, summary)",
        [
            "run_store_result run_results.py",
            "run_set_result run_results.py",
            "sampler_stop counters.py",
            "flush sink.py",
        ],
    ),
    (
        "start of batch (claim, preflight, environment, settings)",
        [
            "_claim runner.py",
            "_preflight runner.py",
            "batch_record_environment environment.py",
            "_apply_settings runner.py",
            "_settings_for runner.py",
            "publish_start live.py",
            "sampler_start counters.py",
        ],
    ),
]


def _names(stack: str) -> list[str]:
    return [
        x.split(" (")[0] + " " + x.split("(")[-1].split(":")[0].split("/")[-1]
        for x in stack.split(";")
    ]


def _bucket(ns: list[str]) -> str:
    for label, marks in BUCKETS:
        for m in marks:
            if "@" in m:
                a, b = m.split("@")
                if a in ns and b in ns and ns.index(b) < ns.index(a):
                    return label
            elif m in ns:
                return label
    return OTHER


def bucket_counts(path: str) -> tuple[collections.Counter[str], int]:
    """Busy samples of a profile by where they went (BUCKETS), and their total."""
    c: collections.Counter[str] = collections.Counter()
    tot = 0
    for line in Path(path).read_text().splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        tot += int(count)
        c[_bucket(_names(stack))] += int(count)
    return c, tot


def compare(paths: list[str]) -> None:
    """Print the busy samples of raw profiles side by side, by where they went."""
    counts = [bucket_counts(p) for p in paths]
    print("| where | " + " | ".join(f"{Path(p).stem}: samples (share)" for p in paths) + " |")
    print("|---" * (len(paths) + 1) + "|")
    for label in [b[0] for b in BUCKETS] + [OTHER]:
        cells = [f"{c[label]} ({100 * c[label] / total:.1f} %)" for c, total in counts]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| all busy samples | " + " | ".join(str(total) for _, total in counts) + " |")


def shares(collapsed: str) -> tuple[int, list[tuple[str, float]]]:
    """(busy samples, [(function, inclusive share)]) from py-spy's collapsed stacks."""
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        total += int(count)
        functions = {
            frame.split(" (")[0] + " (" + _file(frame) + ")" for frame in stack.split(";")[1:]
        }
        for function in functions:
            inclusive[function] += int(count)
    ours = [(f, n / total) for f, n in inclusive.most_common() if "runs/" in f]
    return total, ours


def _file(frame: str) -> str:
    where = frame.split(" (", 1)[-1].rstrip(")")
    path = where.rsplit(":", 1)[0]
    return path.split("site-packages/")[-1].replace(str(ROOT) + "/", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time", type=int, default=60)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "profile_worker.txt"))
    parser.add_argument("--compare", nargs="+", help="raw profiles to tabulate; no run")
    args = parser.parse_args()
    if args.compare:
        compare(args.compare)
        return
    django.setup()
    from runs.models import LoadHost, Plan

    with results_database():
        server = PrivateMariaDB(max_connections=100).start()
        tag = f"profile-{os.getpid()}"
        worker = None
        plan = target = None
        try:
            database = server.create_database("bench")
            prepare_tables(server, database)
            target = make_target(server, database, tag)
            local, _ = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})
            plan = Plan.objects.create(
                name=tag,
                target=target,
                load_host=local,
                test="oltp_read_only",
                options={**DATA, "time": args.time, "report-interval": 1},
                threads=[2],
                dataset_policy="existing",
                cleanup=False,
            )
            worker = start_worker(Path(tempfile.gettempdir()) / f"{tag}.log", name=tag)
            time.sleep(8)
            raw = Path(tempfile.gettempdir()) / f"{tag}.collapsed"
            spy = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "py-spy"),
                    "record",
                    "--pid", str(worker.pid),
                    "--rate", str(args.rate),
                    "--threads",
                    "--format", "raw",
                    "--output", str(raw),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(1)
            row = one_batch(plan, worker.pid)
            spy.send_signal(signal.SIGINT)  # py-spy writes its profile on Ctrl-C
            spy.wait(timeout=60)
        finally:
            if worker is not None:
                stop_process(worker)
            delete_made(plans=[plan] if plan else [], others=[target] if target else [])
            server.stop()
    collapsed = raw.read_text()
    Path(args.out).write_text(collapsed)
    total, ours = shares(collapsed)
    print(f"batch: {row}; load {load()}")
    print(f"busy samples: {total} at {args.rate}/s = {total / args.rate:.2f} s of CPU")
    print("| function | share of the worker's busy samples |")
    print("|---|---|")
    for function, share in ours[:25]:
        print(f"| `{function}` | {100 * share:.1f} % |")


if __name__ == "__main__":
    main()
