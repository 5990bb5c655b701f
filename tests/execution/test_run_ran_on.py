"""Every run says what it ran on, read from its own server once its settings were applied
(after its restart, when it had one): the target's address and version, the binary and
base directory, the config it ran with and each of that config's settings read back,
the variables that differ from its own target's snapshot; restart stages say which
target started with what, and the version it answered with."""

from __future__ import annotations

import pytest

from runs.models import PlanServer, Status
from runs.services import batches, run_selectors
from tests.execution.test_restarts import make_plan as restart_plan
from tests.execution.test_restarts import managed, managed_target  # noqa: F401 fixture
from tests.execution.test_targets_axis import second_db, second_target  # noqa: F401 fixtures
from tests.helpers import global_variable, wait_for_batch

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FLUSH = "innodb_flush_log_at_trx_commit"
TINY = {"time": 1, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 20}
CONFIGS = {
    "b1e1": {"sync_binlog": "1", FLUSH: "1"},
    "b0e0": {"sync_binlog": "0", FLUSH: "0"},
}


def snippet(values: dict[str, str]) -> str:
    return "[mysqld]\n" + "".join(f"{name} = {value}\n" for name, value in values.items())


def test_each_run_of_a_configs_axis_records_its_config_read_back_and_version(
    celery_worker,
    local_host,
    managed,  # noqa: F811
):
    target = managed_target(managed)
    originals = {name: global_variable(managed, name) for name in ("sync_binlog", FLUSH)}
    plan = restart_plan(
        target,
        local_host,
        test="oltp_insert",
        options=TINY,
        repeats=1,
        servers={
            "configs": [{"label": k, "text": snippet(v)} for k, v in CONFIGS.items()],
            "after_restart": "cold",
        },
    )
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    version = global_variable(managed, "version")
    for run in batch.runs.order_by("position"):
        wanted = CONFIGS[run.config]
        config = run.environment["config"]
        assert config["label"] == run.config
        assert config["text"] == snippet(wanted)
        assert config["settings"] == wanted
        assert config["verified"] == wanted  # read back from the server, as it shows them
        assert config["not_taken"] == []
        assert {n: run.verified_settings[n] for n in wanted} == wanted
        server = run.environment["server"]
        assert server["version"] == version
        assert server["basedir"] == "/usr"
        assert server["binary"].endswith(("mariadbd", "mysqld"))
        assert server["install"] == "10.11"
        assert run.environment["target"]["port"] == managed.port
        assert run.environment["target"]["host"] == managed.host
        # b0e0 moved the variables off the batch's snapshot (the original config: 1 and 1)
        assert {n: v for n, v in wanted.items() if v != originals[n]} == {
            n: v for n, v in server["variables"].items() if n in wanted
        }
        shown = run_selectors.run_environment(run)
        assert shown["server"]["variables"]["sync_binlog"] == wanted["sync_binlog"]
        assert shown["config"]["verified"] == wanted

    restarts = [s for s in batch.stages if s["kind"] in ("restart", "restore")]
    assert [s["kind"] for s in restarts][-1] == "restore"
    for stage in restarts:
        assert stage["target"] == target.pk
        assert stage["install"] == "10.11"
        assert stage["version"] == version, stage
    assert sorted(s["config"] for s in restarts if s["kind"] == "restart") == sorted(CONFIGS)
    assert [s["config"] for s in restarts if s["kind"] == "restore"] == [""]
    assert {n: global_variable(managed, n) for n in originals} == originals


def server_port(server) -> int:
    return int(global_variable(server, "port"))


def test_each_target_s_runs_carry_its_own_address_version_and_variables(
    celery_worker,
    make_plan,
    target,
    second_target,  # noqa: F811
    mariadb_server,
    mariadb_nobinlog_server,
):
    servers = {target.pk: mariadb_server, second_target.pk: mariadb_nobinlog_server}
    originals = {pk: global_variable(s, FLUSH) for pk, s in servers.items()}
    plan = make_plan(
        test="oltp_insert",
        options=TINY,
        threads=[1],
        server_settings={FLUSH: ["2"]},
        repeats=1,
    )
    PlanServer.objects.create(plan=plan, target=second_target, position=1)

    batch = wait_for_batch(batches.batch_launch(plan=plan, launched_by="api"))

    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("error")))
    recorded = batch.environment["targets"]
    for pk, server in servers.items():  # every target, the batch's own first
        assert recorded[str(pk)]["port"] == server_port(server)
        assert recorded[str(pk)]["host"] == "127.0.0.1"
        assert recorded[str(pk)]["version"] == global_variable(server, "version")
    assert list(recorded) == [str(target.pk), str(second_target.pk)]
    runs = list(batch.runs.order_by("position"))
    assert {r.target_id for r in runs} == set(servers)
    for run in runs:
        server = servers[run.target_id]
        assert run.environment["target"]["id"] == run.target_id
        assert run.environment["target"]["port"] == server_port(server)
        assert run.environment["server"]["version"] == global_variable(server, "version")
        # Compared with its own target's snapshot: the two servers' own differences (the
        # port, the binary log) are not this run's changes.
        changed = run.environment["server"]["variables"]
        assert changed == ({FLUSH: "2"} if originals[run.target_id] != "2" else {}), changed
        shown = run_selectors.run_environment(run)
        assert shown["server"]["variables"]["port"] == str(server_port(server))
        log_bin = {"1": "ON", "0": "OFF"}[global_variable(server, "log_bin")]
        assert shown["server"]["variables"]["log_bin"] == log_bin
        assert shown["server"]["variables"][FLUSH] == "2"
        assert run_selectors.run_server_before(run)[FLUSH] == originals[run.target_id]
