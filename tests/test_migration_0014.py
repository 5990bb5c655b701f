"""Migration 0014 (issue 46): targets opted into restarts by a user who may not manage
restarts lose the opt-in, with a line in the log naming the target and its owner; an old
service's argv is named again after the operator's command that gives exactly it, or the
opt-in goes. The function the migration runs, on real rows (the test database)."""

from __future__ import annotations

import importlib
import logging

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission

from runs.models import Target

migration = importlib.import_module("runs.migrations.0014_restarts_an_operators_act")
MANAGED = {"installs": [{"label": "x", "basedir": "/usr", "datadir": "/var/lib/mysql"}]}
OLD_SERVICE = {"command": ["/usr/bin/systemctl", "restart", "mariadb"],
               "include": "/etc/mysql/conf.d/99-benchdash.cnf"}  # fmt: skip


def make(name: str, owner, mode: str = "managed", config: dict | None = None) -> Target:
    return Target.objects.create(
        name=name, host="127.0.0.1", port=3306, user="bench", created_by=owner,
        restart_mode=mode, restart_config=MANAGED if config is None else config,
    )  # fmt: skip


@pytest.fixture
def people(db, django_user_model):
    make_user = django_user_model.objects.create_user
    granted, by_group = make_user("gina"), make_user("greg")
    granted.user_permissions.add(Permission.objects.get(codename="manage_restarts"))
    group = Group.objects.create(name="operators")
    group.permissions.add(Permission.objects.get(codename="manage_restarts"))
    by_group.groups.add(group)
    return {
        "outsider": make_user("olga"),
        "staff": make_user("stan", is_staff=True),
        "root": django_user_model.objects.create_superuser("root"),
        "granted": granted,
        "by_group": by_group,
    }


def test_an_opt_in_by_a_user_who_may_not_manage_restarts_is_turned_off(people, caplog):
    targets = {name: make(f"t-{name}", user) for name, user in people.items()}
    never = make("never", people["outsider"], mode="", config={})
    ownerless = make("ownerless", None)

    with caplog.at_level(logging.WARNING, logger="runs.migrations.restarts"):
        changed = migration.opt_ins_checked(apps)

    assert changed == ["t-outsider"]
    after = {t.name: (t.restart_mode, t.restart_config) for t in Target.objects.all()}
    assert after["t-outsider"] == ("", {})
    for name in ("staff", "root", "granted", "by_group"):
        assert after[targets[name].name] == ("managed", MANAGED), name
    assert after[never.name] == ("", {}) and after[ownerless.name] == ("managed", MANAGED)
    [line] = caplog.messages
    assert "target t-outsider: restarts turned off: its owner olga may not" in line
    assert "runs.manage_restarts" in line


def test_an_old_argv_is_named_after_the_operators_command_or_turned_off(people, settings, caplog):
    settings.BENCHDASH_RESTART_COMMANDS = {"systemd": ["/usr/bin/systemctl", "restart", "{unit}"]}
    named = make("named", people["granted"], "service", OLD_SERVICE)
    shell = make("shell", people["staff"], "service",
                 {**OLD_SERVICE, "command": ["/bin/sh", "-c", "id"]})  # fmt: skip

    with caplog.at_level(logging.WARNING, logger="runs.migrations.restarts"):
        changed = migration.opt_ins_checked(apps)

    assert sorted(changed) == ["named", "shell"]
    named.refresh_from_db()
    assert named.restart_config == {**OLD_SERVICE, "command": "systemd",
                                    "values": {"unit": "mariadb"}}  # fmt: skip
    shell.refresh_from_db()
    assert (shell.restart_mode, shell.restart_config) == ("", {})
    said = "\n".join(caplog.messages)
    assert "target named: its restart command is now the operator's systemd" in said
    assert (
        "target shell (owner stan): restarts turned off: its restart command /bin/sh -c id" in said
    )
    assert migration.opt_ins_checked(apps) == []  # a second run finds nothing to do
