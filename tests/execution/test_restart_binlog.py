"""The write-up's startup flags as a configs axis: a snippet turns the binary log on
(`log_bin` with its `server_id`) or off (`skip_log_bin`), on a managed mariadbd of the
test's own whose own config keeps it off; the binary log's files land in the instance's
own data directory, each restart is read back (log_bin ON / OFF) and the original put
back. `log_bin = /tmp/x` is refused by the rule that keeps file paths out."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runs.errors import InvalidInput
from runs.execution.restarts.spec import FILE_RULE, config_options, include_text, restart_options
from runs.models import Status
from runs.services import batches, plans
from tests.execution.test_restarts import make_plan, managed_instance, managed_target
from tests.helpers import global_variable, wait_for_batch
from tests.servers import PrivateMariaDB

BINLOG_ON = "log_bin\nserver_id = 1\nsync_binlog = 1"


@pytest.fixture
def managed_without_binlog() -> Iterator[PrivateMariaDB]:
    for server in managed_instance(PrivateMariaDB(log_bin=False)):
        config = server.dir / "my.cnf"  # the instance's own config: no binary log
        lines = config.read_text().splitlines(keepends=True)
        config.write_text("".join(x for x in lines if "log-bin" not in x and "server-id" not in x))
        yield server


def test_a_snippet_turns_the_binary_log_on_or_off_and_names_no_path():
    assert config_options("mariadb", BINLOG_ON) == [
        ("log_bin", "ON"), ("server_id", "1"), ("sync_binlog", "1")
    ]  # fmt: skip
    on = restart_options("mariadb", config_text=BINLOG_ON, settings={})
    assert "[mysqld]\nlog_bin\nserver_id = 1\n" in include_text("mariadb", on)  # bare, as written
    assert on.wanted()["log_bin"] == "ON"
    off = restart_options("mariadb", config_text="skip-log-bin", settings={})
    assert off.wanted() == {"log_bin": "OFF"} and "\nskip_log_bin\n" in include_text("mariadb", off)
    assert config_options("mariadb", "disable_log_bin") == [("disable_log_bin", "ON")]
    assert config_options("mariadb", "log_bin = bench-bin") == [("log_bin", "bench-bin")]
    for path in ("/tmp/x", "../x", "x/y", "'/tmp/x'"):
        with pytest.raises(InvalidInput, match="a file stays in the data directory") as refused:
            config_options("mariadb", f"log_bin = {path}", "b1")
        assert str(refused.value.message).endswith(FILE_RULE)
    for other in ("log_bin_index = x", "general_log_file = x", "datadir = x"):
        with pytest.raises(InvalidInput, match="a file stays in the data directory"):
            config_options("mariadb", other)
    with pytest.raises(InvalidInput, match="write skip_log_bin to turn it off"):
        config_options("mariadb", "log_bin = OFF")
    with pytest.raises(InvalidInput, match="never changed"):
        config_options("postgresql", "log_bin = x")


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_configs_axis_turns_the_binary_log_on_and_off_read_back_and_put_back(
    celery_worker, local_host, managed_without_binlog
):
    server = managed_without_binlog
    assert global_variable(server, "log_bin") == "0"
    plan = make_plan(
        managed_target(server),
        local_host,
        servers={
            "configs": [
                {"label": "b1", "text": BINLOG_ON},
                {"label": "b0", "text": "skip_log_bin\nserver_id = 1"},
            ],
            "after_restart": "cold",
        },
        repeats=1,
    )
    assert plans.plan_check(plan=plan, contact_server=False).cells
    batch = wait_for_batch(batches.batch_launch(plan=plan), timeout=300)

    # Each cell ran only once its server showed log_bin as the snippet set it (a restart
    # read back otherwise fails its cell, "log_bin=ON did not take").
    assert batch.status == Status.DONE, (batch.error, list(batch.runs.values("config", "error")))
    assert {r.config for r in batch.runs.all()} == {"b1", "b0"}
    restarts = [s for s in batch.stages if s["kind"] == "restart"]
    assert len(restarts) == 2 and all(s["ok"] for s in restarts), restarts
    # The binary log was written under b1, in the instance's own data directory.
    assert list(server.datadir.glob("*-bin.000001")), sorted(
        p.name for p in server.datadir.iterdir()
    )
    assert global_variable(server, "log_bin") == "0"  # the original back
    assert batch.put_back[str(plan.target_id)]["running"] is None


@pytest.mark.django_db
def test_a_plans_log_bin_with_a_path_is_refused_naming_the_rule(local_host, mariadb_server):
    plan = make_plan(
        managed_target(mariadb_server),
        local_host,
        servers={"configs": [{"label": "b1", "text": "log_bin = /tmp/x\nserver_id = 1"}]},
    )
    with pytest.raises(InvalidInput, match="a file stays in the data directory") as refused:
        plans.plan_check(plan=plan, contact_server=False)
    assert "b1" in str(refused.value) and "line 1: log_bin" in str(refused.value)
