"""benchdash under uvicorn for the benchmarks, as `make start` serves it, on the database
and Redis of the environment; and what a process held at its peak.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A fresh uvicorn process: its peak memory (VmHWM) is this measurement's alone."""

    def __init__(self, log: str = "/tmp/bench-uvicorn.log", env: dict[str, str] | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        with open(log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "benchdash.asgi:application",
                 "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
            )  # fmt: skip
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError("uvicorn did not start")

    def memory_kb(self, field: str = "VmHWM") -> int:
        """VmHWM: the most resident memory the process held so far; VmRSS: now."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise RuntimeError(f"no {field}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def session_cookie(username: str = "bench") -> dict[str, str]:
    from django.contrib.auth.models import User
    from django.test import Client

    user = User.objects.get_or_create(username=username)[0]
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


def api_token(username: str = "bench") -> str:
    from django.contrib.auth.models import User

    from runs.services import tokens

    user = User.objects.get_or_create(username=username)[0]
    return tokens.token_create(user=user, name="bench", expires_in=None)[1]


def spread(values: list[float]) -> str:
    return f"{min(values):,.1f} / {statistics.median(values):,.1f} / {max(values):,.1f}"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def run_child(argv: list[str], env: dict[str, str] | None = None) -> bytes:
    """Runs a command of this checkout with more environment; returns its output."""
    done = subprocess.run(
        argv, cwd=ROOT, stdout=subprocess.PIPE, env={**os.environ, **(env or {})}, check=True
    )
    return done.stdout
