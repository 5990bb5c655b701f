"""A plan over two servers against the same cells as two plans of one server each: the
wall time of the one two-target batch (cells interleaved across the servers round by
round) beside the two single batches' added up, and what the servers measured.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/targets_axis.py [--repeats 2] [--time 3]

Two private MariaDB servers (tests/servers.py), one worker process as `make start` runs
it. Each plan: oltp_point_select at 1 and 2 threads, innodb_flush_log_at_trx_commit 1
and 2 (applied, read back and restored on each server), `--repeats` rounds, a data set
of 10,000 rows prepared and dropped on each server. Prints the figures and writes
bench/results/targets_axis.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
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
from tests.servers import PrivateMariaDB  # noqa: E402


def batch_of(plan: Any) -> dict[str, Any]:
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=900)
    if batch.status != "done":
        raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error}")
    assert batch.started_at is not None and batch.finished_at is not None
    runs = list(batch.runs.select_related("target").order_by("position"))
    measured = sum(r.duration_s or 0 for r in runs)
    tps: dict[str, list[float]] = {}
    for run in runs:
        name = run.target.name if run.target else "?"
        tps.setdefault(name, []).append(run.summary["tps"])
    return {
        "batch": batch.pk,
        "runs": len(runs),
        "wall_s": round((batch.finished_at - batch.started_at).total_seconds(), 1),
        "runs_s": round(measured, 1),
        "tps_median": {name: sorted(v)[len(v) // 2] for name, v in tps.items()},
        "load": load(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--time", type=int, default=3)
    args = parser.parse_args()
    django.setup()
    from runs.models import LoadHost, Plan, PlanServer, Target

    servers = [PrivateMariaDB().start(), PrivateMariaDB(log_bin=False).start()]
    worker = None
    made: list[Any] = []
    plans: list[Any] = []
    try:
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            worker = start_worker(Path(tmp) / "worker.log", name="bench-targets")
            local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
            targets = []
            for i, server in enumerate(servers):
                server.create_database("sbtest")
                row = Target.objects.create(
                    name=f"bench-{'ab'[i]}-{os.getpid()}", engine="mariadb", host="127.0.0.1",
                    port=server.port, database="sbtest", user=server.user,
                    password=server.password,
                )  # fmt: skip
                targets.append(row)
            made = list(targets)
            fields = {
                "load_host": local, "test": "oltp_point_select", "threads": [1, 2],
                "options": {"time": args.time, "report-interval": 1, "tables": 1,
                            "table-size": 10000},
                "server_settings": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
                "repeats": args.repeats,
            }  # fmt: skip
            for i, target in enumerate(targets):
                plans.append(Plan.objects.create(name=f"bench one {i} {os.getpid()}",
                                                 target=target, **fields))  # fmt: skip
            both = Plan.objects.create(name=f"bench both {os.getpid()}", target=targets[0],
                                       **fields)  # fmt: skip
            PlanServer.objects.create(plan=both, target=targets[1], position=1)
            plans.append(both)
            figures = {
                "one server a": batch_of(plans[0]),
                "one server b": batch_of(plans[1]),
                "both servers": batch_of(both),
            }
            delete_made(plans=plans, others=made)
    finally:
        if worker is not None:
            stop_process(worker)
        for server in servers:
            server.stop()
    singles = figures["one server a"]["wall_s"] + figures["one server b"]["wall_s"]
    summary = {
        "repeats": args.repeats,
        "time_s": args.time,
        "two single batches, wall s": round(singles, 1),
        "one two-target batch, wall s": figures["both servers"]["wall_s"],
        "batches": figures,
    }
    print(json.dumps(summary, indent=2))
    write_result(ROOT / "bench" / "results" / "targets_axis.json", summary)


if __name__ == "__main__":
    main()
