"""What exporting a batch costs the web server: time, memory, bytes.

    BENCHDASH_DB_NAME=benchdash_mine .venv/bin/python bench/exports.py [--repeats 3]

Uses the database and Redis of the environment. Makes, once, a finished batch of 200 runs
x 600 samples and one of 100 runs x 10,000 samples (a million samples; bench/benchdata.py),
then downloads its JSON export and its samples CSV from a fresh uvicorn (as `make start`
serves it) for each measurement, as a browser would (with and without gzip), reading
the answer as it comes and throwing it away. Prints the time to the last byte, the bytes
received, and the server's peak resident memory above its memory before the request:
what the answer cost the server to build. Min / median / max over the repeats, with
the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

BATCHES = {"200 runs x 600": (200, 600), "100 runs x 10,000": (100, 10_000)}
EXPORTS = {"JSON": "export.json", "samples CSV": "export.csv?what=samples"}


def download(url: str, cookies: dict[str, str], gzip: bool) -> dict[str, Any]:
    import requests

    from bench.serving import Server

    headers = {"Accept-Encoding": "gzip" if gzip else "identity"}
    with Server() as server:
        requests.get(server.url + "/", cookies=cookies, timeout=30)  # warm: first request
        before = server.memory_kb("VmRSS")
        began = time.perf_counter()
        received = 0
        with requests.get(
            server.url + url, cookies=cookies, headers=headers, stream=True, timeout=3600
        ) as answer:
            assert answer.status_code == 200, answer.status_code
            for piece in answer.raw.stream(64 * 1024, decode_content=False):
                received += len(piece)
            encoding = answer.headers.get("Content-Encoding", "")
        elapsed = time.perf_counter() - began
        grew = (server.memory_kb("VmHWM") - before) / 1024
    return {"seconds": elapsed, "bytes": received, "grew_mb": grew, "encoding": encoding}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "exports.json"))
    args = parser.parse_args()
    django.setup()
    from django.core.management import call_command

    from bench import benchdata
    from bench._harness import write_result
    from bench.serving import load, session_cookie, spread

    call_command("migrate", verbosity=0)
    batches = {
        name: benchdata.batch(f"{runs}x{samples}", runs=runs, samples=samples)
        for name, (runs, samples) in BATCHES.items()
    }
    cookies = session_cookie()
    results: dict[str, Any] = {"load_before": load()}
    print(f"load average before: {results['load_before']}")
    print("| batch | export | gzip | seconds min / median / max | MB received | server memory MB |")
    print("|---|---|---|---|---|---|")
    for name, batch in batches.items():
        for export, path in EXPORTS.items():
            for gzip in (False, True):
                url = f"/batches/{batch.pk}/{path}"
                runs = [download(url, cookies, gzip) for _ in range(args.repeats)]
                results[f"{name} {export} gzip={gzip}"] = runs
                print(
                    f"| {name} | {export} | {runs[0]['encoding'] or 'no'} | "
                    f"{spread([r['seconds'] for r in runs])} | {runs[0]['bytes'] / 1e6:,.1f} | "
                    f"{spread([r['grew_mb'] for r in runs])} |",
                    flush=True,
                )
    results["load_after"] = load()
    print(f"load average after: {results['load_after']}")
    write_result(args.out, results, indent=1)


if __name__ == "__main__":
    main()
