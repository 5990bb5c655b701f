"""The PostgreSQL allow-list: values checked and put in one canonical form, whatever unit
the user wrote them in and pg_settings reports them in."""

from __future__ import annotations

import pytest

from runs import targets
from runs.errors import InvalidInput

SETTINGS = targets.POSTGRES_SETTINGS


@pytest.mark.parametrize(
    ("name", "value", "canonical"),
    [
        ("synchronous_commit", "OFF", "off"),
        ("synchronous_commit", "remote_apply", "remote_apply"),
        ("fsync", "true", "on"),
        ("full_page_writes", 0, "off"),
        ("commit_delay", "1000", "1000"),
        ("checkpoint_timeout", "5min", "300s"),
        ("checkpoint_timeout", "300", "300s"),
        ("checkpoint_timeout", "1h", "3600s"),
        ("wal_writer_delay", "1s", "1000ms"),
        ("wal_writer_delay", "200ms", "200ms"),
        ("max_wal_size", "1GB", "1024MB"),
        ("max_wal_size", "2048", "2048MB"),
        ("max_wal_size", "65536kB", "64MB"),
        ("wal_compression", "LZ4", "lz4"),
        ("effective_io_concurrency", "200", "200"),
    ],
)
def test_values_are_put_in_canonical_form(name, value, canonical):
    assert SETTINGS[name].normalise(value) == canonical


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("synchronous_commit", "sometimes"),
        ("fsync", "maybe"),
        ("commit_delay", "100001"),
        ("commit_siblings", "-1"),
        ("checkpoint_timeout", "10s"),  # below 30 s
        ("checkpoint_timeout", "1500ms"),  # not a whole number of seconds
        ("checkpoint_timeout", "5 parsecs"),
        ("max_wal_size", "1MB"),  # below 2 MB
        ("max_wal_size", "1'; ALTER SYSTEM RESET ALL; --"),
        ("effective_io_concurrency", "1.5"),
    ],
)
def test_bad_values_are_refused_naming_the_setting(name, value):
    with pytest.raises(InvalidInput) as refused:
        SETTINGS[name].normalise(value)
    assert refused.value.field == name


@pytest.mark.parametrize(
    ("name", "setting", "unit", "canonical"),
    [
        ("checkpoint_timeout", "300", "s", "300s"),
        ("max_wal_size", "1024", "MB", "1024MB"),
        ("wal_writer_delay", "200", "ms", "200ms"),
        ("synchronous_commit", "on", None, "on"),
        ("commit_delay", "0", None, "0"),
    ],
)
def test_pg_settings_rows_read_back_in_the_same_form(name, setting, unit, canonical):
    assert SETTINGS[name].from_server(setting, unit) == canonical


def test_a_setting_given_in_another_unit_compares_equal_to_the_server_s():
    written = SETTINGS["checkpoint_timeout"].normalise("15min")
    assert SETTINGS["checkpoint_timeout"].from_server("900", "s") == written


def test_settings_outside_the_allow_list_are_refused_with_the_reason():
    with pytest.raises(InvalidInput, match="needs a server restart"):
        targets.validate_settings("postgresql", {"shared_buffers": ["1GB"]})
    with pytest.raises(InvalidInput, match="allow-list of reloadable settings"):
        targets.validate_settings("postgresql", {"archive_command": ["rm -rf /"]})
    with pytest.raises(InvalidInput):  # a MySQL name on a PostgreSQL target
        targets.validate_settings("postgresql", {"innodb_flush_log_at_trx_commit": ["2"]})


def test_each_engine_has_its_own_allow_list():
    assert targets.validate_settings("postgresql", {"synchronous_commit": ["on", "OFF"]}) == {
        "synchronous_commit": ["on", "off"]
    }
    assert targets.validate_settings("mariadb", {"sync_binlog": ["1"]}) == {"sync_binlog": ["1"]}
    assert "synchronous_commit" in targets.allowed_settings("postgresql")
    assert "sync_binlog" in targets.allowed_settings("mysql")


def test_postgres_reserves_connections_for_superusers_only():
    variables = {
        "max_connections": "100",
        "superuser_reserved_connections": "3",
        "is_superuser": "off",
    }
    assert targets.ServerInfo("15", variables).max_connections == 97
    assert targets.ServerInfo("15", {**variables, "is_superuser": "on"}).max_connections == 100
    assert targets.ServerInfo("10.11", {"max_connections": "151"}).max_connections == 151
