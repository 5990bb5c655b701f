"""What benchdash costs the benchmark it runs.

    .venv/bin/python bench/overhead.py [--pairs 5] [--time 20] [--threads 2]

Starts a private MariaDB with binary logging (tests/servers.py), a database of its own in
the shared PostgreSQL (benchdash_bench) and a real Celery worker process, then measures:

(a) CPU seconds of the worker process during a run (parsing, storing samples, publishing
    them) divided by the CPU seconds of sysbench itself (the worker's waited-for children);
(b) tps of a run through the worker divided by tps of the same sysbench command run bare,
    over interleaved pairs, next to bare/bare pairs as the noise reference;
(c) per-cell scheduling overhead of a batch: (batch wall time - sum of sysbench's own
    total time - prepare and cleanup time) / cells.

Results are printed as Markdown and written to bench/results/overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
os.environ["BENCHDASH_DB_NAME"] = "benchdash_bench"
os.environ["BENCHDASH_REDIS_URL"] = "redis://127.0.0.1:6379/14"

import django  # noqa: E402

from tests.servers import PrivateMariaDB  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def setup_database() -> None:
    subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-q",
            "-c",
            "DROP DATABASE IF EXISTS benchdash_bench",
        ],
        check=True,
    )
    subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-q",
            "-c",
            "CREATE DATABASE benchdash_bench",
        ],
        check=True,
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)


def start_worker(log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "benchdash",
            "worker",
            "-Q",
            "benchmarks,celery",
            "--pool=solo",
            "--loglevel=WARNING",
            "-n",
            "bench@%h",
        ],
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def cpu_times(pid: int) -> tuple[float, float]:
    """(own CPU seconds, CPU seconds of waited-for children) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / CLK_TCK, (cutime + cstime) / CLK_TCK


def make_plan(name: str, target: Any, options: dict, threads: list[int], **extra: Any) -> Any:
    from runs.models import LoadHost, Plan

    local = LoadHost.objects.get(name="local")
    return Plan.objects.create(
        name=name,
        target=target,
        load_host=local,
        test="oltp_read_only",
        options=options,
        threads=threads,
        **extra,
    )


def run_batch(plan: Any, timeout: float = 900) -> Any:
    from runs.models import FINISHED_STATUSES
    from runs.services import batches

    batch = batches.batch_launch(plan=plan, launched_by="cli")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch.refresh_from_db()
        if batch.status in FINISHED_STATUSES:
            return batch
        time.sleep(0.2)
    raise RuntimeError(f"batch {batch.pk} did not finish")


def bare_tps(server: PrivateMariaDB, database: str, options: dict, threads: int) -> float:
    """The same sysbench run, started by hand: the reference."""
    from runs.sysbench.command import Connection, build_command
    from runs.sysbench.parser import parse_text

    connection = Connection(
        "mariadb", server.host, server.port, "", database, server.user, server.password
    )
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "sysbench.cfg"
        command = build_command(
            test="oltp_read_only",
            phase="run",
            options={**options, "threads": threads},
            connection=connection,
            config_path=str(config),
        )
        config.write_text(command.config_text)
        out = subprocess.run(command.argv, capture_output=True, text=True, check=True)
    report = parse_text(out.stdout, 0).final
    assert report is not None
    return report.sql["tps"]


def prepare_tables(server: PrivateMariaDB, database: str, options: dict) -> None:
    from runs.sysbench.command import Connection, build_command

    connection = Connection(
        "mariadb", server.host, server.port, "", database, server.user, server.password
    )
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "sysbench.cfg"
        command = build_command(
            test="oltp_read_only",
            phase="prepare",
            options=options,
            connection=connection,
            config_path=str(config),
        )
        config.write_text(command.config_text)
        subprocess.run(command.argv, capture_output=True, check=True)


def measure(args: argparse.Namespace) -> dict:
    from runs.models import Target

    server = PrivateMariaDB(max_connections=100).start()
    worker = None
    try:
        database = server.create_database("bench")
        target = Target.objects.create(
            name="bench-mariadb",
            engine="mariadb",
            host=server.host,
            port=server.port,
            database=database,
            user=server.user,
            password=server.password,
        )
        data = {"tables": 2, "table-size": 10000}
        run_options = {**data, "time": args.time, "report-interval": 1}
        prepare_tables(server, database, data)
        worker = start_worker(Path(tempfile.gettempdir()) / "bench-worker.log")
        time.sleep(5)  # let the worker start and sweep

        # (a) and (b): interleaved worker/bare pairs, and bare/bare pairs
        worker_runs, pairs, noise = [], [], []
        for i in range(args.pairs):
            plan = make_plan(
                f"overhead {i}",
                target,
                run_options,
                [args.threads],
                dataset_policy="existing",
                cleanup=False,
            )
            own0, children0 = cpu_times(worker.pid)
            batch = run_batch(plan)
            own1, children1 = cpu_times(worker.pid)
            run = batch.runs.get()
            assert run.status == "done", run.error
            through = run.summary["tps"]
            bare = bare_tps(server, database, run_options, args.threads)
            bare2 = bare_tps(server, database, run_options, args.threads)
            worker_runs.append({"own_cpu_s": own1 - own0, "sysbench_cpu_s": children1 - children0})
            pairs.append(through / bare)
            noise.append(bare2 / bare)
            print(
                f"pair {i}: worker {through:.1f} tps, bare {bare:.1f}, bare again {bare2:.1f}",
                flush=True,
            )

        # (c) a small matrix batch with prepare, several cells and cleanup
        matrix_plan = make_plan(
            "overhead matrix",
            target,
            {**data, "time": 3, "report-interval": 1},
            [1, 2],
            server_settings={"innodb_flush_log_at_trx_commit": ["1", "2"]},
            repeats=2,
        )
        server.execute(f"DROP TABLE IF EXISTS {database}.sbtest1, {database}.sbtest2")
        batch = run_batch(matrix_plan)
        return {
            "when": datetime.now().isoformat(timespec="seconds"),
            "load_average_before": os.getloadavg(),
            "cpu": cpu_summary(worker_runs),
            "tps_ratio": spread(pairs),
            "bare_bare_ratio": spread(noise),
            "scheduling": scheduling(batch),
            "args": vars(args),
        }
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=60)
        server.stop()


def cpu_summary(runs: list[dict]) -> dict:
    ratios = [r["own_cpu_s"] / r["sysbench_cpu_s"] for r in runs]
    return {"per_run": runs, "ratio": spread(ratios)}


def spread(values: list[float]) -> dict:
    return {
        "n": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def scheduling(batch: Any) -> dict:
    runs = list(batch.runs.all())
    wall = (batch.finished_at - batch.started_at).total_seconds()
    sysbench_s = sum(r.summary["total_time_s"] for r in runs)
    steps_s = sum(
        (
            datetime.fromisoformat(s["finished_at"]) - datetime.fromisoformat(s["started_at"])
        ).total_seconds()
        for s in batch.steps
    )
    return {
        "cells": len(runs),
        "batch_wall_s": wall,
        "sysbench_total_s": sysbench_s,
        "prepare_and_cleanup_s": steps_s,
        "overhead_per_cell_s": (wall - sysbench_s - steps_s) / len(runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--time", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    setup_database()
    django.setup()
    results = measure(args)
    out = ROOT / "bench" / "results" / "overhead.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
