"""What sampling the server's status counters costs the benchmark it watches.

    .venv/bin/python bench/counters_cost.py [--pairs 6] [--time 10] [--threads 2]

Starts a private MariaDB with binary logging (tests/servers.py), prepares one sbtest table
and, on the results database the environment names (created if missing, and then dropped;
otherwise only the rows made here are deleted), runs the same oltp_point_select command
again and again:

- bare: sysbench alone;
- sampled: sysbench while runs.targets.counters.CounterSampler reads SHOW GLOBAL STATUS and
  SHOW ENGINE INNODB STATUS every second on a connection of its own, exactly as a batch
  does (the batch stores the readings in bulk with its heartbeat).

It also measures what one reading costs, which does not drown in the noise of a shared
machine: the server's CPU time (from /proc) and this process's CPU time per reading,
over READINGS readings taken back to back on an idle server.

Runs come in interleaved pairs (bare/sampled in a random order per pair, so that a drift
of the machine falls on both sides) and, as the noise reference, bare/bare pairs. The
figure is the per-pair relative difference of sysbench's own tps. Results are printed as
Markdown and written to bench/results/counters_cost.json.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import results_database, write_result  # noqa: E402
from tests.servers import PrivateMariaDB  # noqa: E402

TABLE_SIZE = 10_000
READINGS = 200
CLK_TCK = os.sysconf("SC_CLK_TCK")


def run_sysbench(executor: Any, connection: Any, phase: str, options: dict[str, Any]) -> str:
    from runs.sysbench.command import build_command

    process = executor.start(
        lambda config: build_command(
            test="oltp_point_select",
            phase=phase,
            options=options,
            connection=connection,
            config_path=config,
        )
    )
    lines = [line for line in process.lines(0.5) if line is not None]
    code = process.wait()
    if code != 0:
        raise SystemExit(f"sysbench {phase} exited with {code}:\n" + "\n".join(lines[-20:]))
    return "\n".join(lines)


def measure(executor: Any, connection: Any, options: dict[str, Any], run: Any | None) -> float:
    """tps of one run; with `run`, the counters are sampled into that run's rows."""
    from runs.sysbench.parser import parse_text
    from runs.targets.counters import CounterSampler

    sampler = None
    if run is not None:
        sampler = CounterSampler(run_id=run.pk, connection=connection, interval_s=1.0).start()
    try:
        text = run_sysbench(executor, connection, "run", options)
    finally:
        if sampler is not None:
            readings = sampler.stop()
            if sampler.error or len(readings) < 2:
                raise SystemExit(f"the sampler failed: {sampler.error or 'no readings'}")
    final = parse_text(text, 0).final
    assert final is not None, text
    return float(final.sql["tps"])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def reading_cost(connection: Any, run: Any, server_pid: int) -> dict[str, float]:
    """Milliseconds per reading: wall, this process's CPU (reading and parsing) and the
    server's CPU, over READINGS readings back to back."""
    from runs import targets
    from runs.targets.counters import CounterSampler

    sampler = CounterSampler(run_id=run.pk, connection=connection, interval_s=1.0)
    with targets.connect(connection) as db:
        sampler._read(db)  # connections and caches warm
        wall, cpu, server = time.monotonic(), time.thread_time(), cpu_seconds(server_pid)
        for _ in range(READINGS):
            sampler._read(db)
        wall = time.monotonic() - wall
        cpu = time.thread_time() - cpu
        server = cpu_seconds(server_pid) - server
    return {
        "readings": READINGS,
        "wall_ms": 1000 * wall / READINGS,
        "client_cpu_ms": 1000 * cpu / READINGS,
        "server_cpu_ms": 1000 * server / READINGS,
        "values_per_reading": len(sampler.readings[-1][1]),
    }


def relative(a: float, b: float) -> float:
    return (a - b) / b


def summary(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--time", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    load_before = os.getloadavg()

    django.setup()
    with results_database():
        result = run_pairs(args, load_before)
    write_result(ROOT / "bench" / "results" / "counters_cost.json", result)
    print(markdown(result))


def run_pairs(args: argparse.Namespace, load_before: tuple[float, ...]) -> dict[str, Any]:
    from runs import targets
    from runs.loadhosts import LocalExecutor
    from runs.models import Batch, LoadHost, Run, Target

    rng = random.Random(args.seed)
    name = f"counters-cost-{os.getpid()}"
    server = PrivateMariaDB().start()
    try:
        server.create_database("sbtest")
        target = Target.objects.create(
            name=name,
            engine="mariadb",
            host=server.host,
            port=server.port,
            database="sbtest",
            user=server.user,
            password=server.password,
        )
        load_host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
        batch = Batch.objects.create(
            target=target, load_host=load_host, params={}, seed=0, launched_by="cli"
        )
        connection = targets.connection_of(target)
        executor = LocalExecutor()
        dataset = {"tables": 1, "table-size": TABLE_SIZE}
        run_sysbench(executor, connection, "prepare", {**dataset, "threads": 1})
        options = {
            **dataset,
            "threads": args.threads,
            "time": args.time,
            "report-interval": 1,
        }
        measure(executor, connection, {**options, "time": 3}, None)  # warm the buffer pool

        position = 0

        def new_run() -> Any:
            nonlocal position
            position += 1
            return Run.objects.create(
                batch=batch, position=position, round=0, cell_key="bench", threads=args.threads
            )

        sampled_pairs: list[dict[str, Any]] = []
        noise_pairs: list[dict[str, float]] = []
        for i in range(args.pairs):
            order = ["bare", "sampled"]
            rng.shuffle(order)
            tps = {
                kind: measure(
                    executor, connection, options, new_run() if kind == "sampled" else None
                )
                for kind in order
            }
            sampled_pairs.append({"order": order, **tps})
            first = measure(executor, connection, options, None)
            second = measure(executor, connection, options, None)
            noise_pairs.append({"first": first, "second": second})
            print(f"pair {i + 1}: {order} {tps}; bare/bare {first:.1f} {second:.1f}", flush=True)
        assert server._process is not None
        cost_per_reading = reading_cost(connection, new_run(), server._process.pid)
    finally:
        server.stop()
        Batch.objects.filter(target__name=name).delete()
        Target.objects.filter(name=name).delete()

    cost = [relative(p["sampled"], p["bare"]) for p in sampled_pairs]
    noise = [relative(p["second"], p["first"]) for p in noise_pairs]
    result = {
        "when": datetime.now().isoformat(timespec="seconds"),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "test": "oltp_point_select",
        "threads": args.threads,
        "time_s": args.time,
        "table_size": TABLE_SIZE,
        "pairs": sampled_pairs,
        "noise_pairs": noise_pairs,
        "cost_per_reading": cost_per_reading,
        "sampled_vs_bare": summary(cost),
        "bare_vs_bare": summary(noise),
    }
    return result


def markdown(r: dict[str, Any]) -> str:
    def pct(x: float) -> str:
        return f"{x * 100:+.1f} %"

    s, n, c = r["sampled_vs_bare"], r["bare_vs_bare"], r["cost_per_reading"]
    rows = [
        "| pair | order | bare tps | sampled tps | sampled vs bare | bare/bare |",
        "|---|---|---|---|---|---|",
    ]
    for i, (p, q) in enumerate(zip(r["pairs"], r["noise_pairs"], strict=True), 1):
        rows.append(
            f"| {i} | {' then '.join(p['order'])} | {p['bare']:.1f} | {p['sampled']:.1f} | "
            f"{pct(relative(p['sampled'], p['bare']))} | {pct(relative(q['second'], q['first']))} |"
        )
    return "\n".join(
        [
            f"{r['test']}, {r['threads']} threads, {r['time_s']} s per run, "
            f"{r['cpus']} CPUs, load average before {r['load_average_before']}",
            "",
            *rows,
            "",
            f"sampled vs bare: mean {pct(s['mean'])}, median {pct(s['median'])}, "
            f"sd {s['stdev'] * 100:.1f} points",
            f"bare vs bare (noise): mean {pct(n['mean'])}, median {pct(n['median'])}, "
            f"sd {n['stdev'] * 100:.1f} points",
            f"one reading ({c['values_per_reading']} values, {c['readings']} back to back): "
            f"{c['wall_ms']:.2f} ms wall, {c['client_cpu_ms']:.2f} ms CPU here, "
            f"{c['server_cpu_ms']:.2f} ms CPU in the server",
            f"load average after {r['load_average_after']}",
        ]
    )


if __name__ == "__main__":
    main()
