"""A target's page says how it restarts: its restart mode; a service's command (the
operator's, by name, its values and the argv that runs) and its include; a managed
instance's installs; its timeout; a config refused now, and why. Never a secret: the
target's password, or a word of the operator's argv that reads as one. And the batch
page shows a restart in progress as a stage, "running…"."""

from __future__ import annotations

import pytest

from runs.models import Target

pytestmark = pytest.mark.django_db

COMMANDS = {
    "systemd": ["/bin/systemctl", "restart", "{unit}"],
    "wrapped": ["/usr/local/bin/restart-db", "--password=op-secret-pw", "{unit}"],
}


@pytest.fixture
def operator(settings):
    settings.BENCHDASH_RESTART_COMMANDS = COMMANDS
    settings.BENCHDASH_RESTART_INCLUDE_DIRS = ["/etc/mysql/mariadb.conf.d"]
    settings.BENCHDASH_RESTART_INSTALL_ROOTS = []


def target(mode: str, config: dict, name: str = "db") -> Target:
    return Target.objects.create(
        name=name, engine="mariadb", host="127.0.0.1", port=3306, database="sbtest",
        user="bench", password="target-pw-never-shown", restart_mode=mode,
        restart_config=config,
    )  # fmt: skip


def restarts_of(client, t: Target) -> str:
    page = client.get(f"/targets/{t.pk}/").content.decode()
    assert "target-pw-never-shown" not in page
    return page.split('id="target-restart"', 1)[1].split("</dl>", 1)[0]


def test_a_managed_target_shows_its_installs(client_in, operator):
    install = {"label": "10.11", "basedir": "/usr", "datadir": "/srv/db/data",
               "config": "/srv/db/my.cnf"}  # fmt: skip
    shown = restarts_of(client_in, target("managed", {"installs": [install], "timeout_s": 90}))
    assert "managed: benchdash stops and starts the server itself" in shown
    for word in ("10.11", "/usr", "/srv/db/data", "/srv/db/my.cnf", "90 s"):
        assert word in shown, word


def test_a_service_target_shows_the_operators_command_and_its_include(client_in, operator):
    config = {"command": "systemd", "values": {"unit": "mariadb"},
              "include": "/etc/mysql/mariadb.conf.d/99-benchdash.cnf"}  # fmt: skip
    shown = restarts_of(client_in, target("service", config))
    assert "service: the operator's command restarts it" in shown
    assert "systemd" in shown and "unit=" in shown
    assert "/bin/systemctl restart mariadb" in shown
    assert "/etc/mysql/mariadb.conf.d/99-benchdash.cnf" in shown
    assert "include folders allowed: /etc/mysql/mariadb.conf.d)" in shown


def test_a_word_of_the_operators_argv_that_holds_a_secret_is_hidden(client_in, operator):
    config = {"command": "wrapped", "values": {"unit": "mariadb"},
              "include": "/etc/mysql/mariadb.conf.d/99-benchdash.cnf"}  # fmt: skip
    shown = restarts_of(client_in, target("service", config))
    assert "op-secret-pw" not in shown
    assert "/usr/local/bin/restart-db --password=******** mariadb" in shown


def test_a_refused_config_and_no_restart_are_said(client_in, operator):
    refused = restarts_of(client_in, target("service", {"command": "gone"}, name="old"))
    assert "Refused" in refused and "not one of the restart commands" in refused
    assert "never restarted" in restarts_of(client_in, target("", {}, name="plain"))


def test_a_restart_in_progress_is_a_stage_of_the_batch_page(client_in, make_batch):
    running = {"kind": "restart", "group": 0, "dataset": [], "status": "running",
               "reason": "before run 1: config=b1", "started_at": "2026-01-02T03:04:05+00:00",
               "finished_at": None, "seconds": None, "ok": None, "error": "", "output": "",
               "exit_code": None}  # fmt: skip
    batch = make_batch(status="running", stages=[running])
    page = client_in.get(f"/batches/{batch.pk}/").content.decode()
    row = page.split('id="batch-stages"', 1)[1].split("</tr>", 2)[1]
    assert "restart" in row and "before run 1: config=b1" in row and "running…" in row
