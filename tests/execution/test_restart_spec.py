"""A target's restart config and a restart's options, checked (pure)."""

from __future__ import annotations

import pytest

from runs.errors import InvalidInput
from runs.execution.restarts.allowed import Allowed
from runs.execution.restarts.processes import error_line, first_error
from runs.execution.restarts.readback import same_value
from runs.execution.restarts.spec import (
    config_options,
    include_text,
    restart_options,
)
from runs.execution.restarts.spec import (
    restart_spec as spec_of,
)

INSTALL = {"label": "15", "basedir": "/usr/lib/postgresql/15", "datadir": "/srv/pg15"}
# What an operator allowed (BENCHDASH_RESTART_*): tests/execution/test_restart_allowed.py.
ALLOWED = Allowed(
    commands={"systemd": ("/bin/systemctl", "restart", "{unit}"),
              "pg_cluster": ("/usr/bin/pg_ctlcluster", "{version}", "{cluster}", "restart")},
    include_dirs=("/etc/my.cnf.d", "/etc/postgresql"),
)  # fmt: skip


def restart_spec(engine: str, mode: str, config: object):
    return spec_of(engine, mode, config, allowed=ALLOWED)


def test_a_managed_config_lists_installs_each_with_its_own_data_directory():
    spec = restart_spec("postgresql", "managed", {"installs": [INSTALL]})
    assert spec is not None and spec.install("15").datadir == "/srv/pg15"
    twice = {"installs": [INSTALL, {**INSTALL, "label": "17"}]}
    with pytest.raises(InvalidInput, match="its own data directory"):
        restart_spec("postgresql", "managed", twice)
    with pytest.raises(InvalidInput, match="absolute path"):
        restart_spec("postgresql", "managed", {"installs": [{**INSTALL, "datadir": "../x"}]})


def test_a_service_names_an_allowed_command_and_an_include_of_its_own_and_no_secrets():
    spec = restart_spec(
        "mariadb",
        "service",
        {"command": "systemd", "values": {"unit": "mariadb"}, "include": "/etc/my.cnf.d/99-b.cnf"},
    )
    assert spec is not None and spec.command == ("/bin/systemctl", "restart", "mariadb")
    with pytest.raises(InvalidInput, match="not one of the restart commands"):
        restart_spec("mariadb", "service", {"command": "systemctl restart mariadb"})
    with pytest.raises(InvalidInput, match="no secrets"):
        restart_spec(
            "mariadb",
            "service",
            {"command": ["/x", "--password=hunter2"], "include": "/etc/b.cnf"},
        )
    with pytest.raises(InvalidInput, match="give a restart mode"):
        restart_spec("mariadb", "", {"command": ["/x"]})


def test_a_service_may_name_its_error_log_by_an_absolute_path():
    service = {"command": "pg_cluster", "values": {"version": "15", "cluster": "main"},
               "include": "/etc/postgresql/15/main/conf.d/99-benchdash.conf"}  # fmt: skip
    spec = restart_spec("postgresql", "service", service)
    assert spec is not None and spec.log == ""
    log = "/var/log/postgresql/postgresql-15-main.log"
    spec = restart_spec("postgresql", "service", {**service, "log": log})
    assert spec is not None and spec.log == log
    for bad in ("postgresql.log", "/var/log/../../etc/shadow", ["/var/log/x"]):
        with pytest.raises(InvalidInput, match="log"):
            restart_spec("postgresql", "service", {**service, "log": bad})
    with pytest.raises(InvalidInput, match="unknown keys log"):
        restart_spec("postgresql", "managed", {"installs": [INSTALL], "log": log})


def test_a_snippet_holds_option_lines_only():
    text = "[mysqld]\n# comment\ninnodb_flush_method = O_DIRECT\ninnodb-log-buffer-size=32M\n"
    assert config_options("mariadb", text) == [
        ("innodb_flush_method", "O_DIRECT"),
        ("innodb_log_buffer_size", "32M"),
    ]
    for bad, why in [
        ("!include /etc/passwd", "option lines only"),
        ("[client]\nuser=x", "no section"),
        ("datadir = x", "never changed"),
        ("plugin_load_add = x", "never changed"),
        ("innodb_flush_method = O_DIRECT; rm", "one word"),
        ("log_error = /tmp/x", "never changed"),
    ]:
        with pytest.raises(InvalidInput, match=why):
            config_options("mariadb", bad)
    assert config_options("postgresql", "shared_buffers = '256MB'") == [("shared_buffers", "256MB")]
    with pytest.raises(InvalidInput, match="never changed"):
        config_options("postgresql", "include_if_exists = 'x.conf'")


def test_options_become_the_include():
    # A managed instance's options file: tests/execution/test_restart_credentials.py
    options = restart_options("postgresql", config_text="wal_buffers = 16MB", settings={})
    assert "wal_buffers = '16MB'" in include_text("postgresql", options)
    mysql = restart_options("mariadb", config_text="", settings={"innodb_flush_method": "fsync"})
    assert "[mysqld]\ninnodb_flush_method = fsync" in include_text("mariadb", mysql)


def test_values_read_back_compare_as_the_server_shows_them():
    assert same_value("32M", "33554432") and same_value("128MB", "128MB")
    assert same_value("1", "ON") and same_value("o_direct", "O_DIRECT")
    assert not same_value("fsync", "O_DIRECT")


def test_the_servers_own_first_error_line_is_the_one_said():
    log = (
        "2026-11-27  6:31:34 0 [Note] Starting MariaDB\n"
        "2026-11-27  6:31:34 0 [ERROR] /usr/sbin/mariadbd: Error while setting value 'bogus' "
        "to 'innodb-flush-method'\n"
        "2026-11-27  6:31:34 0 [ERROR] Unknown/unsupported storage engine: InnoDB\n"
        "2026-11-27  6:31:34 0 [ERROR] Aborting\n"
    )
    assert "'bogus'" in error_line(log)
    pg = '2026-11-27 06:00:00 UTC [1] FATAL:  invalid value for parameter "shared_buffers"\n'
    assert "FATAL" in error_line(pg)


def test_a_failed_restarts_line_is_the_first_error_the_log_got_or_none():
    # A service's log: the old server's shutdown, then the new one refusing its config
    # (PostgreSQL 15 under pg_ctlcluster, as Debian writes it).
    log = (
        "2026-11-27 06:00:00.100 UTC [812] LOG:  received fast shutdown request\n"
        "2026-11-27 06:00:00.300 UTC [812] LOG:  database system is shut down\n"
        "2026-11-27 06:00:01.020 UTC [901] LOG:  invalid value for parameter "
        '"wal_buffers": "bogus"\n'
        "2026-11-27 06:00:01.020 UTC [901] FATAL:  configuration file "
        '"/etc/postgresql/15/main/conf.d/99-benchdash.conf" contains errors\n'
    )
    assert first_error(log).endswith('LOG:  invalid value for parameter "wal_buffers": "bogus"')
    assert first_error("2026-11-27 06:00:00 0 [Note] ready for connections\n") == ""
    assert error_line("Job for mariadb.service failed.\n") == "Job for mariadb.service failed."
