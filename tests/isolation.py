"""What keeps test processes apart: xdist's workers from each other, and two runs on one
machine (two checkouts, two people) from each other.

A run is one `pytest` command; its id (`r` + the pid of its first process) is in its
database names, after which pytest-django puts xdist's `_gwN`. A slot is one pytest
process that runs tests (the only one of a serial run, or one xdist worker): it has a
Redis of its own (a private redis-server on a free port, so broker queues, locks and live
channels are never shared), and a work and a mail directory of its own (batch folders are
named by primary keys, which every worker's database hands out from 1).

Set up by tests/settings.py before benchdash's settings read the environment. The
processes the tests start (Celery workers, uvicorn) load those settings too: they find
their slot in the environment they inherit and use its Redis and directories."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests import servers

RUN_VAR = "BENCHDASH_TEST_RUN"
SLOT_VAR = "BENCHDASH_TEST_SLOT"


@dataclass
class Slot:
    name: str
    dir: Path
    redis: servers.PrivateRedis


_slot: Slot | None = None


def set_up(var_dir: Path) -> None:
    """Point this process's environment at its slot: made here for a pytest process,
    inherited by the processes it starts."""
    global _slot
    run = os.environ.setdefault(RUN_VAR, f"r{os.getpid()}")
    name = f"{run}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    if os.environ.get(SLOT_VAR) == name:
        return  # started by the tests: the slot is its parent's
    root = var_dir / "tests"
    _remove_gone_slots(root)
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "owner.pid").write_text(f"{os.getpid()}\n")
    # The port is chosen now, the server started only when a test needs more than pure
    # code (start_redis): the pure tier starts no server.
    redis = servers.PrivateRedis(port=servers.free_port())
    _slot = Slot(name, directory, redis)
    os.environ.update(
        {
            SLOT_VAR: name,
            "BENCHDASH_REDIS_URL": redis.url,
            "BENCHDASH_WORK_DIR": str(directory / "work"),
            "BENCHDASH_EMAIL_FILE_PATH": str(directory / "mail"),
        }
    )


def test_database(name: str) -> str:
    """The test database of this run for benchdash's database `name`."""
    return f"test_{name}_{os.environ[RUN_VAR]}"


def start_redis() -> None:
    """This slot's Redis, started once. Should another program have taken its port in the
    meantime, it starts on another one and everything is pointed there."""
    if _slot is None or _slot.redis.running():
        return
    _slot.redis.start()
    if os.environ["BENCHDASH_REDIS_URL"] != _slot.redis.url:
        from django.conf import settings

        from benchdash.celery import app

        os.environ["BENCHDASH_REDIS_URL"] = _slot.redis.url
        settings.REDIS_URL = settings.CELERY_BROKER_URL = _slot.redis.url
        app.conf.update(broker_url=_slot.redis.url)


def tear_down() -> None:
    if _slot is not None:
        _slot.redis.stop()
        shutil.rmtree(_slot.dir, ignore_errors=True)


def _remove_gone_slots(root: Path) -> None:
    """The folders of slots whose process is gone (a run killed before its teardown)."""
    for old in root.glob("r*"):
        owner = servers._read_pid(old / "owner.pid")
        if owner is not None and not servers._pid_alive(owner):
            shutil.rmtree(old, ignore_errors=True)


def drop_databases_of_gone_runs(connection_settings: Mapping[str, object], name: str) -> list[str]:
    """Drop the test databases of `name` left by runs whose first process is gone and
    that nobody is connected to; another live run's are never touched. Returns those
    dropped."""
    import psycopg

    pattern = re.compile(rf"test_{re.escape(name)}_r(\d+)(_gw\d+)?")
    dropped = []
    with psycopg.connect(
        host=str(connection_settings["HOST"]),
        port=str(connection_settings["PORT"]),
        user=str(connection_settings["USER"]),
        password=str(connection_settings["PASSWORD"] or ""),
        dbname="postgres",
        autocommit=True,
        connect_timeout=10,
    ) as db:
        rows = db.execute(
            "SELECT datname, (SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname)"
            " FROM pg_database d WHERE datname LIKE %s",
            (f"test_{name}_r%",),
        ).fetchall()
        for database, connections in rows:
            found = pattern.fullmatch(database)
            if found is None or connections or _run_alive(int(found[1])):
                continue
            db.execute(f'DROP DATABASE IF EXISTS "{database}"')  # a name matched above
            dropped.append(database)
    return dropped


def _run_alive(pid: int) -> bool:
    return servers._pid_alive(pid) and "pytest" in servers._cmdline(pid)


def connected_to(
    connection_settings: Mapping[str, object], database: str, besides: int = 0
) -> list[str]:
    """Who is connected to `database` besides the caller's connections (this one and the
    backend `besides`), one line each:
    the process that holds the socket (this pytest process with its live threads, or
    another program) and the last statement it ran. A connection left here makes the
    run's teardown fail to drop the database ("being accessed by other users")."""
    import psycopg

    with psycopg.connect(
        host=str(connection_settings["HOST"]),
        port=str(connection_settings["PORT"]),
        user=str(connection_settings["USER"]),
        password=str(connection_settings["PASSWORD"] or ""),
        dbname="postgres",
        autocommit=True,
        connect_timeout=10,
    ) as db:
        rows = db.execute(
            "SELECT pid, client_port, state, backend_start, left(query, 200)"
            " FROM pg_stat_activity WHERE datname = %s AND pid NOT IN (pg_backend_pid(), %s)",
            (database, besides),
        ).fetchall()
    return [
        f"backend {pid} ({state}, since {started:%H:%M:%S}) for {_port_owner(port)}: {query!r}"
        for pid, port, state, started, query in rows
    ]


def _port_owner(port: int | None) -> str:
    """The local process whose TCP socket has source port `port` (read from /proc)."""
    if port is None or port < 0:
        return "a Unix socket"
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{fields[9]}]")
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        if any(_link(fd) in inodes for fd in _entries(fd_dir)):
            return _describe_process(int(fd_dir.parent.name))
    return f"port {port}, no process of this machine found"


def _entries(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []  # gone, or not ours to read


def _link(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""  # closed meanwhile (the listing's own descriptor)


def _describe_process(pid: int) -> str:
    if pid != os.getpid():
        return f"process {pid}: {servers._cmdline(pid)[:200]}"
    import threading

    names = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    return f"this pytest process {pid}, its threads now: {', '.join(names) or 'none'}"
