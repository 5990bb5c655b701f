"""One cell from one load host against the same cell from two: throughput, and what the
coordination costs (the wait at the start barrier, how far apart the hosts started).

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/multihost.py [--repeats 3] [--threads 4] [--time 10]

Needs root (network namespaces, as the tests make them: tests/netns.py): two load hosts as
namespaces with an sshd each, on a bridge of their own, and a private MariaDB listening
on that bridge. Two worker processes as `make start` runs them: the benchmark worker (solo)
and the drivers worker (threads). Each repeat runs the cell from one host and from both
(threads divided between them), in a shuffled order. Prints min / median / max over the
repeats and writes bench/results/multihost.json.

On a machine of two cores the hosts, the server and the workers share those cores: the
figures say what the coordination costs and that the sum is right, not how far a second
machine would carry a large server.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
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
    spread,
    start_worker,
    stop_process,
    write_result,
)
from tests.netns import TestNetwork  # noqa: E402
from tests.servers import PrivateMariaDB  # noqa: E402

DATA = {"tables": 1, "table-size": 10000}


def cell(plan: Any) -> dict[str, Any]:
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=600)
    run = batch.runs.get()
    if batch.status != "done":
        raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error or run.error}")
    coordination = run.summary.get("load_hosts") or {}
    return {
        "tps": run.summary["tps"],
        "p95_ms": run.summary.get("latency_pct_ms"),
        "barrier_wait_ms": coordination.get("barrier_wait_ms"),
        "start_skew_ms": coordination.get("start_skew_ms"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--time", type=int, default=10)
    args = parser.parse_args()
    why_not = TestNetwork.available()
    if why_not:
        raise SystemExit(why_not)
    django.setup()
    from runs.models import Plan, Target

    network = TestNetwork().start()
    server = None
    workers = []
    try:
        network.add_host()
        network.add_host()
        server = PrivateMariaDB(also_on=network.address, max_connections=100).start()
        server.create_database("sbtest")
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            workers = [
                start_worker(Path(tmp) / "worker.log", name="bench-multi"),
                start_worker(
                    Path(tmp) / "drivers.log",
                    name="bench-drivers",
                    queues="drivers",
                    pool="threads",
                    concurrency="4",
                ),
            ]
            from tests.helpers import namespace_load_hosts  # imports models

            hosts = namespace_load_hosts(network, f"bench-{os.getpid()}-ns")
            target = Target.objects.create(
                name=f"bench multihost {os.getpid()}",
                engine="mariadb",
                host=network.address,
                port=server.port,
                database="sbtest",
                user=server.user,
                password=server.password,
            )
            options = {"time": args.time, "report-interval": 1, **DATA}
            one = Plan.objects.create(
                name=f"bench one host {os.getpid()}", target=target, load_host=hosts[0],
                test="oltp_point_select", options=options, threads=[args.threads],
                dataset_policy="shared", cleanup=False,
            )  # fmt: skip
            two = Plan.objects.create(
                name=f"bench two hosts {os.getpid()}", target=target, load_host=hosts[0],
                test="oltp_point_select", options=options, threads=[args.threads],
                dataset_policy="shared", cleanup=False,
            )  # fmt: skip
            two.extra_load_hosts.set(hosts[1:])
            try:
                results = measure(one, two, args.repeats)
            finally:
                delete_made(plans=[one, two], others=[target, *hosts])
    finally:
        for worker in workers:
            stop_process(worker)
        if server is not None:
            server.stop()
        network.stop()
    report(results, args)


def measure(one: Any, two: Any, repeats: int) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {"one host": [], "two hosts": []}
    for _ in range(repeats):
        order = [("one host", one), ("two hosts", two)]
        random.shuffle(order)
        for label, plan in order:
            figures = cell(plan)
            figures["load"] = load()
            results[label].append(figures)
            print(label, figures, flush=True)
    return results


def report(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    summary: dict[str, Any] = {
        "when": datetime.now().isoformat(timespec="seconds"),
        "threads": args.threads,
        "time_s": args.time,
        "repeats": args.repeats,
    }
    for label, rows in results.items():
        figures = {
            name: [r[name] for r in rows if r[name] is not None]
            for name in ("tps", "p95_ms", "barrier_wait_ms", "start_skew_ms")
        }
        # One host has no barrier and no skew.
        summary[label] = {name: spread(values) for name, values in figures.items() if values}
        summary[label]["load"] = [r["load"] for r in rows]
    print(json.dumps(summary, indent=2))
    out = ROOT / "bench" / "results" / "multihost.json"
    write_result(out, {"summary": summary, "runs": results})


if __name__ == "__main__":
    main()
