"""A suite as one plan against its tests as separate plans: the wall time of each.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/suite_wall_time.py [--tests 4] [--table-size 20000] [--time 2]

A private MariaDB and a real worker process (as `make start` runs it). The suite is the
first --tests items of the built-in microbenchmark suite (runs/sysbench/suites.py) with two
values of sync_binlog, 1 thread, one repeat: one batch, one data set prepared for all its
tests. The other way, the way before a tests axis: one plan per test, each with the same
settings axis, each batch preparing and dropping its own data set. The two ways alternate,
--repeats times. Prints min / median / max and writes bench/results/suite_wall_time.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
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
from tests.servers import PrivateMariaDB  # noqa: E402

OUT = ROOT / "bench" / "results" / "suite_wall_time.json"


def timed(plans: list[Any]) -> dict[str, float]:
    """Launch the plans one after another, each when the last ended: the wall time from
    the first launch to the last end, and the prepares' own seconds."""
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    started = time.monotonic()
    prepare_s = 0.0
    for plan in plans:
        batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=1800)
        if batch.status != "done":
            raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error}")
        prepare_s += sum(_seconds(s) for s in batch.stages if s["kind"] == "prepare")
    return {"wall_s": round(time.monotonic() - started, 1), "prepare_s": round(prepare_s, 1)}


def _seconds(stage: dict[str, Any]) -> float:
    from datetime import datetime

    return (
        datetime.fromisoformat(stage["finished_at"]) - datetime.fromisoformat(stage["started_at"])
    ).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", type=int, default=4, help="items of the suite (at most 12)")
    parser.add_argument("--table-size", type=int, default=20000)
    parser.add_argument("--time", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    django.setup()
    from runs.models import LoadHost, Plan, Target
    from runs.sysbench.suites import microbenchmarks

    server = PrivateMariaDB().start()
    worker = None
    made: list[Any] = []
    try:
        server.create_database("sbtest")
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            worker = start_worker(Path(tmp) / "worker.log", name="bench-suite")
            host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
            target = Target.objects.create(
                name=f"bench suite {os.getpid()}", engine="mariadb", host="127.0.0.1",
                port=server.port, database="sbtest", user=server.user, password=server.password,
            )  # fmt: skip
            tests = microbenchmarks()[: args.tests]
            common: dict[str, Any] = {
                "target": target, "load_host": host, "threads": [1], "repeats": 1,
                "server_settings": {"sync_binlog": ["1", "0"]},
                "options": {"time": args.time, "report-interval": 1, "tables": 1,
                            "table-size": args.table_size},
            }  # fmt: skip
            suite = Plan.objects.create(
                name=f"bench suite {os.getpid()}", test=tests[0]["test"], tests=tests, **common
            )
            apart = [
                Plan.objects.create(
                    name=f"bench apart {os.getpid()} {i}",
                    test=item["test"],
                    options={**common["options"], **item["options"]},
                    **{k: v for k, v in common.items() if k != "options"},
                )
                for i, item in enumerate(tests)
            ]
            made = [suite, *apart]
            try:
                results: dict[str, list[dict[str, float]]] = {"suite": [], "apart": []}
                for _ in range(args.repeats):
                    results["suite"].append(timed([suite]))
                    results["apart"].append(timed(apart))
            finally:
                delete_made(plans=made, others=[target])
    finally:
        if worker is not None:
            stop_process(worker)
        server.stop()
    figures = {
        "tests": [t["name"] for t in tests],
        "table_size": args.table_size,
        "time_s": args.time,
        "cells": len(tests) * 2,
        "suite_wall_s": spread([r["wall_s"] for r in results["suite"]]),
        "apart_wall_s": spread([r["wall_s"] for r in results["apart"]]),
        "suite_prepare_s": spread([r["prepare_s"] for r in results["suite"]]),
        "apart_prepare_s": spread([r["prepare_s"] for r in results["apart"]]),
        "load_at_start": load(),
    }
    print(
        f"suite {figures['suite_wall_s']['median']} s (prepares "
        f"{figures['suite_prepare_s']['median']} s) against {len(tests)} plans "
        f"{figures['apart_wall_s']['median']} s (prepares {figures['apart_prepare_s']['median']} s)"
    )
    write_result(OUT, figures)


if __name__ == "__main__":
    main()
