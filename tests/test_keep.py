"""scripts/keep, the restart loop around each long-lived process of `make start`: a killed
process is started again and its log says so; scripts/stop ends the loop and its process.
Started as scripts/start starts them (in a session of their own, the loop's pid in
VAR_DIR/run/<name>.pid), in a temporary VAR_DIR."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.helpers import wait_until
from tests.processes import ROOT
from tests.servers import PrivateRedis

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
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.loop.pid, signal.SIGKILL)
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
