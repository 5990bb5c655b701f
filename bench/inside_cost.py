"""What reading the server's waits and digests costs the server it watches.

    .venv/bin/python bench/inside_cost.py [--time 10] [--threads 2] [--interval 0.2]

PostgreSQL: a private PostgreSQL (tests/servers.py) with pg_stat_statements preloaded and
installed, oltp_read_write for --time seconds; beside it, on a connection of its own, the
wait sampler's query (runs/targets/inside.py, `waits_now`) every --interval seconds, as a
run's WaitSampler does, and the two pg_stat_statements snapshots of a run. The figure is
the CPU time of the sampler's backend (/proc/<pid>/stat) against the CPU time of every
process of the server over the same seconds.

MariaDB: a private MariaDB with performance_schema on; what one snapshot of the wait
summaries and the digests costs mariadbd in CPU (SNAPSHOTS of them back to back on an idle
server, from /proc), set against the server's CPU over an oltp_read_write run of --time
seconds: a run takes two.

Printed as Markdown and written to bench/results/inside_cost.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import write_result  # noqa: E402
from tests.servers import PrivateMariaDB, PrivatePostgres  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SNAPSHOTS = 50


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def tree_cpu_s(root: int) -> float:
    """CPU of a server's processes: the root and its children (PostgreSQL's backends)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == root or int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
    return total


def sysbench(driver: list[str], args: argparse.Namespace, phase: str) -> subprocess.Popen[bytes]:
    argv = ["sysbench", "oltp_read_write", *driver, "--tables=1", "--table-size=10000",
            f"--threads={args.threads}", f"--time={args.time}", phase]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def postgres(args: argparse.Namespace) -> dict[str, Any]:
    from runs import targets
    from runs.sysbench.command import Connection

    server = PrivatePostgres().start()
    try:
        with server.connect() as admin:
            admin.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        server.stop_server()
        server.start_again()
        with server.connect() as admin:
            admin.execute("CREATE DATABASE sb")
        with server.connect("sb") as admin:
            admin.execute("CREATE EXTENSION pg_stat_statements")
        driver = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={server.port}",
                  "--pgsql-user=postgres", "--pgsql-db=sb"]  # fmt: skip
        sysbench(driver, args, "prepare").wait()
        connection = Connection(
            engine="postgresql", host=server.host, port=server.port, socket="",
            database="sb", user=server.user, password="",
        )  # fmt: skip
        postmaster = int((server.datadir / "postmaster.pid").read_text().split()[0])
        with targets.connect(connection) as db:
            backend = int(db._scalar("SELECT pg_backend_pid()"))  # type: ignore[attr-defined]
            load = sysbench(driver, args, "run")
            time.sleep(1.0)  # its connections open
            server_before, mine_before = tree_cpu_s(postmaster), cpu_s(backend)
            started, looks = time.monotonic(), 0
            db.inside_snapshot()
            # read before sysbench ends: its backends' CPU leaves with them
            while time.monotonic() < started + args.time - 2.0 and load.poll() is None:
                db.waits_now()
                looks += 1
                time.sleep(args.interval)
            db.inside_snapshot()
            seconds = time.monotonic() - started
            server_s, mine_s = tree_cpu_s(postmaster) - server_before, cpu_s(backend) - mine_before
            load.wait()
    finally:
        server.stop()
    return {
        "seconds": round(seconds, 1),
        "looks": looks,
        "server_cpu_s": round(server_s, 2),
        "sampler_cpu_s": round(mine_s, 3),
        "share_pct": round(mine_s / server_s * 100, 3) if server_s else None,
    }


def mariadb(args: argparse.Namespace) -> dict[str, Any]:
    from runs import targets
    from runs.sysbench.command import Connection

    server = PrivateMariaDB(performance_schema=True).start()
    try:
        database = server.create_database("sb")
        driver = ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={server.port}",
                  "--mysql-user=bench", f"--mysql-password={server.password}",
                  f"--mysql-db={database}"]  # fmt: skip
        sysbench(driver, args, "prepare").wait()
        pid = int((server.dir / "mariadb.pid").read_text())
        connection = Connection(
            engine="mariadb", host=server.host, port=server.port, socket="",
            database=database, user=server.user, password=server.password,
        )  # fmt: skip
        before = cpu_s(pid)
        load = sysbench(driver, args, "run")
        load.wait()
        run_s = cpu_s(pid) - before
        with targets.connect(connection) as db:
            db.inside_snapshot()  # the digests' rows exist
            before, started = cpu_s(pid), time.monotonic()
            for _ in range(SNAPSHOTS):
                db.inside_snapshot()
            elapsed = (time.monotonic() - started) / SNAPSHOTS
            per_snapshot = (cpu_s(pid) - before) / SNAPSHOTS
    finally:
        server.stop()
    return {
        "server_cpu_s_per_run": round(run_s, 2),
        "snapshot_cpu_ms": round(per_snapshot * 1000, 3),
        "snapshot_wall_ms": round(elapsed * 1000, 3),
        "share_pct": round(2 * per_snapshot / run_s * 100, 4) if run_s else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--interval", type=float, default=0.2)
    args = parser.parse_args()
    django.setup()
    result = {"time_s": args.time, "threads": args.threads, "interval_s": args.interval,
              "postgres": postgres(args), "mariadb": mariadb(args)}  # fmt: skip
    pg, my = result["postgres"], result["mariadb"]
    print("| server | what | its CPU | server CPU | share |\n|---|---|---|---|---|")
    print(f"| PostgreSQL | {pg['looks']} looks at the waits + 2 snapshots | "
          f"{pg['sampler_cpu_s']} s | {pg['server_cpu_s']} s | {pg['share_pct']} % |")  # fmt: skip
    print(f"| MariaDB | 2 snapshots ({my['snapshot_cpu_ms']} ms CPU each) | "
          f"{2 * my['snapshot_cpu_ms'] / 1000:.3f} s | {my['server_cpu_s_per_run']} s | "
          f"{my['share_pct']} % |")  # fmt: skip
    write_result(ROOT / "bench" / "results" / "inside_cost.json", result)


if __name__ == "__main__":
    main()
