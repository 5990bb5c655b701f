"""Record a private PostgreSQL's counters over oltp_insert runs, for the why panel's pure
tests (tests/fixtures/recorded/why_postgres.json).

    .venv/bin/python bench/capture_pg_counters.py [--repeats 2] [--time 2]

A private PostgreSQL (tests/servers.py) with track_wal_io_timing on: oltp_insert at one
thread for --time seconds under synchronous_commit on and off, --repeats times each in
interleaved rounds. Each run: the counter summary the sampler stores on `Run.counters`
(runs/targets/counters.py counters_summary over a reading before and one after, with the
engine the sampler records), sysbench's tps and average latency.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

django.setup()

from runs import targets  # noqa: E402
from runs.sysbench.command import Connection  # noqa: E402
from runs.targets.counters import counters_summary, settled_counters  # noqa: E402
from tests.servers import PrivatePostgres  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "recorded" / "why_postgres.json"


def one_run(connection: Connection, sysbench: list[str], seconds: int) -> dict[str, Any]:
    with targets.connect(connection) as db:
        before, started = db.status_counters(), time.monotonic()
        done = subprocess.run(
            [*sysbench, "--threads=1", f"--time={seconds}", "run"],
            capture_output=True, text=True, timeout=seconds + 120, check=True,
        )  # fmt: skip
        ended = time.monotonic()
        after = settled_counters(db, [(0.0, before)])
    transactions = int(re.search(r"transactions:\s+(\d+)", done.stdout)[1])  # type: ignore[index]
    report = {"sql": {"transactions": transactions}}
    counters = counters_summary([(0.0, before), (ended - started, after)], [report])
    counters["engine"] = "postgresql"  # as the sampler records it
    return {
        "counters": counters,
        "tps": float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", done.stdout)[1]),  # type: ignore[index]
        "latency_avg_ms": float(re.search(r"avg:\s+([\d.]+)", done.stdout)[1]),  # type: ignore[index]
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--time", type=int, default=2)
    args = parser.parse_args()
    server = PrivatePostgres().start()
    runs = []
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
        for repeat in range(args.repeats):
            for commit in ("on", "off"):
                with server.connect() as admin:
                    admin.execute(f"ALTER SYSTEM SET synchronous_commit = {commit}")
                    admin.execute("SELECT pg_reload_conf()")
                run = one_run(connection, sysbench, args.time)
                runs.append({"synchronous_commit": commit, "repeat": repeat + 1, **run})
                print(commit, repeat + 1, run["tps"], run["latency_avg_ms"], flush=True)
    finally:
        server.stop()
    OUT.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
