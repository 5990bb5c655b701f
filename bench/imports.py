"""How fast a log import stores samples, and how much memory it holds.

    BENCHDASH_DB_NAME=benchdash_mine .venv/bin/python bench/imports.py [--lines 1000000]
        [--repeats 3] [--kinds cpu,sql] [--paths cli,api] [--max-log-mb 200]

Uses the database and Redis of the environment. Writes two logs of --lines interval
lines each: a `cpu` log (~48 bytes a line, under the default 50 MB limit) and an
`oltp_read_write` log (~120 bytes a line, every figure filled in), and imports each one
--repeats times:

- cli: in a child process that calls the importer as `manage.py import_log` does (and
  reads the file as it does); prints the import's own time, the samples stored per
  second, and the child's peak resident memory above what it held before the import;
- api: `POST /api/v1/imports` to a fresh uvicorn (as `make start` serves it): the
  request's time, the server's peak resident memory above its memory before, and the
  size of the answer.

--max-log-mb raises the size limit for the run (BENCHDASH_MAX_LOG_MB) so that the
oltp log of a million lines may be imported. Min / median / max over the repeats, with
the load average before and after: other people's work shares this machine.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

TARGET = "bench-import"
LINES = {
    "cpu": "[ {t}s ] thds: 1 eps: {eps} lat (ms,95%): {lat:.2f}\n",
    "sql": (
        "[ {t}s ] thds: 4 tps: {tps:.2f} qps: {qps:.2f} (r/w/o: {r:.2f}/{w:.2f}/{o:.2f}) "
        "lat (ms,95%): {lat:.2f} err/s: 0.00 reconn/s: 0.00\n"
    ),
}
HEADER = (
    "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nRunning the test with following "
    "options:\nNumber of threads: {threads}\nReport intermediate results every 1 second(s)\n\n"
)


def write_log(path: Path, kind: str, lines: int) -> None:
    with path.open("w") as out:
        out.write(HEADER.format(threads=1 if kind == "cpu" else 4))
        for t in range(1, lines + 1):
            tps = 2000 + (t * 7919) % 500
            out.write(
                LINES[kind].format(
                    t=t,
                    eps=100 + (t * 7919) % 900,
                    lat=2 + (t % 13) / 10,
                    tps=tps,
                    qps=tps * 20,
                    r=tps * 14,
                    w=tps * 4,
                    o=tps * 2,
                )
            )


def target() -> Any:
    from runs.models import Target

    return Target.objects.get_or_create(
        name=TARGET,
        defaults={"engine": "mariadb", "host": "127.0.0.1", "port": 3999, "database": "sbtest",
                  "user": "bench"},
    )[0]  # fmt: skip


def child(path: str) -> None:
    """One import in this process: its time, samples, and memory above the start."""
    django.setup()
    from runs.errors import InvalidInput
    from runs.services.imports.importer import log_import

    before = _status_kb("VmRSS")
    began = time.perf_counter()
    try:
        samples = _import(path, log_import)
    except InvalidInput as e:
        print(json.dumps({"refused": str(e)}))
        return
    elapsed = time.perf_counter() - began
    # VmHWM is this program's own peak; getrusage's ru_maxrss would carry the parent's
    # from before the fork.
    peak = _status_kb("VmHWM")
    figures = {"seconds": elapsed, "samples": samples, "before_kb": before, "peak_kb": peak}
    print(json.dumps(figures))


def _import(path: str, log_import: Any) -> int:
    with open(path, "rb") as log:
        if "log" in inspect.signature(log_import).parameters:
            return int(log_import(log=log, target=target()).sample_count)
        # before the streaming import: the command read the whole file first
        text = log.read().decode("utf-8", errors="replace")
        return len(log_import(text=text, target=target()).result.samples)


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field}")


def through_cli(path: Path, env: dict[str, str]) -> dict[str, Any]:
    from bench.serving import run_child

    out = run_child([sys.executable, __file__, "--child", str(path)], env)
    result = json.loads(out)
    if "refused" in result:
        return {"status": 413, **result}
    result["grew_mb"] = (result["peak_kb"] - result["before_kb"]) / 1024
    return result


def through_api(path: Path, env: dict[str, str]) -> dict[str, Any]:
    import requests

    from bench.serving import Server, api_token

    headers = {"Authorization": f"Token {api_token()}"}
    with Server(env=env) as server:
        requests.get(server.url + "/api/v1/batches", headers=headers, timeout=30)  # warm
        before = server.memory_kb("VmRSS")
        began = time.perf_counter()
        with path.open("rb") as log:
            answer = requests.post(
                server.url + "/api/v1/imports",
                files={"log": (path.name, log)},
                data={"target": str(target().pk)},
                headers=headers,
                timeout=3600,
            )
        elapsed = time.perf_counter() - began
        peak = server.memory_kb("VmHWM")
    is_json = answer.headers.get("Content-Type", "").startswith("application/json")
    body = answer.json() if is_json else {}
    samples = body.get("sample_count", len(body.get("samples") or []))
    return {"status": answer.status_code, "seconds": elapsed, "samples": samples,
            "grew_mb": (peak - before) / 1024, "answer_bytes": len(answer.content)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child")
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kinds", default="cpu,sql")
    parser.add_argument("--paths", default="cli,api")
    parser.add_argument("--max-log-mb", default="200")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "imports.json"))
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    django.setup()
    from django.core.management import call_command

    from bench._harness import write_result
    from bench.serving import load, spread

    call_command("migrate", verbosity=0)
    env = {"BENCHDASH_MAX_LOG_MB": args.max_log_mb}
    results: dict[str, Any] = {"load_before": load()}
    print(f"load average before: {results['load_before']}")
    print("| log | path | seconds min / median / max | samples/s | memory growth MB | answer |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            path = Path(tmp) / f"{kind}-{args.lines}.log"
            write_log(path, kind, args.lines)
            for how in args.paths.split(","):
                runs = [(through_cli if how == "cli" else through_api)(path, env)
                        for _ in range(args.repeats)]  # fmt: skip
                results[f"{kind} {how}"] = runs
                print(_row(kind, path, how, runs, spread), flush=True)
    results["load_after"] = load()
    print(f"load average after: {results['load_after']}")
    write_result(args.out, results, indent=1)


def _row(kind: str, path: Path, how: str, runs: list[dict[str, Any]], spread: Any) -> str:
    size = path.stat().st_size / 1e6
    if any(r.get("status", 201) >= 400 for r in runs):
        why = runs[0].get("refused") or f"HTTP {runs[0]['status']}"
        grew = spread([r["grew_mb"] for r in runs]) if "grew_mb" in runs[0] else ""
        return f"| {kind}, {size:.0f} MB | {how} | refused: {why} | | {grew} | |"
    rates = [r["samples"] / r["seconds"] for r in runs]
    answer = f"{runs[0]['answer_bytes'] / 1e6:,.2f} MB" if "answer_bytes" in runs[0] else ""
    return (
        f"| {kind}, {runs[0]['samples']:,} samples, {size:.0f} MB | {how} | "
        f"{spread([r['seconds'] for r in runs])} | {spread(rates)} | "
        f"{spread([r['grew_mb'] for r in runs])} | {answer} |"
    )


if __name__ == "__main__":
    main()
