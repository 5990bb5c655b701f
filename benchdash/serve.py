"""The web server as benchdash runs it: uvicorn, asleep while nobody asks for anything.

`python -m benchdash.serve --host H --port P --workers N` is `uvicorn
benchdash.asgi:application` with the same options, but idle it wakes about once a second
instead of a dozen times: uvicorn's server loop ticks every 0.1 s (for its Date header, once
a second, and its exit flag), and its supervisor pings every worker twice a second. Idle,
those ticks were most of the web server's 3-4 ms of CPU a second (docs/PERFORMANCE.md).

Here a worker ticks once a second (the Date header keeps its one-second resolution; a
shutdown waits up to a second more) and the supervisor checks on its workers every
WATCH_S, while a signal (a deploy's SIGTERM) still wakes it at once.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import multiprocessing
import os
import select
import signal
import socket
import sys
import threading
import time
from types import FrameType

import uvicorn
from uvicorn.supervisors import multiprocess

APP = "benchdash.asgi:application"
TICK_S = 1.0  # uvicorn's is 0.1 s, with work on every tenth tick
WATCH_S = 5.0  # uvicorn's supervisor pings its workers every 0.5 s
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent() -> None:
    """A worker gets SIGTERM when its supervisor dies: one killed outright would otherwise
    leave its workers, re-parented to init, holding the port its successor must bind."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        sys.exit(0)  # it died before the line above: no signal will come


class QuietServer(uvicorn.Server):
    """A uvicorn server whose loop wakes once a second."""

    async def main_loop(self) -> None:
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            # Each tick counts as uvicorn's ten: the once-a-second work runs every time.
            counter = (counter + 10) % 864000
            await asyncio.sleep(TICK_S)
            should_exit = await self.on_tick(counter)

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        die_with_parent()
        super().run(sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        threading.Thread(target=beat_web, name="heartbeat", daemon=True).start()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Stopped, not killed: no heartbeat left to say it died (another worker that still
        # runs writes it again at its next beat).
        from runs.execution import liveness

        liveness.process_forget(name=WEB)
        await super().shutdown(sockets)


WEB = "web"  # its heartbeat's field in Redis, read by runs/services/health.py


def beat_web() -> None:
    """The web's heartbeat in Redis, for health: written by each worker while the
    supervisor that started it lives, so a web whose supervisor is gone shows gone even if
    some worker of it still answers on the port. Imported here: the app's import set
    Django up."""
    from django.conf import settings

    from runs.execution import liveness

    parent = multiprocessing.parent_process()
    supervisor = parent.pid if parent is not None else None
    while supervisor is None or os.getppid() == supervisor:
        liveness.process_beat(name=WEB, report={"pid": os.getpid(), "supervisor": supervisor})
        time.sleep(settings.BENCHDASH_PROCESS_BEAT_S)


# The class uvicorn's worker processes build their server from. The workers are spawned:
# each imports this module again as its main module, so each gets this line too.
multiprocess.Server = QuietServer  # type: ignore[misc]


class QuietSupervisor(multiprocess.Multiprocess):
    """uvicorn's supervisor, looking after its workers every WATCH_S instead of 0.5 s; a
    signal wakes it through a pipe (a write is all a signal handler may safely do)."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        self._wake_r, self._wake_w = os.pipe()
        for sig in multiprocess.SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        self.signal_queue.append(sig)
        os.write(self._wake_w, b"\0")

    def run(self) -> None:
        self.init_processes()
        while not self.should_exit.is_set():
            ready, _, _ = select.select([self._wake_r], [], [], WATCH_S)
            if ready:
                os.read(self._wake_r, 64)
            self.handle_signals()
            self.keep_subprocess_alive()
        self.terminate_all()
        self.join_all()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args()
    config = uvicorn.Config(
        APP, host=args.host, port=args.port, workers=args.workers, log_level=args.log_level
    )
    if config.workers > 1:
        QuietSupervisor(config, sockets=[config.bind_socket()]).run()
    else:
        QuietServer(config).run()


if __name__ == "__main__":
    main()
