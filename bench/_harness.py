"""What the benchmarks of benchdash share: the results database and Redis from the
environment, as the product takes them; a real worker process; CPU times from /proc.

A benchmark never drops a database it did not create: on a shared machine the database
named by BENCHDASH_DB_NAME may be someone's work, or another bench run's. When it is
missing, the run makes a database of its own, named after it and the run's pid
(`benchdash_bench_4242`), works there (its workers and its Celery queues too: it is an
installation of its own) and drops that one at the end, and says so; otherwise it removes
only the rows it made itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _admin_connect() -> Any:
    import psycopg

    return psycopg.connect(
        host=os.environ.get("BENCHDASH_DB_HOST", "127.0.0.1"),
        port=os.environ.get("BENCHDASH_DB_PORT", "5432"),
        user=os.environ.get("BENCHDASH_DB_USER", "postgres"),
        password=os.environ.get("BENCHDASH_DB_PASSWORD", ""),
        dbname="postgres",
        autocommit=True,
        connect_timeout=10,
    )


@contextlib.contextmanager
def results_database() -> Iterator[str]:
    """The results database of the environment, migrated; when it does not exist, one of
    this run's own instead (`<name>_bench_<pid>`), dropped at the end: two bench runs
    side by side each make and drop their own, never the other's."""
    from psycopg import sql

    name = os.environ.get("BENCHDASH_DB_NAME", "benchdash")
    own = None
    with _admin_connect() as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            own = f"{name}_bench_{os.getpid()}"
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(own)))
            _warn(
                f"no results database {name!r}: this run made {own!r}, its own (its workers "
                "and Celery queues are its own too), and drops it at its end"
            )
            _use_database(own)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)
    try:
        yield own or name
    finally:
        if own is not None:
            from django.db import connections

            connections.close_all()
            with _admin_connect() as admin:
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(own))
                )
            _warn(f"dropped {own!r}, the results database this run made")


def _use_database(name: str) -> None:
    """This process, its migrate and the workers it starts on the database `name`, as
    an installation of that name (its Celery queues and Redis keys: benchdash/broker.py)."""
    os.environ["BENCHDASH_DB_NAME"] = name
    os.environ["BENCHDASH_INSTALLATION"] = name
    from django.conf import settings

    if settings.configured:
        from django.db import connections

        connections.close_all()
        settings.DATABASES["default"]["NAME"] = name
        connections["default"].settings_dict["NAME"] = name
        settings.BENCHDASH_INSTALLATION = name


def _warn(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def start_worker(log: Path, *, name: str, queues: str = "benchmarks,celery", **extra: str) -> Any:
    """A Celery worker process as `make start` runs it (solo pool unless told)."""
    argv = [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "-Q", queues]
    argv += [f"--pool={extra.get('pool', 'solo')}", "--loglevel=WARNING", "-n", f"{name}@%h"]
    argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]  # as shipped
    if "concurrency" in extra:
        argv.append(f"--concurrency={extra['concurrency']}")
    out = log.open("ab")
    return subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)


def stop_process(process: Any) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cpu_times(pid: int) -> tuple[float, float]:
    """(own CPU seconds, CPU seconds of its waited-for children) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / CLK_TCK, (cutime + cstime) / CLK_TCK


class ThreadsCPU:
    """CPU time of a process in nanoseconds, from each thread's schedstat, read every
    0.1 s by a thread of this process: /proc/<pid>/stat counts in ticks of 10 ms, too
    coarse for a worker that spends a few milliseconds a second. A thread that ends
    counts with its last reading (its last 0.1 s at most is missed)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._seen: dict[str, int] = {}
        self._base: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self.trace: list[tuple[float, int]] = []  # (wall clock, the process's CPU ns so far)

    def __enter__(self) -> ThreadsCPU:
        self._base = self._read()
        self._seen = dict(self._base)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._seen.update(self._read())

    @property
    def seconds(self) -> float:
        return sum(ns - self._base.get(tid, 0) for tid, ns in self._seen.items()) / 1e9

    @property
    def main_seconds(self) -> float:
        """The main thread's share (a solo worker runs its batch there; the counter
        sampler and any other thread make up the rest)."""
        tid = str(self.pid)
        return (self._seen.get(tid, 0) - self._base.get(tid, 0)) / 1e9

    def _poll(self) -> None:
        while not self._stop.wait(0.1):
            self._seen.update(self._read())
            self.trace.append((time.time(), sum(self._seen.values())))

    def ms_per_s_between(self, start: float, end: float) -> float | None:
        """The process's CPU per second of wall time between two wall-clock times (epoch
        seconds), from the readings nearest inside them; None when too few fall there."""
        inside = [(t, ns) for t, ns in self.trace if start <= t <= end]
        if len(inside) < 2 or inside[-1][0] - inside[0][0] < 1:
            return None
        (t0, ns0), (t1, ns1) = inside[0], inside[-1]
        return (ns1 - ns0) / 1e6 / (t1 - t0)

    def _read(self) -> dict[str, int]:
        times = {}
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                times[task.name] = int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # the thread just ended
        return times


def spread(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def commit() -> str:
    """The checkout's commit, "+changes" after it when tracked files outside
    bench/results/ differ from it (a figure of uncommitted code says so)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results")
    return head + ("+changes" if changed else "")


def write_result(out: Path | str, figures: dict[str, Any], *, indent: int = 2) -> None:
    """Write a benchmark's one result file, over the last one: the history is git's. The
    file says when it ran, at which commit and under what load (the 1-, 5- and 15-minute
    load averages as it ends), unless the figures already say it themselves."""
    stamp = {"when": datetime.now().isoformat(timespec="seconds"), "commit": commit()}
    record = {**stamp, "load_at_end": load(), **figures}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(record, indent=indent) + "\n")


def delete_made(*, plans: list[Any] = (), others: list[Any] = ()) -> None:  # type: ignore[assignment]
    """Remove what a benchmark created: the batches of its plans first (they protect
    plans, targets and load hosts), then the plans, then the rest."""
    from runs.models import Batch

    Batch.objects.filter(plan__in=plans).delete()
    for obj in [*plans, *others]:
        obj.delete()


# --- the live path's benchmarks: bench/stream_latency.py, bench/browser_latency.py -------


def measured_and_cleaned(measure: Callable[[list[Any]], dict[str, Any]]) -> dict[str, Any]:
    """`measure(made)` on the results database of the environment; whatever it adds to
    `made` (plans, load hosts) is deleted after, whatever happened."""
    made: list[Any] = []
    with results_database():
        try:
            return measure(made)
        finally:
            delete_made(
                plans=[m for m in made if m._meta.model_name == "plan"],
                others=[m for m in made if m._meta.model_name != "plan"],
            )


@contextlib.contextmanager
def web_and_worker(web_argv: list[str], *, port: int, name: str, runs: int) -> Iterator[None]:
    """A web server (`web_argv`, listening on `port`) and a Celery worker with a slot per
    run (threads pool), started for a measurement and stopped after it."""
    with open(f"/tmp/bench-{name}-web.log", "ab") as out:
        web = subprocess.Popen(web_argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    worker = start_worker(
        Path(f"/tmp/bench-{name}-worker.log"),
        name=f"{name}-{os.getpid()}",
        pool="threads",
        concurrency=str(runs + 1),
    )
    try:
        time.sleep(6)  # the worker up, its start-up sweep done
        _wait_for_port(port, timeout_s=60)  # a loaded machine may take longer for the web
        yield
    finally:
        stop_process(worker)
        stop_process(web)


def _wait_for_port(port: int, *, timeout_s: float) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the web server did not listen on port {port} in {timeout_s:g} s")


def cpu_batches(runs: int, duration: int, tag: str, made: list[Any]) -> list[Any]:
    """`runs` one-run `sysbench cpu` batches launched at once, each on a load host of its
    own (one benchmark per load host), reporting every second."""
    from runs.models import LoadHost, Plan
    from runs.services import batches

    launched = []
    for i in range(runs):
        host = LoadHost.objects.create(name=f"{tag}-{i + 1}", kind="local", port=0)
        made.append(host)
        plan = Plan.objects.create(
            name=f"{tag} {i}", load_host=host, test="cpu",
            options={"time": duration, "report-interval": 1, "cpu-max-prime": 2000},
            threads=[1],
        )  # fmt: skip
        made.insert(0, plan)
        launched.append(batches.batch_launch(plan=plan, launched_by="cli"))
    return launched


def wait_running(batch: Any) -> Any:
    """The batch's run once it runs (30 s at most)."""
    from runs.models import Run

    for _ in range(300):
        run = Run.objects.filter(batch=batch, status="running").first()
        if run is not None:
            return run
        time.sleep(0.1)
    raise RuntimeError(f"batch {batch.pk} did not start")


def percentiles(lags: list[float]) -> dict[str, float]:
    """p50, p95 and max of lags in seconds, in milliseconds."""
    ms = sorted(1000 * lag for lag in lags)
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1),
        "max_ms": round(ms[-1], 1),
    }
