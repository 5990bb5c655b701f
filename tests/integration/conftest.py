"""Fixtures for tests that run real batches: worker processes, an ASGI server, and helpers
to wait for a batch to finish. The in-process worker, the target and make_plan are in
tests/conftest.py, shared with tests/api."""

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
from runs.models import FINISHED_STATUSES, Batch
from tests import servers

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_celery_workers(transactional_db: None) -> Iterator[None]:
    """Two benchmark slots, so that two batches could run at once but for the locks."""
    with start_worker(
        app,
        pool="threads",
        concurrency=2,
        queues=["benchmarks", "celery"],
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield


class WorkerProcess:
    """A real `celery worker` process, for tests that kill it."""

    def __init__(self, log: Path) -> None:
        env = _test_env()
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

    def terminate(self) -> int:
        """SIGTERM, as a deploy or systemd sends it; returns the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)

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


class AsgiServer:
    """benchdash under uvicorn, as `make start` serves it, on the test database."""

    def __init__(self, log: Path) -> None:
        self.port = servers.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "benchdash.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=_test_env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        wait_until(self._answers, timeout=30, what=f"uvicorn on port {self.port}")

    def _answers(self) -> bool:
        import socket

        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        self._log.close()


def _test_env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BENCHDASH_DB_NAME": connection.settings_dict["NAME"],
    }


@pytest.fixture
def asgi_server(transactional_db: None, tmp_path: Path) -> Iterator[AsgiServer]:
    server = AsgiServer(tmp_path / "uvicorn.log")
    yield server
    server.stop()


@pytest.fixture
def session_cookie(transactional_db: None, django_user_model) -> dict[str, str]:
    """The session cookie of a logged-in user, for HTTP clients outside Django's test client."""
    from django.test import Client

    user = django_user_model.objects.create_user("watcher", password="watcher-pass-1")
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


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
