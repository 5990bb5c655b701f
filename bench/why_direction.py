"""Does the why panel's predicted direction ever contradict a confident measurement?

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/why_direction.py [--batches 10] [--time 12] [--burners 6]
                                            [--until 12:08]

Issue 49 item 2. A private MariaDB 10.11 (binary log and performance_schema on) and a
private PostgreSQL (tests/servers.py), each batch through a real worker (as `make start`
runs it), oltp_insert at one thread, one run of --time seconds a cell (1 s of warmup:
the verdict compares single runs on their interval samples):

- MariaDB: innodb_flush_log_at_trx_commit 1, 2 x sync_binlog 0, 1; against flush=1
  sync_binlog=0: flush 1 vs 2 (at sync_binlog=0) and sync_binlog 0 vs 1 (at flush=1);
- PostgreSQL: synchronous_commit on vs off.

Each round runs both batches twice: on the machine as it is (load ~1, other work
permitting) and beside --burners CPU burners this script starts and stops itself
(`while True: pass`, each ending by itself after 15 minutes whatever happens to this
script). Per batch and comparison: the measured ratio with its verdict and 95 % interval
(the results page's), the model's predicted ratio, its interval and direction, the
server host's run queue, and whether the prediction contradicts a confident measurement
(both directions said, and opposite). Rounds stop at --batches, or when --until (UTC)
has passed. Written to bench/results/why_direction.json after each batch.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
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
from tests.servers import PrivateMariaDB, PrivatePostgres, PrivateRedis  # noqa: E402

FLUSH, SYNC, COMMIT = "innodb_flush_log_at_trx_commit", "sync_binlog", "synchronous_commit"
OUT = ROOT / "bench" / "results" / "why_direction.json"
BURN = "import time\nend = time.monotonic() + 900\nwhile time.monotonic() < end: pass"
# (comparison, baseline cell, other cell): the cells' settings
MARIADB = (
    ("flush 1 vs 2 (MariaDB, sync_binlog=0)", {FLUSH: "1", SYNC: "0"}, {FLUSH: "2", SYNC: "0"}),
    ("sync_binlog 0 vs 1 (MariaDB, flush=1)", {FLUSH: "1", SYNC: "0"}, {FLUSH: "1", SYNC: "1"}),
)
POSTGRES = (("synchronous_commit on vs off (PostgreSQL)", {COMMIT: "on"}, {COMMIT: "off"}),)


@contextlib.contextmanager
def burners(count: int) -> Iterator[None]:
    """`count` processes that spin on a CPU while in the block."""
    spinning = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]
    try:
        time.sleep(2 if count else 0)  # the run queue up before the batch starts
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def run_batch(plan: Any) -> Any:
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    return wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=900)


def compared(batch: Any, comparisons: tuple[Any, ...], load_label: str) -> list[dict[str, Any]]:
    """Each comparison of the batch as the results page has it: the verdict and the why."""
    from runs.services.answers.results import batch_results, batch_results_runs

    read = batch_results_runs(batch=batch)

    def index(settings: dict[str, str]) -> int:
        return next(
            i for i, s in enumerate(read.series)
            if all(s.settings.get(k) == v for k, v in settings.items())
        )  # fmt: skip

    rows = []
    for name, base, other in comparisons:
        found = batch_results(batch=batch, baseline=index(base), read=read)
        key = read.series[index(other)].key
        label = next(s["label"] for s in found.series if s["key"] == key)
        why = next(w for w in found.why if w["other"]["label"] == label)
        verdict = next(v for v in found.verdicts if v["series_key"] == key)
        rows.append(row(name, load_label, batch, why, verdict, read))
    return rows


def row(
    name: str, load_label: str, batch: Any, why: dict[str, Any], verdict: dict[str, Any], read: Any
) -> dict[str, Any]:
    measured = verdict["verdict"] if verdict["verdict"] in ("faster", "slower") else ""
    predicted = why.get("predicted_direction") or ""  # "" before this work: no interval
    runq = [
        host.get("runq")
        for run in read.figures
        for host in (run.host_summary or {}).get("hosts") or []
        if host.get("role") == "server"
    ]
    return {
        "comparison": name,
        "load": load_label,
        "batch": batch.pk,
        "status": batch.status,
        "server_runq": [round(r, 2) for r in runq if isinstance(r, int | float)],
        "loadavg": load(),
        "measured_ratio": why["measured_ratio"],
        "measured_verdict": verdict["verdict"],
        "measured_low": verdict["ratio_low"],
        "measured_high": verdict["ratio_high"],
        "measured_basis": verdict["basis"],
        "predicted_ratio": why["predicted_ratio"],
        "predicted_low": why.get("predicted_low"),
        "predicted_high": why.get("predicted_high"),
        "predicted_direction": predicted,
        "explained": why["explained"],
        # the goal: a direction said by the model that a confident measure contradicts
        "contradicts": bool(measured)
        and predicted in ("faster", "slower")
        and predicted != measured,
        "text": why["text"],
        "fsync_times": why.get("fsync_times"),
    }


def tally(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per comparison and load: batches, confident measures, directions said, agreements,
    contradictions, "cannot tell"s."""
    table = []
    for key in dict.fromkeys((r["comparison"], r["load"]) for r in rows):
        mine = [r for r in rows if (r["comparison"], r["load"]) == key]
        confident = [r for r in mine if r["measured_verdict"] in ("faster", "slower")]
        told = [r for r in mine if r["predicted_direction"] in ("faster", "slower")]
        table.append({
            "comparison": key[0], "load": key[1], "batches": len(mine),
            "measured_confident": len(confident),
            "predicted_a_direction": len(told),
            "cannot_tell": sum(r["predicted_direction"] == "cannot tell" for r in mine),
            "agree_with_confident": sum(
                r["predicted_direction"] == r["measured_verdict"] for r in confident
            ),
            "contradicts_confident": sum(r["contradicts"] for r in mine),
            "server_runq_median": _median([q for r in mine for q in r["server_runq"]]),
        })  # fmt: skip
    return table


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    return values[len(values) // 2] if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--time", type=int, default=12)
    parser.add_argument("--burners", type=int, default=6)
    parser.add_argument("--until", default="", help="UTC HH:MM: start no round after it")
    args = parser.parse_args()
    # a broker and a results database of its own: no other worker on the machine takes
    # its batches, nor its worker theirs
    redis = PrivateRedis().start()
    os.environ["BENCHDASH_REDIS_URL"] = redis.url
    os.environ["BENCHDASH_DB_NAME"] = f"bench_why_direction_{os.getpid()}"
    try:
        measure(args)
    finally:
        redis.stop()


def measure(args: argparse.Namespace) -> None:
    django.setup()
    from runs.models import LoadHost, Plan, Target

    until = None
    if args.until:
        hour, minute = (int(x) for x in args.until.split(":"))
        until = datetime.now(UTC).replace(hour=hour, minute=minute, second=0)
    started = {"when": datetime.now(UTC).isoformat(timespec="seconds"), "loadavg": load()}
    maria, pg = PrivateMariaDB(performance_schema=True), PrivatePostgres()
    maria.start()
    pg.start()
    worker, rows = None, []
    try:
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            worker = start_worker(Path(tmp) / "worker.log", name="bench-why-direction")
            local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
            maria.create_database("sbtest")
            with pg.connect() as admin:
                admin.execute("CREATE DATABASE sbtest")
            tag = f"bench-why-direction-{os.getpid()}"
            targets = [
                Target.objects.create(
                    name=f"{tag}-mariadb", engine="mariadb", host="127.0.0.1", port=maria.port,
                    database="sbtest", user=maria.user, password=maria.password,
                ),
                Target.objects.create(
                    name=f"{tag}-postgresql", engine="postgresql", host="127.0.0.1",
                    port=pg.port, database="sbtest", user=pg.user, password="",
                ),
            ]  # fmt: skip
            options = {"time": args.time, "report-interval": 1, "tables": 1, "table-size": 10000}
            plans = [
                Plan.objects.create(
                    name=f"{tag} {target.engine}",
                    target=target,
                    load_host=local,
                    test="oltp_insert",
                    threads=[1],
                    repeats=1,
                    warmup_s=1,
                    options=options,
                    server_settings=settings,
                )
                for target, settings in (
                    (targets[0], {FLUSH: ["1", "2"], SYNC: ["0", "1"]}),
                    (targets[1], {COMMIT: ["on", "off"]}),
                )
            ]
            try:
                for round_ in range(args.batches):
                    for label, count in (
                        ("no burners", 0),
                        (f"{args.burners} burners", args.burners),
                    ):
                        if until is not None and datetime.now(UTC) >= until:
                            break
                        with burners(count):
                            for plan, comparisons in ((plans[0], MARIADB), (plans[1], POSTGRES)):
                                began = time.monotonic()
                                batch = run_batch(plan)
                                found = compared(batch, comparisons, label)
                                rows += found
                                for r in found:
                                    print(
                                        f"round {round_ + 1} {label} {r['comparison']}: "
                                        f"measured {r['measured_ratio']:.3f} "
                                        f"{r['measured_verdict']}; predicted "
                                        f"{r['predicted_direction']} {r['predicted_low']} to "
                                        f"{r['predicted_high']}; runq {r['server_runq']}; "
                                        f"{time.monotonic() - began:.0f} s",
                                        flush=True,
                                    )
                                save(args, started, rows)
            finally:
                delete_made(plans=plans, others=targets)
    finally:
        if worker is not None:
            stop_process(worker)
        maria.stop()
        pg.stop()
    print(json.dumps(tally(rows), indent=2))


def save(args: argparse.Namespace, started: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    write_result(
        OUT,
        {
            "time_s": args.time, "burners": args.burners, "started": started,
            "tally": tally(rows), "batches": rows,
        },
    )  # fmt: skip


if __name__ == "__main__":
    main()
