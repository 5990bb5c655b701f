"""A script's whole day through real HTTP with a token: a target on the private MariaDB,
a plan, a launch, the samples tailed until the end, the summary; then the example script
does the same."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from runs.models import Sample

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def plan_id(api, mariadb_server, mariadb_db, local_host) -> int:
    target = api.post(
        "/api/v1/targets",
        json={
            "name": "private-mariadb",
            "engine": "mariadb",
            "host": "127.0.0.1",
            "port": mariadb_server.port,
            "database": mariadb_db,
            "user": mariadb_server.user,
            "password": mariadb_server.password,
        },
    )
    assert target.status_code == 201, target.text
    plan = api.post(
        "/api/v1/plans",
        json={
            "name": "inserts over HTTP",
            "target": target.json()["id"],
            "load_host": local_host.pk,
            "test": "oltp_insert",
            "options": {"time": 3, "report-interval": 1, "tables": 1, "table-size": 100},
            "threads": [1, 2],
            "dataset_policy": "fresh",
        },
    )
    assert plan.status_code == 201, plan.text
    return int(plan.json()["id"])


def tail(api, batch_id: int, timeout: float = 180) -> tuple[dict, dict[int, list[int]]]:
    """Poll the batch and its current run's samples with after=, as a script would."""
    seen: dict[int, list[int]] = {}
    finished: set[int] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch = api.get(f"/api/v1/batches/{batch_id}").json()
        if batch["current_run"]:
            seen.setdefault(batch["current_run"]["id"], [])
        if batch["status"] in {"done", "failed", "cancelled", "interrupted"}:
            for run in api.all_pages(f"/api/v1/batches/{batch_id}/runs"):
                seen.setdefault(run["id"], [])
        for run_id in set(seen) - finished:
            after = seen[run_id][-1] if seen[run_id] else 0
            page = api.get(f"/api/v1/runs/{run_id}/samples?after={after}").json()
            seen[run_id] += [s["seq"] for s in page["results"]]
            if page["finished"]:
                finished.add(run_id)
        if batch["status"] in {"done", "failed", "cancelled", "interrupted"} and finished == set(
            seen
        ):
            return batch, seen
        time.sleep(0.3)
    raise AssertionError(f"batch {batch_id} did not end in {timeout}s")


def test_a_script_launches_a_plan_tails_its_samples_and_reads_the_summary(
    api, plan_id, celery_worker, mariadb_server
):
    launched = api.post(f"/api/v1/plans/{plan_id}/launch")
    assert launched.status_code == 201, launched.text
    assert launched.json()["runs_total"] == 2
    assert launched.json()["launched_by"] == "api"
    assert launched.json()["launched_by_user"] == "owner"

    batch, seen = tail(api, launched.json()["id"])

    assert batch["status"] == "done", batch
    assert (batch["runs_done"], batch["current_run"]) == (2, None)
    for run_id, seqs in seen.items():
        # Every sample once, in order, none missed.
        assert seqs == list(range(1, len(seqs) + 1))
        assert len(seqs) == Sample.objects.filter(run_id=run_id).count() >= 2
    runs = api.all_pages(f"/api/v1/batches/{batch['id']}/runs")
    assert sorted(r["threads"] for r in runs) == [1, 2]
    for run in runs:
        detail = api.get(f"/api/v1/runs/{run['id']}").json()
        assert detail["status"] == "done"
        assert detail["summary"]["tps"] > 0
        assert detail["summary"]["transactions"] > 0
        assert detail["environment"]["server"]["variables"]["log_bin"] == "ON"
    listed = api.get(f"/api/v1/batches?plan={plan_id}&status=done").json()
    assert [b["id"] for b in listed["results"]] == [batch["id"]]
    assert not any(mariadb_server.password in body for body in api.bodies)


def test_the_example_script_launches_waits_and_prints_the_summary(
    api, plan_id, celery_worker, live_server, owner_token
):
    script = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "launch_and_wait.py"), str(plan_id)],
        env={"BENCHDASH_URL": live_server.url, "BENCHDASH_TOKEN": owner_token, "PATH": ""},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )

    assert script.returncode == 0, script.stdout + script.stderr
    lines = script.stdout.splitlines()
    assert any(" tps " in line and "thds 2" in line for line in lines), script.stdout
    header = next(i for i, line in enumerate(lines) if line.startswith("threads"))
    assert [c.strip() for c in lines[header].split("|")] == [
        "threads",
        "settings",
        "tps",
        "qps",
        "p95",
        "errors",
    ]
    rows = [line.split("|") for line in lines[header + 2 : header + 4]]
    assert sorted(int(r[0]) for r in rows) == [1, 2]
    assert all(float(r[2]) > 0 for r in rows), rows
