"""scripts/keep, the restart loop around each long-lived process of `make start`: a killed
process is started again and its log says so, what it left behind is ended first (a killed
web leaves no worker holding its port); scripts/stop ends the loop and its process.
Started as scripts/start starts them (in a session of their own, the loop's pid in
VAR_DIR/run/<name>.pid), in a temporary VAR_DIR."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import redis
from django.db import connection

from runs.execution import liveness
from tests.helpers import wait_until
from tests.processes import ROOT
from tests.servers import PrivateRedis, free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

KEEP = str(ROOT / "scripts" / "keep")


class Kept:
    """`scripts/keep NAME COMMAND...` as scripts/start launches it."""

    def __init__(self, var_dir: Path, name: str, *command: str, env: dict[str, str]) -> None:
        (var_dir / "run").mkdir(parents=True, exist_ok=True)
        (var_dir / "log").mkdir(parents=True, exist_ok=True)
        self.log = var_dir / "log" / f"{name}.log"
        with self.log.open("ab") as out:
            self.loop = subprocess.Popen(
                [KEEP, name, *command], cwd=ROOT, env=env, stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        (var_dir / "run" / f"{name}.pid").write_text(f"{self.loop.pid}\n")

    def child(self) -> int | None:
        """The pid of the process the loop runs now (None while it pauses between two)."""
        found = subprocess.run(
            ["pgrep", "-P", str(self.loop.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        running = [int(pid) for pid in found if not _cmdline(int(pid)).startswith("sleep ")]
        return running[0] if running else None

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill_all(self) -> None:
        """The loop's whole session: its command leads a process group of its own."""
        subprocess.run(["pkill", "-KILL", "-s", str(self.loop.pid)], check=False)
        self.loop.wait(timeout=10)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _is_sleeper(pid: int | None, first: int) -> bool:
    """A new process of the sleeper's command, not the one killed."""
    return pid is not None and pid != first and "time.sleep(600)" in _cmdline(pid)


def _gone(pid: int) -> bool:
    return not _cmdline(pid)


def test_a_killed_process_is_started_again_and_its_log_says_so(tmp_path):
    kept = Kept(tmp_path, "sleeper", sys.executable, "-c", "import time; time.sleep(600)",
                env=dict(os.environ))  # fmt: skip
    try:
        wait_until(lambda: _is_sleeper(kept.child(), 0), timeout=30, what="the process to start")
        first = kept.child()
        assert first is not None
        os.kill(first, signal.SIGKILL)

        said = "keep: sleeper exited with code 137 (SIGKILL), restarting in 1 s"
        # the log line first: a child seen before it may be the loop's own shell at work
        wait_until(lambda: said in kept.output(), timeout=30, what="the loop to say so")
        wait_until(lambda: _is_sleeper(kept.child(), first), timeout=30, what="a new process")
        assert kept.loop.poll() is None
    finally:
        kept.kill_all()


@pytest.fixture
def beat_env(transactional_db: None, private_redis: PrivateRedis) -> dict[str, str]:
    """Beat on the test database, sending to a Redis of this test's own."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BENCHDASH_DB_NAME": connection.settings_dict["NAME"],
        "BENCHDASH_REDIS_URL": private_redis.url,
    }


def test_a_killed_beat_comes_back_and_stop_ends_the_loop_with_it(tmp_path, beat_env):
    celery = str(ROOT / ".venv" / "bin" / "celery")
    kept = Kept(tmp_path, "beat", celery, "-A", "benchdash", "beat", "--loglevel=INFO",
                env=beat_env)  # fmt: skip
    try:
        wait_until(lambda: "beat: Starting" in kept.output(), timeout=60, what="beat to start")
        first = kept.child()
        assert first is not None and "celery" in _cmdline(first)
        os.kill(first, signal.SIGKILL)

        wait_until(
            lambda: kept.output().count("beat: Starting") == 2, timeout=60, what="beat again"
        )
        second = kept.child()
        assert second not in (None, first)
        assert "keep: beat exited with code 137 (SIGKILL), restarting in 1 s" in kept.output()

        stopped = subprocess.run(
            [str(ROOT / "scripts" / "stop")], env={**beat_env, "BENCHDASH_VAR_DIR": str(tmp_path)},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert kept.loop.wait(timeout=10) == 0, stopped.stderr + kept.output()  # stop waited
        assert second is not None and _gone(second)
        assert not (tmp_path / "run" / "beat.pid").exists()
        assert "restarting" not in kept.output().split("beat: Starting")[-1]  # not again
    finally:
        kept.kill_all()


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False)
    return [int(child) for child in found.stdout.split()]


def _has_a_child(pid: int | None) -> bool:
    return pid is not None and bool(_children(pid))


def _tree(pid: int) -> set[int]:
    tree = {pid}
    for child in _children(pid):
        tree |= _tree(child)
    return tree


def _listeners(port: int) -> set[int]:
    """The pids holding a socket that listens on the loopback port (from /proc)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == f"0100007F:{port:04X}" and fields[3] == "0A":  # LISTEN
            inodes.add(f"socket:[{fields[9]}]")
    pids = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            if any(os.readlink(fd) in inodes for fd in fd_dir.iterdir()):
                pids.add(int(fd_dir.parent.name))
    return pids


# A command that starts a child of its own which outlives it, as a server's workers do.
LEAVES_A_CHILD = "import subprocess, time; subprocess.Popen(['sleep', '600']); time.sleep(600)"


def test_what_a_killed_process_left_behind_is_ended_before_it_starts_again(tmp_path):
    kept = Kept(tmp_path, "parent", sys.executable, "-c", LEAVES_A_CHILD, env=dict(os.environ))
    try:
        wait_until(lambda: _has_a_child(kept.child()), timeout=30,
                   what="the process and its child")  # fmt: skip
        first = kept.child()
        assert first is not None
        (left,) = _children(first)
        os.kill(first, signal.SIGKILL)

        wait_until(lambda: "keep: parent left 1 process(es) behind: ending them" in kept.output(),
                   timeout=30, what="the loop to end the child")  # fmt: skip
        wait_until(lambda: kept.child() not in (None, first), timeout=30, what="a new process")
        assert _gone(left), _cmdline(left)
    finally:
        kept.kill_all()


def _serves(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2) as s:
        s.sendall(b"GET /login/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        return s.recv(12).startswith(b"HTTP/1.1 ")
    return False


def _web_beat(redis_url: str) -> dict[str, int]:
    """What the web's heartbeat in Redis says: its writer and that one's supervisor."""
    value = redis.Redis.from_url(redis_url).hget(liveness._key(), "web")
    return orjson.loads(value) if value else {}


def test_a_killed_web_comes_back_with_no_orphan_on_its_port(tmp_path, beat_env, private_redis):
    port = free_port()
    kept = Kept(tmp_path, "web", sys.executable, "-m", "benchdash.serve", "--port", str(port),
                "--workers", "2", env=beat_env)  # fmt: skip
    try:
        wait_until(lambda: _serves(port), timeout=120, what="the web to answer")
        main = kept.child()
        assert main is not None
        old = _tree(main)
        assert len(old) >= 3 and _listeners(port) <= old  # the supervisor and its 2 workers
        os.kill(main, signal.SIGKILL)

        wait_until(lambda: all(_gone(pid) for pid in old), timeout=30, what="the old tree to end")
        wait_until(lambda: kept.child() not in (None, main) and _serves(port), timeout=120,
                   what="a new web to answer")  # fmt: skip
        new = _tree(kept.child() or main)
        assert _listeners(port) and _listeners(port) <= new
        # the heartbeat health reads comes from a worker of the new supervisor
        wait_until(lambda: _web_beat(private_redis.url).get("supervisor") == kept.child(),
                   timeout=60, what="the new web's heartbeat")  # fmt: skip
        assert _web_beat(private_redis.url)["pid"] in new
        assert "Address already in use" not in kept.output()
    finally:
        kept.kill_all()


def test_the_web_workers_end_with_their_supervisor_even_without_the_loop(tmp_path, beat_env):
    port = free_port()
    with (tmp_path / "web.log").open("ab") as log:
        web = subprocess.Popen(
            [sys.executable, "-m", "benchdash.serve", "--port", str(port), "--workers", "2"],
            cwd=ROOT, env=beat_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(lambda: _serves(port), timeout=120, what="the web to answer")
        workers = _listeners(port) - {web.pid}
        assert len(workers) == 2
        web.kill()
        web.wait(timeout=10)
        wait_until(lambda: all(_gone(pid) for pid in workers), timeout=30,
                   what="its workers to end with it")  # fmt: skip
        assert not _serves(port)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(web.pid, signal.SIGKILL)
