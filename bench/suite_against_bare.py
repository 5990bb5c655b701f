"""The built-in suite as one batch against bare sysbench on a freshly prepared table each.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/suite_against_bare.py [--time 4] [--repeats 3] [--table-size 10000]

A private MariaDB and a real worker process (as `make start` runs it). benchdash runs the
twelve items of the microbenchmark suite (runs/sysbench/suites.py) with
innodb_flush_log_at_trx_commit 1 and 2, 1 thread, --repeats repeats: one batch, the readers
and writers sharing one prepared data set as the suite does. Then sysbench alone, with the
same options, on a table prepared afresh before every run, flush 1 and 2 taking turns, half
its repeats (rounded up) before the batch and as many after it. For
each item: the flush 2 / flush 1 ratio of geometric means both ways, and the rows of the
table before and after each run (the batch's own count, and a count around each bare run).
Writes bench/results/suite_against_bare.json.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
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

OUT = ROOT / "bench" / "results" / "suite_against_bare.json"
FLUSH = "innodb_flush_log_at_trx_commit"
TPS_RE = re.compile(r"transactions:\s+\d+\s+\(([\d.]+) per sec\.\)")


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def ratio(by_flush: dict[str, list[float]]) -> float | None:
    one, two = geomean(by_flush.get("1", [])), geomean(by_flush.get("2", []))
    return round(two / one, 3) if one and two else None


def rows(server: PrivateMariaDB) -> int:
    db = server.root_connect("sbtest")
    try:
        cursor = db.cursor()
        cursor.execute("SELECT COUNT(*) FROM sbtest1")
        return int(cursor.fetchone()[0])
    finally:
        db.close()


def set_flush(server: PrivateMariaDB, flush: str) -> None:
    db = server.root_connect()
    try:
        db.cursor().execute(f"SET GLOBAL {FLUSH} = {int(flush)}")
    finally:
        db.close()


def sysbench(server: PrivateMariaDB, test: str, command: str, options: dict[str, Any]) -> str:
    """sysbench as root over the private server's socket: no password on its command line."""
    from runs.sysbench.values import render_value

    argv = [
        "sysbench", test, "--db-driver=mysql", f"--mysql-socket={server.socket}",
        "--mysql-user=root", "--mysql-db=sbtest",
        *(f"--{name}={render_value(value)}" for name, value in options.items()),
        command,
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def bare(server: PrivateMariaDB, items: list[dict[str, Any]], common: dict[str, Any],
         repeats: int) -> dict[str, Any]:  # fmt: skip
    """Each item, flush 1 and 2 taking turns, each run on a table prepared just before it."""
    print(f"bare sysbench, {repeats} repeats", flush=True)
    found: dict[str, Any] = {}
    for item in items:
        tps: dict[str, list[float]] = {"1": [], "2": []}
        counts: list[dict[str, Any]] = []
        for _ in range(repeats):
            for flush in ("1", "2"):
                set_flush(server, flush)
                table = {k: common[k] for k in ("tables", "table-size")}
                sysbench(server, "oltp_common", "cleanup", table)
                sysbench(server, "oltp_common", "prepare", table)
                before = rows(server)
                out = sysbench(server, item["test"], "run", {**common, **item["options"]})
                tps[flush].append(float(TPS_RE.search(out).group(1)))  # type: ignore[union-attr]
                counts.append({"flush": flush, "before": before, "after": rows(server)})
        found[item["name"]] = {"tps": tps, "ratio": ratio(tps), "rows": counts}
    return found


def merged(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    both: dict[str, Any] = {}
    for name, one in first.items():
        other = second[name]
        tps = {flush: one["tps"][flush] + other["tps"][flush] for flush in ("1", "2")}
        both[name] = {"tps": tps, "ratio": ratio(tps), "rows": one["rows"] + other["rows"]}
    return both


def suite(server: PrivateMariaDB, items: list[dict[str, Any]], common: dict[str, Any],
          repeats: int) -> dict[str, Any]:  # fmt: skip
    """One batch of the whole suite through benchdash's worker."""
    from runs.analysis.axes import cell_axes, cell_axes_order
    from runs.models import LoadHost, Plan, Target
    from runs.services import batches
    from tests.helpers import wait_for_batch

    host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    target = Target.objects.create(
        name=f"bench suite-bare {os.getpid()}", engine="mariadb", host="127.0.0.1",
        port=server.port, database="sbtest", user=server.user, password=server.password,
    )  # fmt: skip
    plan = Plan.objects.create(
        name=f"bench suite-bare {os.getpid()}", test=items[0]["test"], tests=items,
        target=target, load_host=host, threads=[1], repeats=repeats,
        server_settings={FLUSH: ["1", "2"]}, options=common,
    )  # fmt: skip
    try:
        batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=3600)
        if batch.status != "done":
            raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error}")
        keys = cell_axes_order(items, {})["test"]
        names = dict(zip(keys, (i["name"] for i in items), strict=True))
        found: dict[str, Any] = {
            i["name"]: {"tps": {"1": [], "2": []}, "rows": []} for i in items
        }  # fmt: skip
        for run in batch.runs.order_by("position"):
            entry = found[names[cell_axes(run.cell_key)["test"]]]
            flush = str(run.settings[FLUSH])
            entry["tps"][flush].append(run.summary["tps"])
            entry.setdefault("runs", []).append(_run_facts(run))
            counted = run.environment.get("rows") or {}
            if counted.get("exact"):
                before = sum(counted["before"].values())
                after = sum(counted["after"].values())
                entry["rows"].append({"flush": flush, "before": before, "after": after})
        for entry in found.values():
            entry["ratio"] = ratio(entry["tps"])
        return {"batch": batch.pk, "warnings": batch.warnings, "items": found}
    finally:
        delete_made(plans=[plan], others=[target])


def _run_facts(run: Any) -> dict[str, Any]:
    """What shows whether a run's commits waited for the log: the setting read back and
    the server's own counts over the run."""
    deltas = run.counters.get("deltas") or run.counters
    counts = {
        name: value
        for name, value in deltas.items()
        if isinstance(value, (int, float))
        and any(
            word in name.lower()
            for word in ("fsync", "com_commit", "rows_updated", "rows_inserted", "rows_deleted")
        )
    }
    return {
        "position": run.position, "tps": run.summary.get("tps"),
        "verified": run.verified_settings, "counts": counts,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--time", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--table-size", type=int, default=10000)
    parser.add_argument("--family", default="", help="only the suite's items of this family")
    args = parser.parse_args()
    django.setup()
    from runs.sysbench.suites import microbenchmarks

    items = [i for i in microbenchmarks() if args.family in ("", i["family"])]
    common = {"time": args.time, "report-interval": 1, "tables": 1, "table-size": args.table_size}
    server = PrivateMariaDB().start()
    worker = None
    try:
        server.create_database("sbtest")
        load_before = load()
        # Bare sysbench before and after the batch (half its repeats each): the machine's
        # fsyncs slow down and speed up with what else runs on it, and a drift over the
        # batch's minutes then weighs on both ways alike.
        before = bare(server, items, common, max(1, args.repeats // 2 + 1))
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            worker = start_worker(Path(tmp) / "worker.log", name="bench-suite-bare")
            through_benchdash = suite(server, items, common, args.repeats)
        alone = merged(before, bare(server, items, common, max(1, args.repeats // 2 + 1)))
    finally:
        if worker is not None:
            stop_process(worker)
        server.stop()
    table = [
        {
            "item": item["name"],
            "suite_ratio": through_benchdash["items"][item["name"]]["ratio"],
            "bare_ratio": alone[item["name"]]["ratio"],
            "suite_rows": through_benchdash["items"][item["name"]]["rows"],
            "bare_rows": alone[item["name"]]["rows"],
        }
        for item in items
    ]
    for row in table:
        print(f"{row['item']:16} suite {row['suite_ratio']}  bare {row['bare_ratio']}")
    write_result(
        OUT,
        {
            "time_s": args.time,
            "repeats": args.repeats,
            "table_size": args.table_size,
            "load_before": load_before,
            "load_after": load(),
            "ratios": table,
            "suite": through_benchdash,
            "bare": alone,
        },
    )


if __name__ == "__main__":
    main()
