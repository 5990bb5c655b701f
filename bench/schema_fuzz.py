"""The long schemathesis run: every check and every phase against the API, for many cases.

    .venv/bin/python bench/schema_fuzz.py [--max-examples 240]    (or: make fuzz-api)

The same run as tests/api/test_schema.py (tests/api/fuzzing.py: its configuration, the
objects it starts from, the SSH load host whose port refuses at once), with the coverage
phase too and many more cases: benchdash served by uvicorn as `make start` serves it, on a
database of its own (`<BENCHDASH_DB_NAME>_fuzz`, dropped and made again). Prints and keeps
in bench/results/schema_fuzz.json the cases generated and the failures by check; the
report and schemathesis's own log stay in var/schema_fuzz/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
DATABASE = os.environ.get("BENCHDASH_DB_NAME", "benchdash") + "_fuzz"
os.environ["BENCHDASH_DB_NAME"] = DATABASE

import django  # noqa: E402
import requests  # noqa: E402

from bench._harness import write_result  # noqa: E402


def psql(sql: str) -> None:
    env = {**os.environ, "PGPASSWORD": os.environ.get("BENCHDASH_DB_PASSWORD", "")}
    subprocess.run(
        ["psql", "-h", os.environ.get("BENCHDASH_DB_HOST", "127.0.0.1"),
         "-p", os.environ.get("BENCHDASH_DB_PORT", "5432"),
         "-U", os.environ.get("BENCHDASH_DB_USER", "postgres"), "-d", "postgres", "-q", "-c", sql],
        check=True, env=env,
    )  # fmt: skip


def setup_database() -> None:
    psql(f'DROP DATABASE IF EXISTS "{DATABASE}"')
    psql(f'CREATE DATABASE "{DATABASE}"')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)


def seed() -> tuple[str, dict[str, int]]:
    from django.contrib.auth.models import User

    from runs.services import tokens
    from tests.api.fuzzing import seed_objects
    from tests.servers import free_port

    owner = User.objects.create_user("fuzz", password="fuzz-pass-1")  # noqa: S106
    ids = seed_objects(owner, refused_port=free_port())
    return tokens.token_create(user=owner, name="fuzz", expires_in=None)[1], ids


def serve(port: int, log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "uvicorn", "benchdash.asgi:application", "--port", str(port),
            "--log-level", "warning"]  # fmt: skip
    with log.open("ab") as out:
        web = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/api/v1/", timeout=10)
            return web
        except requests.RequestException:
            time.sleep(0.2)
    web.terminate()
    raise SystemExit(f"uvicorn did not answer on port {port}: see {log}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=240, help="Cases per operation.")
    args = parser.parse_args()
    setup_database()
    django.setup()
    from tests.api.fuzzing import failures_by_check, schemathesis_run
    from tests.servers import free_port

    token, ids = seed()
    workdir = ROOT / "var" / "schema_fuzz"
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    web = serve(port, workdir / "uvicorn.log")
    started = time.monotonic()
    try:
        report = schemathesis_run(
            base_url=f"http://127.0.0.1:{port}",
            token=token,
            ids=ids,
            workdir=workdir,
            max_examples=args.max_examples,
            timeout=6 * 3600,
        )
    finally:
        web.terminate()
        web.wait(timeout=30)
    result = {
        "schemathesis": report["schemathesis_version"],
        "max_examples": args.max_examples,
        "cases": report["test_cases"]["generated"],
        "operations": report["operations"]["tested"],
        "failures_by_check": failures_by_check(report),
        "errors": len(report["errors"]),
        "seconds": round(time.monotonic() - started),
        "load_average": os.getloadavg(),
    }
    write_result(ROOT / "bench" / "results" / "schema_fuzz.json", result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
