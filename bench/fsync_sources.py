"""Every source of the time of one fsync, per configuration, against strace on the server.

    .venv/bin/python bench/fsync_sources.py [--repeats 3] [--time 8] [--rate 150]

A private MariaDB 10.11 with performance_schema on (tests/servers.py): oltp_insert at one
thread for --time seconds at --rate transactions a second (0: as fast as it goes) under
innodb_flush_log_at_trx_commit 1 and 2 x sync_binlog 0 and 1; then a private PostgreSQL
with track_wal_io_timing on, synchronous_commit on. Each configuration --repeats times,
in interleaved rounds. During each run, beside each other:

- strace -f -T -y on the server's process (tests/strace.py): every fsync and fdatasync
  of the redo log (ib_logfile0) or the WAL (pg_wal/), the binary log, the data files;
- the server's own timers: performance_schema (redo log: no row on 10.8+; binary log;
  data files), pg_stat_wal.wal_sync_time;
- /proc/diskstats: the device's ms per cache flush (the lower bound);
- the sync probe as the worker runs it (runs/loadhosts/sync_probe.py, the server's log
  site read from the server by runs/targets/sync_probe.py, summed up by
  runs/analysis/host_metrics/sync_probe.py), with its own cost.

For each class and source: the ms per fsync (strace: median and mean; the server's
timers: mean; the probe: median, its 95 % interval, and mean, after a pause and at once
after another sync, and the time the product takes from them at the pace of the server's
own syncs), and the product's figure against strace's. Printed as a table and written
to bench/results/fsync_sources.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

django.setup()

from bench._harness import load, write_result  # noqa: E402
from runs.analysis.why.fsyncs import (  # noqa: E402
    BINLOG,
    DATA,
    REDO,
    WAL,
    ClassFsync,
    Fsyncs,
    run_fsyncs,
)
from runs.sysbench.command import Connection  # noqa: E402
from tests.servers import PrivateMariaDB, PrivatePostgres  # noqa: E402
from tests.strace import PROBE_EVERY_S, measured_run, of_files  # noqa: E402

FILES = {REDO: ("ib_logfile", "/pg_wal/"), BINLOG: ("/binlog.0",), DATA: (".ibd", "ibdata")}


def _of(found: Fsyncs, name: str) -> ClassFsync:
    # this table's "redo" row is the log of either engine: PostgreSQL names its own the WAL
    return found.get(WAL if name == REDO and WAL in found.classes else name)


def spread(times: list[float], transactions: int) -> dict[str, Any] | None:
    if not times:
        return None
    return {
        "n": len(times),
        "per_tx": round(len(times) / transactions, 3) if transactions else None,
        "median_ms": round(statistics.median(times), 4),
        "mean_ms": round(statistics.fmean(times), 4),
    }


def one_run(
    connection: Connection, pid: int, sysbench: list[str], args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    """One measured run: strace, the server's counters, the device, the probe."""
    run = measured_run(
        connection, pid, sysbench, seconds=args.time, rate=args.rate, out=tmp / "strace.txt"
    )
    server = run_fsyncs(run.counters)  # the server's own timers alone
    taken = run_fsyncs(run.counters, run.host())  # as the product takes them
    return {
        "tps": round(run.transactions / run.seconds, 1),
        "latency_ms": run.latency_ms,
        "strace": {c: spread(of_files(run.syncs, *FILES[c]), run.transactions) for c in FILES},
        "server": {c: _of(server, c).to_dict() for c in FILES},
        "taken": {c: _of(taken, c).to_dict() for c in FILES},
        "diskstats_ms": run.diskstats_ms,
        "probe": run.probe,
        "runnable": round(run.runnable, 2),
        "load": load(),
    }


def mariadb(args: argparse.Namespace, rounds: list[dict[str, Any]]) -> None:
    server = PrivateMariaDB(performance_schema=True).start()
    try:
        server.create_database("sbtest")
        connection = Connection(
            engine="mariadb", host=server.host, port=server.port, socket="",
            database="sbtest", user=server.user, password=server.password,
        )  # fmt: skip
        sysbench = ["sysbench", "oltp_insert", "--db-driver=mysql", "--mysql-host=127.0.0.1",
                    f"--mysql-port={server.port}", f"--mysql-user={server.user}",
                    f"--mysql-password={server.password}", "--mysql-db=sbtest",
                    "--tables=1", "--table-size=1000"]  # fmt: skip
        subprocess.run([*sysbench, "prepare"], check=True, capture_output=True, timeout=120)
        pid = int((server.dir / "mariadb.pid").read_text())

        def setting(flush: str, sync_binlog: str) -> Callable[[], None]:
            return lambda: server.execute(
                f"SET GLOBAL innodb_flush_log_at_trx_commit = {flush}",
                f"SET GLOBAL sync_binlog = {sync_binlog}",
            )

        configs = {
            f"MariaDB flush={f} sync_binlog={s}": setting(f, s)
            for f in ("1", "2")
            for s in ("0", "1")
        }
        measure(configs, connection, pid, sysbench, args, rounds)
    finally:
        server.stop()


def postgres(args: argparse.Namespace, rounds: list[dict[str, Any]]) -> None:
    server = PrivatePostgres().start()
    try:
        with server.connect() as admin:
            admin.execute("CREATE DATABASE sbtest")
            admin.execute("ALTER SYSTEM SET track_wal_io_timing = on")
            admin.execute("SELECT pg_reload_conf()")
        connection = Connection(
            engine="postgresql", host=server.host, port=server.port, socket="",
            database="sbtest", user=server.user, password="",
        )  # fmt: skip
        sysbench = ["sysbench", "oltp_insert", "--db-driver=pgsql", "--pgsql-host=127.0.0.1",
                    f"--pgsql-port={server.port}", "--pgsql-user=postgres", "--pgsql-db=sbtest",
                    "--tables=1", "--table-size=1000"]  # fmt: skip
        subprocess.run([*sysbench, "prepare"], check=True, capture_output=True, timeout=120)
        pid = int((server.datadir / "postmaster.pid").read_text().split()[0])
        configs = {"PostgreSQL synchronous_commit=on": lambda: None}
        measure(configs, connection, pid, sysbench, args, rounds)
    finally:
        server.stop()


def measure(
    configs: dict[str, Callable[[], None]],
    connection: Connection,
    pid: int,
    sysbench: list[str],
    args: argparse.Namespace,
    rounds: list[dict[str, Any]],
) -> None:
    """Each configuration once a round, --repeats rounds."""
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for name, apply in configs.items():
                apply()
                run = one_run(connection, pid, sysbench, args, Path(tmp))
                rounds.append({"config": name, "repeat": repeat + 1, **run})
                print(f"{name} #{repeat + 1}: {row_text(run)}", flush=True)


def row_text(run: dict[str, Any]) -> str:
    redo = run["strace"][REDO] or {}
    probe = run["probe"]
    return (
        f"redo strace median {redo.get('median_ms')} mean {redo.get('mean_ms')} "
        f"({redo.get('per_tx')}/trx); probe {probe.get('ms')} "
        f"[{probe.get('ci_low_ms')}, {probe.get('ci_high_ms')}]; "
        f"diskstats {run['diskstats_ms']}; runnable {run['runnable']}; load {run['load'][0]}"
    )


def agreement(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per configuration and class that fsyncs (≥ 0.5 per transaction): each source's
    median over the repeats, and the probe's median against strace's median and mean."""
    table = []
    for config in dict.fromkeys(r["config"] for r in rounds):
        mine = [r for r in rounds if r["config"] == config]
        for name in FILES:
            traced = [r["strace"][name] for r in mine if r["strace"][name]]
            if not traced or statistics.median(t["per_tx"] or 0 for t in traced) < 0.5:
                continue
            strace_median = statistics.median(t["median_ms"] for t in traced)
            strace_mean = statistics.median(t["mean_ms"] for t in traced)
            own = [r["server"][name]["ms"] for r in mine if r["server"][name]["ms"] is not None]
            probes = [r["probe"]["ms"] for r in mine if "ms" in r["probe"]]
            probe = statistics.median(probes) if probes else None
            # the probe's time at the pace of the server's syncs of the class
            paced = [r["taken"][name]["ms"] for r in mine
                     if r["taken"][name]["source"] == "sync probe"]  # fmt: skip
            taken = round(statistics.median(paced), 4) if paced else None
            row = {
                "config": config, "class": name,
                "per_tx": statistics.median(t["per_tx"] for t in traced),
                "strace_median_ms": round(strace_median, 4),
                "strace_mean_ms": round(strace_mean, 4),
                "server_ms": round(statistics.median(own), 4) if own else None,
                "server_source": next((r["server"][name]["source"] for r in mine
                                       if r["server"][name]["ms"] is not None), ""),
                "probe_ms": probe,
                "probe_streamed_ms": statistics.median(
                    r["probe"].get("streamed_ms") or 0 for r in mine
                ),
                "taken_ms": taken,
                "taken_vs_strace_median_pct": _pct(taken, strace_median),
                "diskstats_ms": statistics.median(
                    r["diskstats_ms"] for r in mine if r["diskstats_ms"]
                ),
                "probe_vs_strace_median_pct": _pct(probe, strace_median),
                "probe_vs_strace_mean_pct": _pct(probe, strace_mean),
                "server_vs_strace_mean_pct": _pct(
                    statistics.median(own) if own else None, strace_mean
                ),
                # each run's probe against its own strace, and those of the runs whose
                # run queue stayed within the cores (docs/host-metrics.md: why)
                "runnable": [r["runnable"] for r in mine],
                "taken_vs_strace_each_pct": _each(mine, name),
                "taken_vs_strace_quiet_pct": _each(
                    [r for r in mine if r["runnable"] <= (os.cpu_count() or 1)], name
                ),
            }  # fmt: skip
            table.append(row)
    return table


def _each(runs: list[dict[str, Any]], name: str) -> list[float | None]:
    """Each run's probe time as the product takes it against its own strace median."""
    return [
        _pct(r["taken"][name]["ms"], r["strace"][name]["median_ms"])
        for r in runs
        if r["strace"][name] and r["taken"][name]["source"] == "sync probe"
    ]


def _pct(value: float | None, reference: float) -> float | None:
    return round(100 * (value / reference - 1), 1) if value is not None and reference else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--time", type=int, default=8)
    parser.add_argument("--rate", type=int, default=150, help="sysbench --rate; 0: unlimited")
    args = parser.parse_args()
    started_load = load()
    rounds: list[dict[str, Any]] = []
    mariadb(args, rounds)
    postgres(args, rounds)
    table = agreement(rounds)
    print(json.dumps(table, indent=2))
    costs = [r["probe"]["cost"] for r in rounds if r["probe"].get("cost")]
    write_result(
        ROOT / "bench" / "results" / "fsync_sources.json",
        {
            "repeats": args.repeats, "time_s": args.time, "rate": args.rate,
            "probe_every_s": PROBE_EVERY_S, "load_at_start": started_load,
            "table": table,
            "probe_cost": {
                "cpu_pct_of_a_core": statistics.median(c["cpu_pct"] for c in costs),
                "syncs_s": statistics.median(c["syncs_s"] for c in costs),
                "kb_s": statistics.median(c["kb_s"] for c in costs),
            } if costs else None,
            "runs": rounds,
        },
    )  # fmt: skip


if __name__ == "__main__":
    main()
