"""A TPC-C-shaped bundle that prints its intermediate report from Lua, in the form of
`sysbench.report_default` (`err/s 0.00`, no colon) with spacing of its own
(tests/fixtures/lua/tpcc_print/), run end to end by a real worker on the private MariaDB and
PostgreSQL, from the local host and over the loopback sshd: each interval line it printed
is a sample, its final report, printed from Lua too (one `thds: 0` line of the whole run's
rates, or a report_json object), is the run's summary, and its text option with a space
(`"COLLATE latin1_bin"`) reaches its prepare as one value."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from runs.models import Status, Target
from runs.services import batches
from runs.services.scripts import luascripts
from tests.helpers import wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TPCC_PRINT = Path(__file__).parent.parent / "fixtures" / "lua" / "tpcc_print"
OPTIONS = {
    "time": 4,
    "report-interval": 1,
    "percentile": 99,
    "script_options": {"scale": 2, "mysql_table_options": '"COLLATE latin1_bin"'},
}
INTERVAL_LINE = re.compile(r"^\[\s*\d+s\s*\]\s+thds: \d+ .* err/s \d", re.MULTILINE)
# sysbench.report_default's own line: the bundle's final report (the intervals have two spaces)
FINAL_LINE = re.compile(r"^\[ (\d+)s \] thds: 0 tps: ([\d.]+) .* err/s ([\d.]+) ", re.MULTILINE)


@pytest.fixture
def bundle(transactional_db, django_user_model):
    user = django_user_model.objects.create_user("printer")
    user.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    author = django_user_model.objects.get(pk=user.pk)  # a fresh permission cache
    files = {path.name: path.read_text() for path in TPCC_PRINT.glob("*.lua")}
    return luascripts.luascript_upload(user=author, name="tpcc-print", files=files)


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


def assert_every_interval_line_is_a_sample(batch, *, mariadb: bool) -> None:
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    assert [s["kind"] for s in batch.stages] == ["prepare", "cleanup"], batch.stages
    prepare = batch.stages[0]
    # The stages name the script's own data set, not an oltp one.
    assert prepare["dataset"] == [
        "tpcc_print.lua",
        "mysql_table_options=COLLATE latin1_bin",
        "scale=2",
    ]
    assert "Table options: [COLLATE latin1_bin]" in prepare["output"]
    if mariadb:
        assert "Table collation: latin1_bin" in prepare["output"]
    run = batch.runs.get()
    assert "--mysql_table_options=COLLATE latin1_bin" in run.argv
    [(seconds, tps, errors)] = FINAL_LINE.findall(run.raw_log)
    lines = [line for line in INTERVAL_LINE.findall(run.raw_log) if "] thds: 0 " not in line]
    assert len(lines) >= 3, run.raw_log
    assert "err/s:" not in run.raw_log  # the Lua form only
    assert "SQL statistics:" not in run.raw_log  # no report of sysbench's own
    samples = list(run.samples.order_by("seq"))
    assert len(samples) == len(lines)
    assert all(s.tps is not None and s.tps > 0 for s in samples[:-1])
    assert {s.latency_pct for s in samples} == {99.0}
    # The final report printed from Lua is the run's summary, not one more sample.
    summary = run.summary
    assert (summary["outcome"], summary["final_report"]) == ("ok", "lua")
    assert summary["tps"] == float(tps) and summary["total_time_s"] == float(seconds)
    assert summary["transactions"] == round(float(tps) * float(seconds)) > 0
    assert summary["errors"] == round(float(errors) * float(seconds))
    assert summary["latency_pct"] == 99.0 and summary["samples"] == len(lines)


def test_on_the_local_host_against_mariadb(
    celery_worker, make_plan, bundle, mariadb_db, client, django_user_model
):
    plan = make_plan(test="oltp_read_write", script=bundle, options=OPTIONS, threads=[2])

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert_every_interval_line_is_a_sample(batch, mariadb=True)
    client.force_login(django_user_model.objects.get(username="printer"))
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "prepare <code>tpcc_print.lua mysql_table_options=COLLATE latin1_bin scale=2" in page
    # The run page reads it as TPC-C: its warehouses, tps, ignored errors per second, and
    # says plainly that it prints no NewOrders, so no tpmC.
    run_page = client.get(reverse("run_live", args=[batch.runs.get().pk])).content.decode()
    assert 'id="run-tpcc"' in run_page
    assert '<td>warehouses</td><td class="num">2</td>' in run_page
    assert "The script does not print its NewOrder transactions, so no tpmC" in run_page
    assert 'id="run-tpcc-mix"' not in run_page


def test_a_json_final_report_on_the_local_host_against_mariadb(
    celery_worker, make_plan, bundle, mariadb_db
):
    script_options = {"scale": 2, "final_report": "json"}
    options = {**OPTIONS, "script_options": script_options}
    plan = make_plan(test="oltp_read_write", script=bundle, options=options, threads=[2])

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    run = batch.runs.get()
    assert '"threads": 0,' in run.raw_log
    final_tps = float(re.findall(r'"tps": ([\d.]+)', run.raw_log)[-1])
    assert run.samples.count() == len(INTERVAL_LINE.findall(run.raw_log))
    assert (run.summary["final_report"], run.summary["tps"]) == ("lua", final_tps)
    assert run.summary["transactions"] > 0


def test_on_the_local_host_against_postgres(celery_worker, make_plan, bundle, pg_target):
    plan = make_plan(
        target=pg_target, test="oltp_read_write", script=bundle, options=OPTIONS, threads=[2]
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert_every_interval_line_is_a_sample(batch, mariadb=False)


def test_over_ssh_against_mariadb(celery_worker, make_plan, bundle, mariadb_db, ssh_host):
    plan = make_plan(
        load_host=ssh_host, test="oltp_read_write", script=bundle, options=OPTIONS, threads=[2]
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert_every_interval_line_is_a_sample(batch, mariadb=True)


def test_over_ssh_against_postgres(celery_worker, make_plan, bundle, pg_target, ssh_host):
    plan = make_plan(
        target=pg_target,
        load_host=ssh_host,
        test="oltp_read_write",
        script=bundle,
        options=OPTIONS,
        threads=[2],
    )

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    assert_every_interval_line_is_a_sample(batch, mariadb=False)
