"""The flush 1 -> 2 model check: does the why panel's prediction land in the measured
ratio's interval?

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/fsync_model.py [--repeats 5] [--time 10]

One batch through a real worker (as `make start` runs it) on a private MariaDB 10.11 with
binary logging and performance_schema on (tests/servers.py): oltp_insert at one thread,
innodb_flush_log_at_trx_commit 1 and 2 x sync_binlog 0 and 1, --repeats interleaved
rounds of --time seconds each. Then the batch's results as the results page has them
(runs/services/answers/results.py), once against flush=1 at each sync_binlog: the why panel's
predicted throughput ratio of flush=2 (per-transaction fsync delta x each class's time
per fsync: the binary log's from performance_schema, the redo log's from the sync probe)
against the measured ratio with its 95 % interval (Welch's, the verdict's). Prints them
and writes bench/results/fsync_model.json, with the load it ran under.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import (  # noqa: E402
    delete_made,
    load,
    results_database,
    start_worker,
    stop_process,
    write_result,
)
from tests.servers import PrivateMariaDB  # noqa: E402

FLUSH, SYNC = "innodb_flush_log_at_trx_commit", "sync_binlog"


def run_batch(plan: Any) -> Any:
    from runs.services import batches
    from tests.helpers import wait_for_batch  # imports models: after django.setup()

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="cli"), timeout=3600)
    if batch.status != "done":
        raise SystemExit(f"batch {batch.pk} {batch.status}: {batch.error}")
    return batch


def pair(batch: Any, sync_binlog: str) -> dict[str, Any]:
    """flush=2 against flush=1 at one sync_binlog: the model's prediction, the measured
    ratio and its interval, each side's fsyncs by class."""
    from runs.services.answers.results import batch_results, batch_results_runs

    read = batch_results_runs(batch=batch)
    keys = {(s.settings[FLUSH], s.settings[SYNC]): i for i, s in enumerate(read.series)}
    found = batch_results(batch=batch, baseline=keys[("1", sync_binlog)], read=read)
    other = read.series[keys[("2", sync_binlog)]].key
    (why,) = [w for w in found.why if w["other"]["label"] == found_label(found, other)]
    (verdict,) = [v for v in found.verdicts if v["series_key"] == other]
    predicted, low, high = why["predicted_ratio"], verdict["ratio_low"], verdict["ratio_high"]
    return {
        "sync_binlog": sync_binlog,
        "predicted_ratio": predicted,
        "measured_ratio": why["measured_ratio"],
        "measured_low": low,
        "measured_high": high,
        "inside": predicted is not None and low is not None and low <= predicted <= high,
        "explained": why["explained"],
        "verdict": verdict["text"],
        "text": why["text"],
        "base_fsyncs": why["base"]["fsyncs_by_class"],
        "other_fsyncs": why["other"]["fsyncs_by_class"],
        "base_ms_per_tx": why["base"]["time_ms"],
        "other_ms_per_tx": why["other"]["time_ms"],
    }


def found_label(found: Any, key: str) -> str:
    return next(s["label"] for s in found.series if s["key"] == key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--time", type=int, default=10)
    args = parser.parse_args()
    django.setup()
    from runs.models import LoadHost, Plan, Target

    load_at_start = load()
    server = PrivateMariaDB(performance_schema=True).start()
    worker = None
    try:
        with results_database(), tempfile.TemporaryDirectory() as tmp:
            worker = start_worker(Path(tmp) / "worker.log", name="bench-fsync-model")
            local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
            server.create_database("sbtest")
            target = Target.objects.create(
                name=f"bench-fsync-model-{os.getpid()}", engine="mariadb", host="127.0.0.1",
                port=server.port, database="sbtest", user=server.user,
                password=server.password,
            )  # fmt: skip
            plan = Plan.objects.create(
                name=f"bench fsync model {os.getpid()}", target=target, load_host=local,
                test="oltp_insert", threads=[1], repeats=args.repeats,
                options={"time": args.time, "report-interval": 1, "tables": 1,
                         "table-size": 10000},
                server_settings={FLUSH: ["1", "2"], SYNC: ["0", "1"]},
            )  # fmt: skip
            batch = run_batch(plan)
            pairs = [pair(batch, "0"), pair(batch, "1")]
            delete_made(plans=[plan], others=[target])
    finally:
        if worker is not None:
            stop_process(worker)
        server.stop()
    summary = {
        "repeats": args.repeats,
        "time_s": args.time,
        "load_at_start": load_at_start,
        "pairs": pairs,
    }
    print(json.dumps(summary, indent=2))
    write_result(ROOT / "bench" / "results" / "fsync_model.json", summary)


if __name__ == "__main__":
    main()
