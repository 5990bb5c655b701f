"""A client generated from the schema works: openapi-python-client generates a package from
/api/v1/schema/, every module of it imports, and examples/client_tour.py (docs/api.md's
scripting example) drives the test server with it through a real worker: it creates a
plan, launches it twice, waits for each batch, reads the runs and their samples, and
compares the two batches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runs.models import Plan, Status

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
IMPORT_ALL = """
import importlib, pkgutil, benchdash_client
names = [m.name for m in pkgutil.walk_packages(benchdash_client.__path__, "benchdash_client.")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def generate(schema: str, where: Path) -> str:
    (where / "schema.json").write_text(schema)
    # Its formatting hooks run ruff, found on PATH.
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [BIN / "openapi-python-client", "generate", "--path", "schema.json", "--meta", "none",
         "--output-path", "benchdash_client"],
        cwd=where, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def python(where: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(where), **env},
        capture_output=True,
        text=True,
        timeout=400,
    )


def test_a_client_generated_from_the_schema_drives_the_api(
    api, owner_token, celery_worker, local_host, tmp_path
):
    schema = api.get("/api/v1/schema/", headers={"Accept": "application/json"})
    assert schema.status_code == 200
    said = generate(schema.text, tmp_path)
    assert "Warning" not in said, said

    imported = python(tmp_path, "-c", IMPORT_ALL)
    assert imported.returncode == 0, imported.stderr[-3000:]
    assert int(imported.stdout) > 60  # the API's operations and models

    tour = python(
        tmp_path,
        "examples/client_tour.py",
        "--load-host", str(local_host.pk), "--time", "2", "--name", "generated",
        BENCHDASH_URL=api.base_url,
        BENCHDASH_TOKEN=owner_token,
    )  # fmt: skip
    assert tour.returncode == 0, tour.stdout[-3000:] + tour.stderr[-3000:]

    plan = Plan.objects.get(name="generated")
    batches = list(plan.batches.order_by("pk"))
    assert [b.status for b in batches] == [Status.DONE, Status.DONE]
    out = tour.stdout
    assert f"plan {plan.pk} created" in out
    for batch in batches:
        assert f"batch {batch.pk}: done (2/2 runs)" in out
        for run in batch.runs.all():
            assert f"run {run.pk}: threads={run.threads} done, {run.samples.count()} samples" in out
    assert f"b{batches[1].pk} against b{batches[0].pk}:" in out
    assert "threads=1 " in out.split("against")[-1] and "threads=2 " in out.split("against")[-1]
