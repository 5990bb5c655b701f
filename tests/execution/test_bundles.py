"""Lua bundles end to end: the TPC-C-shaped test bundle (an entry script requiring its
siblings, its own options, commands and report hook: tests/fixtures/lua/tpcc_like/) through
prepare, run, check and cleanup with a real worker, on the local host and over the
loopback sshd, against a private MariaDB and a private PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.db import transaction
from django.urls import reverse

from runs.errors import InvalidInput
from runs.models import LaunchedBy, Status, Target
from runs.services import batches
from runs.services.nightly import schedules
from runs.services.scripts import luascripts
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TPCC_LIKE = Path(__file__).parent.parent / "fixtures" / "lua" / "tpcc_like"
OPTIONS = {
    "time": 3,
    "report-interval": 1,
    "script_options": {"scale": 2, "tables": 2, "report_csv": "yes"},
}


@pytest.fixture
def script_author(transactional_db, django_user_model):
    user = django_user_model.objects.create_user("author")
    user.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    return django_user_model.objects.get(pk=user.pk)  # a fresh permission cache


@pytest.fixture
def bundle(script_author):
    files = {path.name: path.read_text() for path in TPCC_LIKE.glob("*.lua")}
    return luascripts.luascript_upload(user=script_author, name="tpcc-like", files=files)


@pytest.fixture
def pg_target(transactional_db, postgres_server) -> Iterator[Target]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    with postgres_server.connect() as db:
        db.execute(f'CREATE DATABASE "{name}"')
    yield Target.objects.create(
        name="private-postgres",
        engine="postgresql",
        host=postgres_server.host,
        port=postgres_server.port,
        database=name,
        user=postgres_server.user,
        password="",
    )
    with postgres_server.connect() as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def assert_the_bundle_ran(batch) -> None:
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    assert [s["kind"] for s in batch.stages] == ["prepare", "check", "cleanup"], batch.stages
    assert all(not s.get("error") for s in batch.stages), batch.stages
    check = next(s for s in batch.stages if s["kind"] == "check")
    assert "Checked table set 2: consistent" in check["output"]
    run = batch.runs.get()
    assert run.argv[2].endswith("/tpcc_like.lua")  # next to its siblings
    assert {"--scale=2", "--tables=2", "--report_csv=yes", "--threads=2"} <= set(run.argv)
    # The report hook printed CSV lines instead of sysbench's interval lines: they are
    # the run's samples.
    assert run.samples.count() >= 2
    assert "[ 1s ]" not in run.raw_log
    assert run.summary["transactions"] > 0
    # The usual results: the load host's metrics on sysbench's clock, and a verdict on
    # what limited the run.
    assert run.host_metrics.filter(role="load").count() >= 2
    assert run.bottleneck.get("kind"), run.bottleneck
    frozen = batch.params["script"]
    assert (frozen["entry"], frozen["version"]) == ("tpcc_like.lua", 1)
    assert sorted(frozen["files"]) == [
        "tpcc_like_check.lua",
        "tpcc_like_common.lua",
        "tpcc_like_run.lua",
    ]
    assert frozen["options"] == {"report_csv": "yes", "scale": 2, "tables": 2}


def test_the_bundle_runs_on_the_local_host_against_mariadb(
    celery_worker, make_plan, bundle, mariadb_server, mariadb_db, client, script_author
):
    plan = make_plan(test="oltp_read_write", script=bundle, options=OPTIONS, threads=[2])

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert_the_bundle_ran(batch)
    client.force_login(script_author)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert 'id="batch-stages"' in page and "Checked table set 2: consistent" in page
    db = mariadb_server.connect(mariadb_db)
    try:
        cursor = db.cursor()
        cursor.execute("SHOW TABLES LIKE 'tpl_%'")
        assert cursor.fetchall() == ()  # cleanup dropped them
    finally:
        db.close()


def test_the_bundle_runs_from_a_schedule_on_the_local_host_against_postgres(
    celery_worker, make_plan, bundle, pg_target, postgres_server
):
    plan = make_plan(
        target=pg_target, test="oltp_read_write", script=bundle, options=OPTIONS, threads=[2]
    )

    with transaction.atomic():  # as the beat's task fires it
        fired = schedules.plan_launch_scheduled(plan_id=plan.pk)
    assert fired is not None
    batch = wait_for_batch(fired)

    assert_the_bundle_ran(batch)
    assert batch.launched_by == LaunchedBy.SCHEDULE
    with postgres_server.connect(pg_target.database) as db:
        left = db.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'tpl_%'").fetchall()
    assert left == []


def test_the_bundle_runs_over_ssh(celery_worker, make_plan, bundle, ssh_host):
    plan = make_plan(
        load_host=ssh_host, test="oltp_read_write", script=bundle, options=OPTIONS, threads=[2]
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert_the_bundle_ran(batch)
    assert batch.environment["load_host"]["host"] == "loadhost-1"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({**OPTIONS, "script_options": {"scale": "many"}}, "options.script_options.scale"),
        (
            {**OPTIONS, "script_options": {"trx_level": "RC'; DROP TABLE x"}},
            "options.script_options.trx_level",
        ),
        ({**OPTIONS, "script_options": {"warehouses": 3}}, "options.script_options.warehouses"),
        ({**OPTIONS, "table-size": 100}, "table-size"),
    ],
)
def test_wrong_options_of_the_bundle_are_refused_before_anything_runs(
    make_plan, bundle, options, field
):
    plan = make_plan(test="oltp_read_write", script=bundle, options=options)

    with pytest.raises(InvalidInput) as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == field
    assert not plan.batches.exists()


def test_an_axis_over_an_option_the_bundle_does_not_declare_is_refused(make_plan, bundle):
    plan = make_plan(
        test="oltp_read_write", script=bundle, options=OPTIONS, option_axes={"table-size": [10, 20]}
    )

    with pytest.raises(InvalidInput, match="declares no option table-size"):
        batches.batch_launch(plan=plan)


def test_a_plan_without_a_script_takes_no_script_options(make_plan):
    plan = make_plan(options={**OPTIONS, "tables": 1})

    with pytest.raises(InvalidInput) as refused:
        batches.batch_launch(plan=plan)

    assert refused.value.field == "options.script_options"
