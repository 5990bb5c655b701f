"""The bench scripts' results database: two runs side by side, the environment's database
missing, each make one of their own and drop only that one, and say so (a run used to
make the environment's and drop it under the next run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[1]
# A bench run that stays in its results database until its stdin closes.
RUN = """
import os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
django.setup()
from django.db import connection
from bench._harness import results_database
with results_database() as name:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        print(name, cursor.fetchone()[0], os.environ["BENCHDASH_INSTALLATION"], flush=True)
    sys.stdin.readline()
"""


def databases(server) -> set[str]:
    with server.connect() as db:
        return {row[0] for row in db.execute("SELECT datname FROM pg_database").fetchall()}


def test_two_bench_runs_each_drop_only_the_results_database_they_made(postgres_server):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchdash.settings",
        "BENCHDASH_DB_HOST": postgres_server.host,
        "BENCHDASH_DB_PORT": str(postgres_server.port),
        "BENCHDASH_DB_USER": postgres_server.user,
        "BENCHDASH_DB_PASSWORD": "",
        "BENCHDASH_DB_NAME": "bench_missing",  # no such database: each run makes its own
    }
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RUN],
            cwd=ROOT,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    try:
        said = [run.stdout.readline().split() for run in runs]  # type: ignore[union-attr]
        (first, first_in, first_as), (second, second_in, second_as) = said
        assert first != second and first.startswith("bench_missing_bench_"), said
        assert (first_in, first_as) == (first, first) and (second_in, second_as) == (second, second)

        runs[0].stdin.close()  # type: ignore[union-attr]
        assert runs[0].wait(timeout=60) == 0
        told = runs[0].stderr.read()  # type: ignore[union-attr]
        assert f"no results database 'bench_missing': this run made '{first}'" in told
        assert f"dropped '{first}', the results database this run made" in told
        assert first not in databases(postgres_server)
        assert second in databases(postgres_server)  # the other run's, still there

        runs[1].stdin.close()  # type: ignore[union-attr]
        assert runs[1].wait(timeout=60) == 0
        assert second not in databases(postgres_server)
        assert "bench_missing" not in databases(postgres_server)
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
                run.wait()
