"""What the benchmark worker costs: fixed CPU per batch, CPU per second of run.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/overhead.py [--durations 10,30,60] [--repeats 3] [--threads 2]

Starts a private MariaDB with binary logging (tests/servers.py) and a real Celery worker
process (solo pool, as `make start` runs it) on the results database and Redis named by
the environment, like the product. The database is created if missing (and then dropped
at the end); an existing one is only migrated, and the rows made here are deleted.

Each repeat runs one one-cell batch of `oltp_read_only` (2 threads, report interval 1 s,
an existing data set) per duration, in a shuffled order, and reads from /proc the CPU
time of the worker process itself and of its waited-for children (sysbench) over the
batch (the worker's from each thread's schedstat, in nanoseconds: /proc/<pid>/stat counts
in 10 ms ticks). A least-squares line through (duration, worker CPU) gives the fixed cost per batch
(intercept) and the cost per second of run (slope); the ratio is worker CPU / sysbench
CPU of the longest run. The fit carries the noise of the fixed cost (tens of ms from
one batch to the next on a loaded machine) into the slope, so the cost of a second is
also read directly: the worker's CPU per second while sysbench runs, its first and last
4 s left out, in each batch of 30 s and more ("steady"). Prints min / median / max over
the repeats and writes bench/results/overhead.json.

    .venv/bin/python bench/overhead.py --shipped [--repeats 3]

measures the benchmark worker `make start` runs (its queue, its flags, host metrics and
counters on, as shipped) instead of a worker started here, and writes
bench/results/overhead_shipped.json; the environment must name that installation's
database and Redis (the defaults do).

    .venv/bin/python bench/overhead.py --telemetry 30 [--repeats 3]

measures the host metrics alone instead (bench/_telemetry.py): the worker's CPU per
second of sampling (an SSH stream and this machine's /proc, parsed and encoded), and the
sampled host's (the remote shell loop and its sshd session), and writes
bench/results/telemetry_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import (  # noqa: E402
    ThreadsCPU,
    cpu_times,
    delete_made,
    load,
    results_database,
    spread,
    start_worker,
    stop_process,
    write_result,
)
from bench._telemetry import measure_once  # noqa: E402
from tests.servers import PrivateMariaDB  # noqa: E402

DATA = {"tables": 2, "table-size": 10000}
STEADY_SKIP_S = 4.0  # a run's start and end, left out of its steady figure


def prepare_tables(server: PrivateMariaDB, database: str) -> None:
    import subprocess

    from runs.sysbench.command import Connection, build_command

    connection = Connection(
        "mariadb", server.host, server.port, "", database, server.user, server.password
    )
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "sysbench.cfg"
        command = build_command(
            test="oltp_read_only",
            phase="prepare",
            options=DATA,
            connection=connection,
            config_path=str(config),
        )
        config.write_text(command.config_text)
        subprocess.run(command.argv, capture_output=True, check=True)


def make_target(server: PrivateMariaDB, database: str, name: str) -> Any:
    from runs.models import Target

    return Target.objects.create(
        name=name,
        engine="mariadb",
        host=server.host,
        port=server.port,
        database=database,
        user=server.user,
        password=server.password,
    )


def one_batch(plan: Any, worker_pid: int) -> dict[str, Any]:
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    load_before = load()
    own0, children0 = cpu_times(worker_pid)
    with ThreadsCPU(worker_pid) as worker_cpu:
        batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=900)
    own1, children1 = cpu_times(worker_pid)
    run = batch.runs.get()
    assert run.status == "done" and run.started_at and run.finished_at, run.error
    # While sysbench runs, past its first seconds and before its last: what a second of a
    # run costs, read directly rather than fitted through the batches' totals.
    steady = worker_cpu.ms_per_s_between(
        run.started_at.timestamp() + STEADY_SKIP_S, run.finished_at.timestamp() - STEADY_SKIP_S
    )
    return {
        "duration_s": plan.options["time"],
        "steady_ms_per_s": None if steady is None else round(steady, 3),
        "worker_cpu_s": round(worker_cpu.seconds, 4),
        "main_thread_cpu_s": round(worker_cpu.main_seconds, 4),
        "worker_cpu_ticks_s": round(own1 - own0, 3),
        "sysbench_cpu_s": round(children1 - children0, 3),
        "samples": run.samples.count(),
        # sysbench's own interval lines: a sample fewer than lines would be one lost
        "interval_lines": run.raw_log.count("] thds:"),
        "load_before": load_before,
        "load_after": load(),
    }


def shipped_worker_pid() -> int:
    """The Celery process of the benchmark worker `make start` keeps running: the one
    python process in the process group of its keep loop."""
    group = int((ROOT / "var" / "run" / "worker.pid").read_text())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        in_group = int(stat.rsplit(")", 1)[1].split()[2]) == group
        if in_group and b"celery" in cmdline and b"python" in cmdline.split(b"\0")[0]:
            return int(entry)
    raise SystemExit("overhead: no benchmark worker of `make start` is running")


def slope(rows: list[dict[str, Any]], key: str) -> tuple[float, float]:
    """Least squares of CPU (`key`, seconds) against run duration: (fixed ms, ms per second)."""
    xs = [float(r["duration_s"]) for r in rows]
    ys = [1000 * r[key] for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    per_s = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return my - per_s * mx, per_s


def fit(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The worker's fixed cost and cost per second, and the main thread's part of it."""
    fixed, per_s = slope(rows, "worker_cpu_s")
    _, main_per_s = slope(rows, "main_thread_cpu_s")
    longest = max(rows, key=lambda r: r["duration_s"])
    return {
        "fixed_ms": round(fixed, 1),
        "ms_per_s": round(per_s, 3),
        "main_thread_ms_per_s": round(main_per_s, 3),
        "other_threads_ms_per_s": round(per_s - main_per_s, 3),
        "ratio_longest_pct": round(100 * longest["worker_cpu_s"] / longest["sysbench_cpu_s"], 3),
    }


def steady_rows(repeats: list[dict[str, Any]]) -> list[float]:
    """The steady figure of each batch of 30 s or more (a shorter one has few seconds
    left once its start and end are taken off)."""
    rows = [row for r in repeats for row in r["rows"] if row["duration_s"] >= 30]
    return [row["steady_ms_per_s"] for row in rows if row["steady_ms_per_s"] is not None]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from runs.models import LoadHost, Plan

    server = PrivateMariaDB(max_connections=100).start()
    worker = None
    made: list[Any] = []
    plans: list[Any] = []
    tag = f"overhead-{os.getpid()}"
    try:
        database = server.create_database("bench")
        prepare_tables(server, database)
        target = make_target(server, database, tag)
        made.append(target)
        local, _ = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})
        for duration in args.durations:
            plans.append(
                Plan.objects.create(
                    name=f"{tag} {duration}s",
                    target=target,
                    load_host=local,
                    test="oltp_read_only",
                    options={**DATA, "time": duration, "report-interval": 1},
                    threads=[args.threads],
                    dataset_policy="existing",
                    cleanup=False,
                )
            )
        if args.shipped:
            worker_pid = shipped_worker_pid()
        else:
            worker = start_worker(Path(tempfile.gettempdir()) / f"{tag}.log", name=tag)
            worker_pid = worker.pid
            time.sleep(8)  # let the worker start and run its start-up sweep
        warm = Plan.objects.create(
            name=f"{tag} warm-up",
            target=target,
            load_host=local,
            test="oltp_read_only",
            options={**DATA, "time": 2, "report-interval": 1},
            threads=[args.threads],
            dataset_policy="existing",
            cleanup=False,
        )
        plans.append(warm)
        one_batch(warm, worker_pid)  # the worker's lazy imports and first connections
        repeats: list[dict[str, Any]] = []
        for repeat in range(args.repeats):
            rows = []
            for plan in random.sample(plans[:-1], len(plans) - 1):
                row = one_batch(plan, worker_pid)
                rows.append(row)
                print(f"repeat {repeat}: {json.dumps(row)}", flush=True)
            repeats.append({"rows": rows, **fit(rows)})
        return {
            "when": datetime.now().isoformat(timespec="seconds"),
            "args": {k: v for k, v in vars(args).items() if k != "out"},
            "repeats": repeats,
            "fixed_ms": spread([r["fixed_ms"] for r in repeats]),
            "ms_per_s": spread([r["ms_per_s"] for r in repeats]),
            "main_thread_ms_per_s": spread([r["main_thread_ms_per_s"] for r in repeats]),
            "other_threads_ms_per_s": spread([r["other_threads_ms_per_s"] for r in repeats]),
            "steady_ms_per_s": spread(steady_rows(repeats)),
            "ratio_longest_pct": spread([r["ratio_longest_pct"] for r in repeats]),
            "load": spread(
                [x for r in repeats for row in r["rows"] for x in row["load_before"][:1]]
            ),
        }
    finally:
        if worker is not None:
            stop_process(worker)
        delete_made(plans=plans, others=made)
        server.stop()


def markdown(result: dict[str, Any]) -> str:
    lines = ["| measure | min | median | max |", "|---|---|---|---|"]
    for key, label in (
        ("fixed_ms", "worker CPU fixed per batch (ms)"),
        ("ms_per_s", "worker CPU per second of run (ms/s)"),
        ("main_thread_ms_per_s", "  of which the main thread (ms/s)"),
        ("other_threads_ms_per_s", "  of which the other threads: counter sampler (ms/s)"),
        ("steady_ms_per_s", "worker CPU per second inside runs of 30 s and more (ms/s)"),
        ("ratio_longest_pct", "worker CPU / sysbench CPU, longest run (%)"),
        ("load", "1-min load average before each batch"),
    ):
        s = result[key]
        lines.append(f"| {label} | {s['min']:g} | {s['median']:g} | {s['max']:g} |")
    return "\n".join(lines)


TELEMETRY_FIGURES = (
    "worker_ssh_ms_per_s",
    "worker_local_ms_per_s",
    "sampled_host_ms_per_s",
    "sampled_host_pct_of_a_core",
)


def telemetry(args: argparse.Namespace) -> None:
    repeats = []
    for repeat in range(args.repeats):
        row = measure_once(args.telemetry)
        print(f"repeat {repeat}: {json.dumps(row)}", flush=True)
        repeats.append(row)
    result: dict[str, Any] = {
        "when": datetime.now().isoformat(timespec="seconds"),
        "args": {k: v for k, v in vars(args).items() if k != "out"},
        "repeats": repeats,
        **{key: spread([r[key] for r in repeats]) for key in TELEMETRY_FIGURES},
        "load": spread([os.getloadavg()[0]]),
    }
    write_result(ROOT / "bench" / "results" / "telemetry_overhead.json", result)
    for key in TELEMETRY_FIGURES:
        s = result[key]
        print(f"| {key} | {s['min']:g} | {s['median']:g} | {s['max']:g} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--durations", default="10,30,60")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", help="default: overhead.json, or overhead_shipped.json")
    parser.add_argument(
        "--telemetry", type=int, default=0, help="seconds: measure the host metrics alone"
    )
    parser.add_argument(
        "--shipped",
        action="store_true",
        help="measure the benchmark worker `make start` runs (var/run/worker.pid) instead of "
        "one started here; the environment must name that installation's database and Redis",
    )
    args = parser.parse_args()
    args.durations = [int(d) for d in args.durations.split(",")]
    django.setup()
    if args.telemetry:
        telemetry(args)
        return
    with results_database():
        result = measure(args)
    default = "overhead_shipped.json" if args.shipped else "overhead.json"
    write_result(args.out or ROOT / "bench" / "results" / default, result)
    print(markdown(result))


if __name__ == "__main__":
    main()
