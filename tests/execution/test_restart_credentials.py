"""A restart's options hold settings, never secrets (pure): config snippets and restart-only
settings whose name or value reads as a credential refused with the line named and the
value never said; a snippet's size and number of options bounded; the options of a
managed instance written to a file of its own that includes the install's config, and
none of them on its command line."""

from __future__ import annotations

import pytest

from runs.credentials import HIDDEN, secret_name, secret_value, variables_shown
from runs.errors import InvalidInput
from runs.execution.restarts.processes import server_argv
from runs.execution.restarts.spec import (
    MAX_SNIPPET_OPTIONS,
    Install,
    config_options,
    options_file,
    options_file_text,
    restart_options,
    restart_settings_check,
)

SECRET = "hunter2-Zq9"  # never in an error


@pytest.mark.parametrize(
    "name",
    [
        "password",
        "report_password",
        "report-password",
        "mypassword",
        "db_passwd",
        "root_pwd",
        "repl_pass",
        "api_secret",
        "vault_token",
        "wsrep_sst_auth",
        "ssl_key",
        "file_key_management_encryption_key",
        "aws_keys",
        "cloud_credentials",
        "primary_conninfo",
        "krb_server_keyfile",
        "file_key_management_filekey",
        "keyring_vault_config",
    ],
)
def test_a_name_that_says_it_holds_a_credential_is_one(name):
    assert secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        # MariaDB 10.11's and PostgreSQL 15's own settings, none holding a secret
        "key_buffer_size",
        "key_cache_block_size",
        "key-cache-segments",
        "max_seeks_for_key",
        "innodb_default_encryption_key_id",
        "innodb_encryption_rotate_key_age",
        "innodb_ft_min_token_size",
        "innodb_ft_max_token_size",
        "innodb_force_primary_key",
        "have_rtree_keys",
        "max_index_keys",
        "pre_auth_delay",
        "password_encryption",
        "strict_password_validation",
        "authentication_timeout",
        "innodb_flush_method",
        "shared_buffers",
        "bypass_x",
    ],
)
def test_a_setting_that_holds_none_is_no_credential(name):
    assert not secret_name(name)


def test_a_value_that_reads_as_user_and_password_is_one_a_time_or_an_offset_is_not():
    assert secret_value("root:hunter2") and secret_value("'sst_user:x'")
    for value in ("+01:00", "12:30", "O_DIRECT", "32M", "scram-sha-256", "ON"):
        assert not secret_value(value), value


def test_a_servers_variables_are_kept_with_a_credentials_value_hidden():
    variables = {"report_password": SECRET, "wsrep_sst_auth": "", "key_buffer_size": "8388608"}
    assert variables_shown(variables) == {
        "report_password": HIDDEN,
        "wsrep_sst_auth": "",  # none set: nothing to hide
        "key_buffer_size": "8388608",
    }


@pytest.mark.parametrize(
    ("text", "line", "name", "why"),
    [
        (f"[mysqld]\ninnodb_flush_method = fsync\npassword = {SECRET}\n", 3, "password", "name"),
        (f"# sst\nwsrep_sst_auth = root:{SECRET}", 2, "wsrep_sst_auth", "name"),
        (f"innodb_flush_method = root:{SECRET}", 1, "innodb_flush_method", "user:password"),
        (f"report-password={SECRET}", 1, "report-password", "name"),
        (f"password {SECRET}", 1, "password", "name"),  # no "=": still never said
        (f"ssl_key = {SECRET}", 1, "ssl_key", "name"),
    ],
)
def test_a_snippet_line_holding_a_credential_is_refused_by_its_line_never_its_value(
    text, line, name, why
):
    with pytest.raises(InvalidInput) as refused:
        config_options("mariadb", text, "fast")
    said = str(refused.value)
    assert said.startswith("configs fast: config snippets hold settings, never secrets: ")
    assert f"line {line}: {name} = …" in said and why in said
    assert SECRET not in said


def test_a_postgresql_snippet_is_refused_the_same():
    text = f"shared_buffers = 32MB\nprimary_conninfo = 'host=x password={SECRET}'"
    with pytest.raises(InvalidInput, match=r"line 2: primary_conninfo = …") as refused:
        config_options("postgresql", text, "pg")
    assert SECRET not in str(refused.value)


def test_other_refusals_never_say_the_value_either():
    for text in (f"innodb_flush_method = fsync {SECRET}", f"some thing {SECRET}"):
        with pytest.raises(InvalidInput, match="line 1") as refused:
            config_options("mariadb", text, "x")
        assert SECRET not in str(refused.value)
    with pytest.raises(InvalidInput) as refused:
        restart_settings_check("mariadb", {"innodb_flush_method": [f"a {SECRET}"]})
    assert SECRET not in str(refused.value)


def test_a_restart_only_setting_holding_a_credential_is_refused():
    for name, value in (("report_password", SECRET), ("innodb_flush_method", f"u:{SECRET}")):
        with pytest.raises(InvalidInput, match="never secrets") as refused:
            restart_settings_check("mariadb", {name: ["fsync", value]})
        assert refused.value.field == "server_settings" and SECRET not in str(refused.value)
    # The worker checks again what it is given (a plan saved before the check).
    with pytest.raises(InvalidInput, match="never secrets"):
        restart_options("mariadb", config_text="", settings={"wsrep_sst_auth": "a:b"})
    assert restart_settings_check("mariadb", {"key_buffer_size": ["8M"]}) == {
        "key_buffer_size": ["8M"]
    }


def test_a_snippet_holds_16_kb_and_200_options_at_most():
    comments = "# " + "x" * 97 + "\n"  # 100 bytes
    config_options("mariadb", comments * 160, "big")  # 16,000 bytes of comments
    with pytest.raises(InvalidInput, match=r"16,500 bytes: a snippet holds 16 kB at most"):
        config_options("mariadb", comments * 165, "big")
    options = "".join(f"key_cache_segments = {i % 64}\n" for i in range(MAX_SNIPPET_OPTIONS))
    assert len(config_options("mariadb", options, "many")) == MAX_SNIPPET_OPTIONS
    with pytest.raises(InvalidInput, match=r"line 201: a snippet sets 200 options at most"):
        config_options("mariadb", options + "key_cache_segments = 1\n", "many")


MARIADB = Install(label="10.11", basedir="/usr", datadir="/srv/m/data", config="/srv/m/my.cnf")
PG = Install(label="15", basedir="/usr/lib/postgresql/15", datadir="/srv/pg15/")


def test_a_managed_instances_options_go_to_a_file_that_includes_its_config():
    options = restart_options(
        "mariadb", config_text="innodb_flush_method = O_DIRECT", settings={"key_buffer_size": "8M"}
    )
    assert options_file("mariadb", MARIADB) == "/srv/m/data/benchdash-options.cnf"
    text = options_file_text("mariadb", MARIADB, options)
    assert text.splitlines()[1:] == [
        "!include /srv/m/my.cnf",  # read first: what follows wins
        "[mysqld]",
        "innodb_flush_method = O_DIRECT",
        "key_buffer_size = 8M",
    ]
    alone = Install(label="x", basedir="/usr", datadir="/srv/x")
    assert "!include" not in options_file_text("mariadb", alone, options)

    pg = restart_options("postgresql", config_text="wal_buffers = 16MB", settings={})
    assert options_file("postgresql", PG) == "/srv/pg15/benchdash-options.conf"
    assert options_file_text("postgresql", PG, pg).splitlines()[1:] == [
        "include '/srv/pg15/postgresql.conf'",  # the data directory's, when it names none
        "wal_buffers = '16MB'",
    ]
    odd = Install(label="15", basedir="/usr", datadir="/d", config="/etc/it's\\pg.conf")
    assert "include '/etc/it''s\\\\pg.conf'" in options_file_text("postgresql", odd, pg)


def test_the_start_command_names_the_options_file_and_no_option():
    written = "/srv/m/data/benchdash-options.cnf"
    mariadb = server_argv("mariadb", MARIADB, "/usr/sbin/mariadbd", port=3307, socket="/s",
                          options_file=written, as_root=True)  # fmt: skip
    # --defaults-file first (MariaDB reads it nowhere else), the install's config in it
    assert mariadb[1] == "--defaults-file=/srv/m/data/benchdash-options.cnf"
    assert not any("innodb" in word or "my.cnf" in word for word in mariadb)
    original = server_argv("mariadb", MARIADB, "/usr/sbin/mariadbd", port=3307, socket="",
                           options_file="", as_root=False)  # fmt: skip
    assert original[1] == "--defaults-file=/srv/m/my.cnf"
    pg = server_argv("postgresql", PG, "/usr/bin/postgres", port=5433, socket="",
                     options_file="/srv/pg15/benchdash-options.conf", as_root=False)  # fmt: skip
    assert pg == ["/usr/bin/postgres", "-D", "/srv/pg15/",
                  "-c", "config_file=/srv/pg15/benchdash-options.conf",
                  "-c", "logging_collector=off", "-p", "5433"]  # fmt: skip
