"""How many samples one worker stores per second on the live path.

    export BENCHDASH_DB_NAME=... BENCHDASH_REDIS_URL=...   # as for the product
    .venv/bin/python bench/store_rate.py [--lines 50000] [--repeats 3]

Feeds real captured sysbench interval lines (tests/fixtures/sysbench/oltp_read_write.txt,
renumbered `[ 1s ]`, `[ 2s ]`, ...) as fast as it can through what a worker does with each
line of a running benchmark: the output parser, then the run's SampleSink, which publishes
every line and sample to Redis and stores samples and raw log in PostgreSQL. Lines come
as a pipe delivers a burst: --per-read of them per read, each read published at once (a
sink without `publish`, before issue 13, published every sample on its own). The figure is
lines parsed, published and stored per second of wall time (and per CPU second of this
process), checked against the rows really stored. One run of its own per repeat, on the
database and Redis of the environment (created if missing, then dropped; otherwise only
its rows are deleted). Writes bench/results/store_rate.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import load, results_database, spread, write_result  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "sysbench" / "oltp_read_write.txt"
PREFIX = re.compile(r"^\[ \d+s \] ")


def interval_lines(count: int) -> list[str]:
    real = [line for line in FIXTURE.read_text().splitlines() if PREFIX.match(line)]
    return [PREFIX.sub(f"[ {i + 1}s ] ", real[i % len(real)]) for i in range(count)]


def one_pass(lines: list[str], per_read: int) -> dict[str, Any]:
    from runs.execution.stream.sink import SampleSink
    from runs.models import Batch, Run
    from runs.sysbench.parser import OutputParser

    batch = Batch.objects.create(
        label=f"store-rate-{os.getpid()}", params={}, seed=0, launched_by="cli"
    )
    run = Run.objects.create(batch=batch, position=0, round=0, cell_key="store-rate", threads=2)
    try:
        parser = OutputParser()
        sink = SampleSink(run, warmup_s=0)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        publish = getattr(sink, "publish", None)
        for i, line in enumerate(lines, 1):
            sink.add_line(line)
            for event in parser.feed(line):
                sink.add(event)
            if publish is not None and i % per_read == 0:
                publish()
            if sink.due():
                sink.flush()
        sink.flush(final=True)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        stored = run.samples.count()
        assert stored == len(lines), f"{stored} samples stored of {len(lines)}"
        run.refresh_from_db(fields=["raw_log"])
        assert run.raw_log.count("\n") == len(lines), "raw log incomplete"
        return {
            "lines": len(lines),
            "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3),
            "per_s": round(len(lines) / wall),
            "per_cpu_s": round(len(lines) / cpu),
        }
    finally:
        batch.delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--per-read", type=int, default=50, help="lines a read delivers")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "store_rate.json"))
    args = parser.parse_args()
    django.setup()
    lines = interval_lines(args.lines)
    with results_database():
        passes = []
        for _ in range(args.repeats):
            load_before = load()
            passes.append({**one_pass(lines, args.per_read), "load_before": load_before})
            print(json.dumps(passes[-1]), flush=True)
    result = {
        "when": datetime.now().isoformat(timespec="seconds"),
        "per_read": args.per_read,
        "passes": passes,
        "per_s": spread([p["per_s"] for p in passes]),
        "per_cpu_s": spread([p["per_cpu_s"] for p in passes]),
    }
    write_result(args.out, result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
