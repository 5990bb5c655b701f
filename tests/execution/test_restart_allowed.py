"""What the operator allowed restarts to run and write, and a target's choices checked
against it (runs/execution/restarts/allowed.py, pure): a target names a command of the
operator's, never an argv; each placeholder's value is one word, never a path or an
option; the include is inside an operator's folder."""

from __future__ import annotations

import pytest

from runs.errors import InvalidInput
from runs.execution.restarts.allowed import (
    Allowed,
    OperatorSettingError,
    allowed_parse,
    include_checked,
    install_path_checked,
    service_argv,
    template_values,
)
from runs.execution.restarts.spec import restart_spec

SYSTEMD = ["/usr/bin/systemctl", "restart", "{unit}"]
ALLOWED = allowed_parse(
    {"systemd": SYSTEMD, "pg": ["/usr/bin/pg_ctlcluster", "{version}", "{cluster}", "restart"]},
    ["/etc/mysql/conf.d", "/etc/postgresql/"],
    [],
)


def test_a_command_is_the_operators_template_with_one_word_per_placeholder():
    argv = service_argv(ALLOWED, "systemd", {"unit": "mariadb@main"})
    assert argv == ("/usr/bin/systemctl", "restart", "mariadb@main")
    pg = service_argv(ALLOWED, "pg", {"version": "15", "cluster": "main"})
    assert pg == ("/usr/bin/pg_ctlcluster", "15", "main", "restart")


@pytest.mark.parametrize(
    ("command", "values", "why"),
    [
        (["/bin/sh", "-c", "id"], None, "never an argv"),
        ("sh", {}, "'sh' is not one of the restart commands the operator allowed"),
        ("systemd", {}, "takes the values unit"),
        ("systemd", {"unit": "mariadb", "then": "x"}, "takes the values unit"),
        ("systemd", {"unit": "../../bin/sh"}, "values.unit: one word"),
        ("systemd", {"unit": "/bin/sh"}, "values.unit: one word"),
        ("systemd", {"unit": "mariadb; id"}, "values.unit: one word"),
        ("systemd", {"unit": "maria db"}, "values.unit: one word"),
        ("systemd", {"unit": "--help"}, "values.unit: one word"),
        ("systemd", {"unit": "a..b"}, "values.unit: one word"),
        ("systemd", {"unit": ["mariadb"]}, "values.unit: one word"),
        ("systemd", "unit=mariadb", "values must be an object"),
    ],
)
def test_a_user_never_gives_an_argv_a_path_or_an_option(command, values, why):
    with pytest.raises(InvalidInput, match=why) as refused:
        service_argv(ALLOWED, command, values)
    assert refused.value.field == "restart_config"


def test_an_installation_without_commands_says_who_adds_one():
    with pytest.raises(InvalidInput, match=r"allowed \(none\).*BENCHDASH_RESTART_COMMANDS"):
        service_argv(allowed_parse({}, [], []), "systemd", {"unit": "mariadb"})


def test_the_include_is_a_file_inside_an_operators_folder():
    path = "/etc/mysql/conf.d/99-benchdash.cnf"
    assert include_checked(ALLOWED, path, ".cnf") == path
    for bad, why in [
        ("/etc/mysql/my.cnf", "outside the include folders"),
        ("/var/lib/benchdash/99-benchdash.cnf", "outside the include folders"),
        ("/etc/mysql/conf.d/../../passwd.cnf", "without '..'"),
        ("/etc/mysql/conf.d//99.cnf", "without '..'"),
        ("/etc/mysql/conf.d/99-benchdash.conf", "a .cnf file"),
        ("99-benchdash.cnf", "absolute path"),
        ("/etc/mysql/conf.d.evil/99.cnf", "outside the include folders"),
    ]:
        with pytest.raises(InvalidInput, match=why):
            include_checked(ALLOWED, bad, ".cnf")
    with pytest.raises(InvalidInput, match="BENCHDASH_RESTART_INCLUDE_DIRS"):
        include_checked(allowed_parse({}, [""], []), path, ".cnf")


def test_install_roots_when_the_operator_sets_some():
    assert install_path_checked(ALLOWED, "/anywhere/data", "datadir") == "/anywhere/data"
    rooted = allowed_parse({}, [], ["/srv/db", "/usr"])
    assert install_path_checked(rooted, "/srv/db/15/data", "datadir") == "/srv/db/15/data"
    with pytest.raises(InvalidInput, match="outside the install roots"):
        install_path_checked(rooted, "/home/someone/data", "datadir")
    managed = {"installs": [{"label": "15", "basedir": "/usr", "datadir": "/tmp/pg"}]}
    with pytest.raises(InvalidInput, match="install 15: datadir /tmp/pg is outside"):
        restart_spec("postgresql", "managed", managed, allowed=rooted)


@pytest.mark.parametrize(
    ("commands", "why"),
    [
        (["/bin/true"], "must be a JSON object"),
        ({"x": "/bin/true"}, "an argv"),
        ({"x": ["true"]}, "absolute path"),
        ({"x": ["/usr/bin/{tool}"]}, "absolute path"),
        ({"x": ["/bin/echo", "{Unit}"]}, "placeholders are"),
        ({"two words": ["/bin/true"]}, "one short word"),
    ],
)
def test_an_operators_mistake_is_said_naming_the_setting(commands, why):
    with pytest.raises(OperatorSettingError, match=why):
        allowed_parse(commands, [], [])
    with pytest.raises(OperatorSettingError, match="BENCHDASH_RESTART_INCLUDE_DIRS"):
        allowed_parse({}, ["etc/mysql"], [])


def test_an_old_argv_is_named_again_only_by_a_template_that_gives_it_exactly():
    assert template_values(SYSTEMD, ["/usr/bin/systemctl", "restart", "mariadb"]) == {
        "unit": "mariadb"
    }
    assert template_values(SYSTEMD, ["/usr/bin/systemctl", "stop", "mariadb"]) is None
    assert template_values(SYSTEMD, ["/usr/bin/systemctl", "restart", "/x"]) is None
    assert template_values(SYSTEMD, ["/usr/bin/systemctl", "restart"]) is None
    twice = ["/bin/x", "{a}", "--of={a}"]
    assert template_values(twice, ["/bin/x", "q", "--of=q"]) == {"a": "q"}
    assert template_values(twice, ["/bin/x", "q", "--of=r"]) is None


def test_allowed_is_what_the_spec_reads():
    assert isinstance(ALLOWED, Allowed)
    assert ALLOWED.include_dirs == ("/etc/mysql/conf.d", "/etc/postgresql")
    service = {"command": "systemd", "values": {"unit": "mariadb"},
               "include": "/etc/mysql/conf.d/99-benchdash.cnf"}  # fmt: skip
    spec = restart_spec("mariadb", "service", service, allowed=ALLOWED)
    assert spec is not None and spec.include_dirs == ALLOWED.include_dirs
    assert spec.command == ("/usr/bin/systemctl", "restart", "mariadb")
