"""benchdash's own processes under test, started apart from pytest: a Celery worker
process (for the tests that kill it) and uvicorn serving the ASGI application, both on
the test database."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from django.db import connection

from tests import servers
from tests.helpers import wait_until

ROOT = Path(__file__).resolve().parents[1]


class WorkerProcess:
    """A real `celery worker` process, for tests that kill it."""

    def __init__(
        self,
        log: Path,
        name: str = "benchdash",
        env: dict[str, str] | None = None,
        nofile: int | None = None,
    ) -> None:
        """`nofile`: the worker's open-file limit (soft and hard), as a service's
        LimitNOFILE= would set it."""
        env = {**test_env(), **(env or {})}
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
                f"{name}@%h",
                # As scripts/start runs its workers.
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_child_setup(nofile),
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


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _child_setup(nofile: int | None = None) -> Callable[[], None]:
    """Run in the child before it starts: it ends with pytest (a pytest killed before its
    fixtures' teardown left a worker that took the next run's tasks from the same Redis
    db), and with `nofile`, its open-file limit (soft and hard)."""

    def setup() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    return setup


class AsgiServer:
    """benchdash under uvicorn (benchdash/serve.py), as `make start` serves it, on the test
    database."""

    def __init__(self, log: Path, env: dict[str, str] | None = None, workers: int = 1) -> None:
        self.port = servers.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchdash.serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(workers),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env={**test_env(), **(env or {})},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_child_setup(),
        )
        self._log_path = log
        # A bound, not a timing: with two suites side by side on 2 cores, importing Django
        # and the application took over 30 s; a server that dies is told at once anyway.
        wait_until(self._answers, timeout=120, what=f"uvicorn on port {self.port}")

    def _answers(self) -> bool:
        code = self.process.poll()
        if code is not None:  # no use waiting for a server that is gone: say why
            tail = self._log_path.read_text(errors="replace")[-2000:]
            raise AssertionError(f"uvicorn exited with {code} before answering: {tail}")
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        self._log.close()


def test_env() -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BENCHDASH_DB_NAME": connection.settings_dict["NAME"],
    }
