"""Stored batches for the page and export benchmarks: made once, found again by label.

Rows are written straight to the database (samples with COPY), the way a finished batch
leaves them, so a benchmark measures the reads only. Every batch is labelled
`bench:<name>`; a second run of a script reuses what the first one made.
"""

from __future__ import annotations

import json
import math
import random
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from runs.models import Batch, LoadHost, Plan, Run, Target

SERIES = ("1", "2")  # innodb_flush_log_at_trx_commit
THREADS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
# A MariaDB server reports ~650 variables; the results page shows them all, folded.
VARIABLES = {f"bench_variable_{i:03d}": f"value-{i % 17}" for i in range(650)}
HISTOGRAM_ROWS = 120  # a sysbench --histogram of an OLTP run holds ~100-200 rows
COUNTER_NAMES = [f"Innodb_counter_{i:02d}" for i in range(19)]


def target_and_host() -> tuple[Target, LoadHost]:
    target = Target.objects.get_or_create(
        name="bench-pages",
        defaults={"engine": "mariadb", "host": "127.0.0.1", "port": 3999, "database": "sbtest",
                  "user": "bench", "cpu_cores": 2, "disk_count": 1},
    )[0]  # fmt: skip
    host = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    return target, host


def plan(name: str) -> Plan:
    target, host = target_and_host()
    return Plan.objects.get_or_create(
        name=name,
        defaults={"target": target, "load_host": host, "test": "oltp_read_write",
                  "options": {"time": 600, "report-interval": 1}, "threads": [1, 2],
                  "server_settings": {"innodb_flush_log_at_trx_commit": list(SERIES)}},
    )[0]  # fmt: skip


def batch(
    name: str, *, runs: int, samples: int, of_plan: Plan | None = None, **fields: Any
) -> Batch:
    """A finished batch of `runs` runs (threads x flush 1/2, repeated) of `samples`
    one-second samples each, made unless a batch labelled bench:<name> exists."""
    label = f"bench:{name}"
    found = Batch.objects.filter(label=label).first()
    if found is not None:
        return found
    with transaction.atomic():
        made = _batch(of_plan or plan("bench pages"), label, runs, samples, **fields)
        stored = _runs(made, runs, samples)
        _copy_samples(stored, samples)
    return made


def _batch(plan: Plan, label: str, runs: int, samples: int, **fields: Any) -> Batch:
    # Ended a moment ago, not in the future: a stored answer is fresh once made after the end.
    took = timedelta(seconds=runs * (samples + 2))
    start = fields.pop("started_at", None) or timezone.now() - took
    server = {"version": "10.11.6-MariaDB-log", "variables": VARIABLES}
    return Batch.objects.create(
        plan=plan, label=label, target=plan.target, load_host=plan.load_host,
        params={"test": plan.test, "options": plan.options, "warmup_s": 10, "repeats": 1,
                "server_settings": plan.server_settings, "order_policy": "interleaved",
                "dataset_policy": "shared", "threads": list(THREADS)},
        seed=1, status="done", started_at=start,
        finished_at=start + timedelta(seconds=runs * (samples + 2)),
        environment={"server": server, "load_host": {"host": "local", "cpu_cores": 2}},
        **{"launched_by": "ui", **fields},
    )  # fmt: skip


def _cells(count: int) -> list[tuple[int, str, int]]:
    """(threads, flush, round) of `count` runs: as many thread counts as needed (at most
    10), both flush values, then repeats."""
    threads = THREADS[: max(1, min(len(THREADS), count // 2))]
    per_round = len(threads) * len(SERIES)
    cells = [(t, f, r) for r in range(-(-count // per_round)) for f in SERIES for t in threads]
    return cells[:count]


def _runs(batch: Batch, count: int, samples: int) -> list[Run]:
    rng = random.Random(batch.label)
    assert batch.started_at is not None
    runs = []
    for position, (threads, flush, round_) in enumerate(_cells(count)):
        began = batch.started_at + timedelta(seconds=position * (samples + 2))
        scale = 1.6 if flush == "2" else 1.0
        tps = 800.0 * math.log2(threads + 1) * scale * rng.uniform(0.97, 1.03)
        settings = {"innodb_flush_log_at_trx_commit": flush}
        runs.append(
            Run(
                batch=batch, position=position, round=round_, threads=threads,
                cell_key=json.dumps({"options": {}, "settings": settings, "threads": threads},
                                    sort_keys=True),
                settings=settings, verified_settings=settings, status="done",
                summary=_summary(tps, threads, samples), histogram=_histogram(rng),
                counters=_counters(rng), started_at=began,
                finished_at=began + timedelta(seconds=samples),
                raw_log=f"sysbench 1.0.20\n... {samples} interval lines ...\n",
            )
        )  # fmt: skip
    return Run.objects.bulk_create(runs)


def _summary(tps: float, threads: int, samples: int) -> dict[str, Any]:
    return {
        "tps": round(tps, 2), "qps": round(tps * 20, 2), "latency_pct": 95,
        "latency_pct_ms": round(threads / tps * 1000 * 1.8, 2),
        "latency_avg_ms": round(threads / tps * 1000, 2), "latency_max_ms": 120.5,
        "errors": 0, "reconnects": 0, "transactions": round(tps * samples),
        "queries": round(tps * samples * 20), "total_time_s": float(samples),
    }  # fmt: skip


def _histogram(rng: random.Random) -> list[list[float]]:
    return [
        [round(0.1 * 1.05**i, 3), int(1000 * math.exp(-((i - 40) ** 2) / 300)) + rng.randint(1, 9)]
        for i in range(HISTOGRAM_ROWS)
    ]


def _counters(rng: random.Random) -> dict[str, Any]:
    return {
        "deltas": {name: float(rng.randint(1000, 10**7)) for name in COUNTER_NAMES},
        "gauges": {"Threads_running": 3.0},
        "derived": {"rows_read_per_query": 1.5, "log_fsyncs_per_transaction": 0.98},
    }


def _copy_samples(runs: list[Run], samples: int) -> None:
    columns = ("run_id", "seq", "time_s", "threads", "tps", "qps", "reads", "writes", "other",
               "latency_pct", "latency_ms", "errors_per_s", "reconnects_per_s", "in_warmup",
               "extra", "received_at")  # fmt: skip
    now = timezone.now()
    sql = f"COPY runs_sample ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for run in runs:
            for row in _sample_rows(run, samples, now):
                copy.write_row(row)


def _sample_rows(run: Run, samples: int, now: datetime):
    rng = random.Random(run.pk)
    base = run.summary["tps"]
    for seq in range(1, samples + 1):
        tps = round(base * (1 + 0.05 * math.sin(seq / 7)) * rng.uniform(0.95, 1.05), 2)
        if seq % 97 == 0:
            tps = round(tps * 0.4, 2)  # a stall: the charts must keep it
        yield (run.pk, seq, float(seq), run.threads, tps, round(tps * 20, 2),
               round(tps * 14, 2), round(tps * 4, 2), round(tps * 2, 2), 95.0,
               round(rng.uniform(2, 9), 2), 0.0, 0.0, seq <= 10, "{}", now)  # fmt: skip


def queued_batch(name: str, *, cells: int) -> Batch:
    """A batch just launched: `cells` cells (as many buffer pool sizes as it takes, by
    flush and thread count), each one queued run; made unless bench:<name> exists."""
    label = f"bench:{name}"
    found = Batch.objects.filter(label=label).first()
    if found is not None:
        return found
    with transaction.atomic():
        made = _batch(plan("bench pages"), label, 0, 0)
        Batch.objects.filter(pk=made.pk).update(status="queued", started_at=None, finished_at=None)
        made.refresh_from_db()
        runs = []
        for position in range(cells):
            threads = THREADS[position % len(THREADS)]
            pool = position // (len(THREADS) * len(SERIES))
            flush = SERIES[position // len(THREADS) % len(SERIES)]
            settings = {"innodb_flush_log_at_trx_commit": flush,
                        "innodb_buffer_pool_size": f"{128 + pool}M"}  # fmt: skip
            runs.append(
                Run(
                    batch=made, position=position, round=0, threads=threads,
                    cell_key=json.dumps({"options": {}, "settings": settings, "threads": threads},
                                        sort_keys=True),
                    settings=settings, status="queued", expected_duration_s=600.0,
                )
            )  # fmt: skip
        Run.objects.bulk_create(runs)
    return made


def store_answers() -> None:
    """Each finished bench batch's answer stored, as the worker stores it when a batch ends
    (issue 27; a commit before it has nothing to store, and its pages build every time)."""
    try:
        from runs.services.answers import stored_results
    except ImportError:
        return
    for made in Batch.objects.filter(label__startswith="bench:"):
        stored_results.batch_results_store(batch=made)
