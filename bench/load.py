"""benchdash under load: many people on the pages while a run streams live.

    .venv/bin/python bench/load.py [--clients 50] [--seconds 30] [--sse-clients 50]
                                   [--web-workers N] [--after 60] [--warmup 5]
                                   [--mix live|pages] [--idle]

Starts its own world on loopback, and removes it at the end: a private PostgreSQL
(max_connections 100, as PostgreSQL ships) and a private Redis (tests/servers.py), the
migrations, benchdash's web server as `make start` runs it (benchdash/serve.py: uvicorn,
--web-workers worker processes; default $BENCHDASH_WEB_WORKERS or the number of cores) and
a Celery worker.
It stores 100 small batches for the list and two batches of 40 runs (60 samples each),
and launches a live `sysbench cpu` run (one sample a second).

Then, for --seconds, --clients logged-in clients (threads) each ask in turn for the batch
list (`/`), the page of a 40-run batch and the compare API on the two 40-run batches,
while --sse-clients clients (another process) follow the live run's event stream.
Reports per page: requests, throughput, p50, p99, errors; the web server's CPU per request
(uvicorn's processes, from /proc); the SSE clients that connected
and the samples they got; the connections to PostgreSQL at the peak and --after seconds
after the load; the "too many clients" refusals PostgreSQL logged; the load average.
Writes bench/results/load.json (load_pages.json with --mix pages, or --out); the logs stay
in /tmp/benchdash-load-*.

--mix pages (issue 27): the clients ask in turn for the batch list, the results page of a
finished 50-run batch and the API results of a finished 200-run batch (600 samples a run,
650 server variables: bench/benchdata.py), whose answers are stored first as a batch's
end stores them (where the code has stored answers). --idle: no live run (and no SSE
clients) meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._harness import write_result  # noqa: E402

RUNS_PER_BATCH = 40
SAMPLES_PER_RUN = 60
LIST_BATCHES = 100
CONNECTION_LIMIT = ("too many clients", "remaining connection slots")


# --- the world: private servers and benchdash's processes ------------------------------------


def start_servers() -> tuple[Any, Any]:
    from tests.servers import PrivatePostgres, PrivateRedis

    postgres, redis = PrivatePostgres(), PrivateRedis()
    postgres.start()
    redis.start()
    os.environ.update(
        DJANGO_SETTINGS_MODULE="benchdash.settings",
        BENCHDASH_DB_HOST=postgres.host,
        BENCHDASH_DB_PORT=str(postgres.port),
        BENCHDASH_DB_NAME="benchdash_load",
        # Not a superuser: the connections PostgreSQL keeps for superusers stay free for
        # counting, even when benchdash has taken all the others.
        BENCHDASH_DB_USER="benchdash",
        BENCHDASH_DB_PASSWORD="",
        BENCHDASH_REDIS_URL=redis.url,
        BENCHDASH_LOG_LEVEL="WARNING",
    )
    with postgres.connect() as db:
        db.execute("CREATE ROLE benchdash LOGIN")
        db.execute("CREATE DATABASE benchdash_load OWNER benchdash")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)
    return postgres, redis


def start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)


def free_port() -> int:
    from tests.servers import free_port as pick

    return pick()


def wait_for_http(url: str) -> None:
    import requests

    for _ in range(300):
        try:
            requests.get(url, timeout=2)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


# --- what the pages show -----------------------------------------------------------------------


def store_batches(plan: Any) -> list[int]:
    """LIST_BATCHES small batches for the list, and two of RUNS_PER_BATCH runs."""
    from django.utils import timezone

    from runs.models import Batch, Run, Sample

    now = timezone.now()
    for _ in range(LIST_BATCHES):
        Batch.objects.create(
            plan=plan, load_host=plan.load_host, params={}, seed=1, status="done",
            launched_by="ui", started_at=now, finished_at=now,
        )  # fmt: skip
    big = []
    for _ in range(2):
        batch = Batch.objects.create(
            plan=plan, load_host=plan.load_host, params={"test": "cpu", "repeats": 4},
            seed=1, status="done", launched_by="ui", started_at=now, finished_at=now,
        )  # fmt: skip
        runs = Run.objects.bulk_create(
            Run(
                batch=batch,
                position=i,
                round=i // 10,
                cell_key=f"threads={1 + i % 10}",
                threads=1 + i % 10,
                status="done",
                started_at=now,
                finished_at=now,
                summary={"eps": 1000.0 + i, "latency_pct": 95, "latency_pct_ms": 1.0 + i / 10},
            )
            for i in range(RUNS_PER_BATCH)
        )
        Sample.objects.bulk_create(
            Sample(run=run, seq=s, time_s=s, threads=run.threads, tps=1000.0 + s, received_at=now)
            for run in runs
            for s in range(1, SAMPLES_PER_RUN + 1)
        )
        big.append(batch.pk)
    return big


def store_finished_pages() -> dict[str, str]:
    """The batches of --mix pages, made as bench/pages.py makes them, their answers stored
    as a batch's end stores them; the pages asked for."""
    from bench import benchdata

    fifty = benchdata.batch("load-50x600", runs=50, samples=600)
    two_hundred = benchdata.batch("load-200x600", runs=200, samples=600)
    benchdata.store_answers()
    return {
        "batch list": "/",
        "results page, 50 runs": f"/batches/{fifty.pk}/results",
        "API results, 200 runs": f"/api/v1/batches/{two_hundred.pk}/results",
    }


def launch_live_run(plan: Any, seconds: int) -> tuple[Any, Any]:
    from runs.models import Plan, Run
    from runs.services import batches

    live = Plan.objects.create(
        name="live", load_host=plan.load_host, test="cpu", threads=[1],
        options={"time": seconds, "report-interval": 1, "cpu-max-prime": 2000, "rate": 50},
    )  # fmt: skip
    batch = batches.batch_launch(plan=live, launched_by="cli")
    for _ in range(600):
        run = Run.objects.filter(batch=batch, status="running").first()
        if run is not None:
            return batch, run
        time.sleep(0.1)
    raise RuntimeError("the live run did not start")


def session_cookie() -> dict[str, str]:
    from django.contrib.auth.models import User
    from django.test import Client

    user = User.objects.create_user("load", is_staff=True)
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


# --- the clients ---------------------------------------------------------------------------------


def page_clients(
    base: str, paths: dict[str, str], cookies: dict[str, str], clients: int, seconds: float
) -> dict[str, list[tuple[int, float]]]:
    """Each client asks for every page in turn until the time is up: (status, seconds)."""
    import requests

    results: dict[str, list[tuple[int, float]]] = {name: [] for name in paths}
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        names = list(paths)
        with requests.Session() as session:
            session.cookies.update(cookies)
            i = offset
            while time.monotonic() < stop:
                name = names[i % len(names)]
                i += 1
                began = time.perf_counter()
                try:
                    status = session.get(base + paths[name], timeout=120).status_code
                except requests.RequestException:
                    status = 0
                results[name].append((status, time.perf_counter() - began))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def sse_clients(url: str, cookies: dict[str, str], clients: int, seconds: float) -> dict[str, Any]:
    """Run in a process of its own: `clients` followers of one event stream."""
    import requests

    connected, samples, errors = [0], [0], []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def follow() -> None:
        try:
            with requests.get(url, cookies=cookies, stream=True, timeout=30) as response:
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}")
                with lock:
                    connected[0] += 1
                for line in response.iter_lines(decode_unicode=True):
                    if line == "event: sample":
                        with lock:
                            samples[0] += 1
                    if line == "event: end" or time.monotonic() > stop:
                        return
        except Exception as e:  # every failure is counted, whatever it is
            with lock:
                errors.append(str(e)[:200])

    threads = [threading.Thread(target=follow) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"clients": clients, "connected": connected[0], "samples": samples[0], "errors": errors}


def run_sse_process(url: str, cookies: dict[str, str], clients: int, seconds: float) -> Any:
    argv = [sys.executable, __file__, "--sse-only", url, json.dumps(cookies), str(clients),
            str(seconds)]  # fmt: skip
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)


# --- figures -------------------------------------------------------------------------------


def connections(postgres: Any) -> int:
    """benchdash's connections, counted as the superuser on one of its reserved slots."""
    with postgres.connect() as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'benchdash_load'"
        ).fetchone()
        return int(row[0]) if row else 0


def web_cpu_s(web_pid: int) -> float:
    """CPU seconds used so far by the web server: uvicorn's supervisor and its worker
    processes (its children, from /proc)."""
    clock = os.sysconf("SC_CLK_TCK")
    used = 0
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # not a process, or one that has just ended
        if int(fields[1]) == web_pid or entry.name == str(web_pid):  # its parent, or itself
            used += int(fields[11]) + int(fields[12])
    return used / clock


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def page_figures(results: list[tuple[int, float]], seconds: float) -> dict[str, Any]:
    ms = [1000 * t for _, t in results]
    errors = [status for status, _ in results if status != 200]
    return {
        "requests": len(results),
        "per_s": round(len(results) / seconds, 1),
        "p50_ms": round(statistics.median(ms), 1) if ms else None,
        "p99_ms": round(percentile(ms, 0.99), 1) if ms else None,
        "errors": len(errors),
        "error_statuses": sorted(set(errors)),
    }


def refusals(*logs: Path) -> int:
    count = 0
    for log in logs:
        text = log.read_text(errors="replace") if log.exists() else ""
        count += sum(text.count(words) for words in CONNECTION_LIMIT)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--sse-clients", type=int, default=50)
    default_workers = int(os.environ.get("BENCHDASH_WEB_WORKERS") or os.cpu_count() or 1)
    parser.add_argument("--web-workers", type=int, default=default_workers)
    parser.add_argument("--after", type=float, default=60, help="seconds to wait, then count")
    parser.add_argument("--warmup", type=float, default=5, help="seconds of requests not counted")
    parser.add_argument("--out", type=Path, help="load.json (live) or load_pages.json (pages)")
    parser.add_argument(
        "--mix", choices=["live", "pages"], default="live",
        help="live: list, batch page, compare API; pages: list, results page, API results",
    )  # fmt: skip
    parser.add_argument("--idle", action="store_true", help="no live run during the load")
    parser.add_argument("--sse-only", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sse_only:
        url, cookies, clients, seconds = args.sse_only
        print(json.dumps(sse_clients(url, json.loads(cookies), int(clients), float(seconds))))
        return
    figures = measure(args)
    # One file a mix, the latest run over the last one: the two mixes answer two questions.
    name = "load.json" if args.mix == "live" else "load_pages.json"
    write_result(args.out or ROOT / "bench" / "results" / name, figures)
    print(json.dumps(figures, indent=2))


def measure(args: argparse.Namespace) -> dict[str, Any]:
    postgres, redis = start_servers()
    logs = Path(tempfile.mkdtemp(prefix="benchdash-load-"))
    processes: list[subprocess.Popen[bytes]] = []
    try:
        import django

        django.setup()
        from runs.models import LoadHost, Plan
        from runs.services import batches

        local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
        plan = Plan.objects.create(name="stored", load_host=local, test="cpu", threads=[1])
        big = store_batches(plan)
        cookies = session_cookie()
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        processes.append(start(
            [sys.executable, "-m", "benchdash.serve", "--host", "127.0.0.1", "--port",
             str(port), "--workers", str(args.web_workers), "--log-level", "warning"],
            logs / "uvicorn.log",
        ))  # fmt: skip
        processes.append(start(
            [sys.executable, "-m", "celery", "-A", "benchdash", "worker", "-Q",
             "benchmarks,celery", "--pool=solo", "--loglevel=WARNING"],
            logs / "worker.log",
        ))  # fmt: skip
        wait_for_http(base + "/accounts/login/")
        live = None if args.idle else launch_live_run(plan, int(args.seconds + args.warmup) + 30)
        paths = {
            "batch list": "/",
            "40-run batch page": f"/batches/{big[0]}/",
            "compare API": f"/api/v1/compare?batches={big[0]},{big[1]}",
        }
        if args.mix == "pages":
            paths = store_finished_pages()
        # Each worker process's first requests load code and open its pool: not measured.
        page_clients(base, paths, cookies, 2 * args.web_workers, args.warmup)
        load_before = os.getloadavg()
        sse = None
        if live is not None and args.sse_clients:
            sse = run_sse_process(
                f"{base}/runs/{live[1].pk}/events", cookies, args.sse_clients, args.seconds
            )
        peak = [0]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], connections(postgres))
                time.sleep(0.25)

        watcher = threading.Thread(target=watch)
        watcher.start()
        web_cpu_before = web_cpu_s(processes[0].pid)
        results = page_clients(base, paths, cookies, args.clients, args.seconds)
        web_cpu = web_cpu_s(processes[0].pid) - web_cpu_before
        sse_out = sse.communicate(timeout=args.seconds + 120)[0] if sse is not None else ""
        done.set()
        watcher.join()
        load_after = os.getloadavg()
        if live is not None:
            batches.batch_cancel(batch=live[0])
        right_after = connections(postgres)
        time.sleep(args.after)
        later = connections(postgres)
        return {
            "clients": args.clients,
            "seconds": args.seconds,
            "web_workers": args.web_workers,
            "mix": args.mix,
            "live_run": live is not None,
            "pages": {name: page_figures(r, args.seconds) for name, r in results.items()},
            "all_pages": page_figures([x for r in results.values() for x in r], args.seconds),
            # The web server's CPU over the measured seconds, per request answered.
            "web_cpu_s": round(web_cpu, 2),
            "web_cpu_ms_per_request": round(
                1000 * web_cpu / max(1, sum(len(r) for r in results.values())), 1
            ),
            "sse": json.loads(sse_out) if sse_out.strip() else {"errors": ["none, or no answer"]},
            "postgres_connections": {
                "peak": peak[0],
                "right_after": right_after,
                f"after_{int(args.after)}s": later,
                "max_connections": 100,
            },
            "connection_limit_refusals": refusals(postgres.log, logs / "uvicorn.log"),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in load_after],
            "logs": str(logs),
        }
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        redis.stop()
        postgres.stop()


if __name__ == "__main__":
    main()
