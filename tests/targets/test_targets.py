"""Targets: secrets encrypted at rest, databases benchdash must never touch, and the
allow-list of server settings."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection

from runs import targets
from runs.errors import InvalidInput
from runs.models import Target
from runs.services import plans as checks


def stored_password(target: Target) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT password FROM runs_target WHERE id = %s", [target.pk])
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_a_targets_password_is_encrypted_at_rest():
    target = Target.objects.create(
        name="t", host="127.0.0.1", port=3306, user="bench", password="s3cret-pass"
    )

    raw = stored_password(target)

    assert raw.startswith("fernet:")
    assert "s3cret-pass" not in raw
    assert Target.objects.get(pk=target.pk).password == "s3cret-pass"


@pytest.mark.django_db
def test_an_empty_password_stays_empty():
    target = Target.objects.create(name="t", host="127.0.0.1", port=3306, user="bench")

    assert stored_password(target) == ""


@pytest.mark.parametrize("database", ["mysql", "information_schema", "performance_schema", "sys"])
def test_system_schemas_are_refused(database):
    target = Target(name="t", engine="mariadb", host="db", port=3306, user="u", database=database)

    with pytest.raises(InvalidInput) as refused:
        checks.target_validate(target=target)

    assert refused.value.field == "database"


def test_the_results_store_is_refused_as_a_target():
    store = settings.DATABASES["default"]
    target = Target(
        name="t",
        engine="postgresql",
        host=str(store["HOST"]),
        port=int(str(store["PORT"])),
        user="u",
        database=str(store["NAME"]),
    )

    with pytest.raises(InvalidInput, match="results database"):
        checks.target_validate(target=target)


@pytest.mark.parametrize(
    ("value", "canonical"),
    [("2", "2"), (" 1 ", "1"), (0, "0")],
)
def test_flush_values_are_normalised(value, canonical):
    assert targets.MYSQL_SETTINGS["innodb_flush_log_at_trx_commit"].normalise(value) == canonical


@pytest.mark.parametrize("value", ["4", "-1", "two", "1; DROP TABLE x"])
def test_flush_values_outside_the_range_are_refused(value):
    with pytest.raises(InvalidInput) as refused:
        targets.MYSQL_SETTINGS["innodb_flush_log_at_trx_commit"].normalise(value)

    assert refused.value.field == "innodb_flush_log_at_trx_commit"


def test_booleans_read_back_as_on_or_off():
    setting = targets.MYSQL_SETTINGS["innodb_adaptive_hash_index"]

    assert [setting.normalise(v) for v in ("1", "on", "OFF", 0)] == ["ON", "ON", "OFF", "OFF"]


def test_settings_are_applied_verified_and_restored(mariadb_server, mariadb_db):
    target = Target(
        name="t",
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_server.port,
        user=mariadb_server.user,
        password=mariadb_server.password,
        database=mariadb_db,
    )
    with targets.connect(targets.connection_of(target)) as db:
        original = db.read(["sync_binlog", "innodb_flush_log_at_trx_commit"])
        before = db.server_info().variables
        applied = db.apply({"sync_binlog": "0", "innodb_flush_log_at_trx_commit": "2"})
        verified = applied.verified
        db.restore(original)
        after = db.read(["sync_binlog", "innodb_flush_log_at_trx_commit"])

    assert verified == {"sync_binlog": "0", "innodb_flush_log_at_trx_commit": "2"}
    assert after == original
    # Read back with the verification, every variable as the batch's snapshot has it: what
    # differs is what the settings changed.
    assert set(applied.variables) == set(before)
    assert {n: v for n, v in applied.variables.items() if before[n] != v} == {
        name: value for name, value in verified.items() if original[name] != value
    }


def test_the_server_says_where_it_writes_its_errors(mariadb_server, mariadb_db):
    target = Target(
        name="t",
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_server.port,
        user=mariadb_server.user,
        password=mariadb_server.password,
        database=mariadb_db,
    )
    with targets.connect(targets.connection_of(target)) as db:
        facts = db.restart_facts([])

    assert facts.error_log == str(mariadb_server.error_log)  # its --log-error
