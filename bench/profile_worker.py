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
from bench.overhead import DATA, one_batch, prepare_tables  # noqa: E402
from tests.servers import PrivateMariaDB  # noqa: E402


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
    args = parser.parse_args()
    django.setup()
    from runs.models import LoadHost, Plan, Target

    with results_database():
        server = PrivateMariaDB(max_connections=100).start()
        tag = f"profile-{os.getpid()}"
        worker = None
        plan = target = None
        try:
            database = server.create_database("bench")
            prepare_tables(server, database)
            target = Target.objects.create(
                name=tag,
                engine="mariadb",
                host=server.host,
                port=server.port,
                database=database,
                user=server.user,
                password=server.password,
            )
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
