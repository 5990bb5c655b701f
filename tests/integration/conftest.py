"""Fixtures for tests that run real batches: a real Celery worker, a target on the
private MariaDB, and helpers to wait for a batch to finish."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connection

from benchdash.celery import app
from runs.models import FINISHED_STATUSES, Batch, LoadHost, Plan, Target
from tests import servers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def celery_worker(transactional_db: None) -> Iterator[None]:
    """A real Celery worker in a thread of the test process, consuming both queues."""
    with start_worker(
        app,
        pool="solo",
        concurrency=1,
        queues=["benchmarks", "celery"],
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield


class WorkerProcess:
    """A real `celery worker` process, for tests that kill it."""

    def __init__(self, log: Path) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BENCHDASH_DB_NAME": connection.settings_dict["NAME"],
        }
        self._log = log.open("ab")
        self.process = subprocess.Popen(
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
                "--loglevel=INFO",
                "-n",
                "benchdash@%h",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@pytest.fixture
def worker_process(transactional_db: None, tmp_path: Path) -> Iterator[Callable[[], WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start() -> WorkerProcess:
        worker = WorkerProcess(tmp_path / "worker.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture(scope="session")
def mariadb_nobinlog_server() -> Iterator[servers.PrivateMariaDB]:
    """A private MariaDB as Debian ships it: binary logging off."""
    server = servers.PrivateMariaDB(log_bin=False)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def free_port() -> int:
    return servers.free_port()


@pytest.fixture
def local_host(transactional_db: None) -> LoadHost:
    # Created by a migration; transactional tests flush it away after each test.
    return LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]


@pytest.fixture
def target(transactional_db: None, mariadb_server, mariadb_db: str) -> Target:
    return Target.objects.create(
        name="private-mariadb",
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_server.port,
        database=mariadb_db,
        user=mariadb_server.user,
        password=mariadb_server.password,
    )


@pytest.fixture
def make_plan(target: Target, local_host: LoadHost) -> Callable[..., Plan]:
    counter = iter(range(1000))

    def make(**fields: object) -> Plan:
        values: dict[str, object] = {
            "name": f"plan {next(counter)}",
            "target": target,
            "load_host": local_host,
            "test": "oltp_insert",
            "options": {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
            "threads": [1],
        }
        values.update(fields)
        return Plan.objects.create(**values)

    return make


def wait_for_batch(batch: Batch, timeout: float = 180) -> Batch:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch.refresh_from_db()
        if batch.status in FINISHED_STATUSES:
            return batch
        time.sleep(0.3)
    raise AssertionError(f"batch {batch.pk} still {batch.status} after {timeout}s")


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
