"""A PostgreSQL account that is not a superuser (issue 37): preflight checks each privilege
changing the plan's settings needs, one by one, and lists every missing one with its exact
GRANT, per database where grants are per database; once a superuser ran exactly those
GRANTs, preflight passes and the settings are applied, verified and restored by that
account. On the private PostgreSQL (tests/servers.py), with a role of the test's own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from runs import targets
from runs.models import Target
from runs.services.plans import plan_preflight
from runs.targets.postgres_privileges import grants_text
from tests.targets.test_postgres import (  # noqa: F401 (fixtures)
    _fields,
    _plan,
    auto_conf,
    clean_auto_conf,
    pg_database,
    pg_target,
)

pytestmark = pytest.mark.timeout(300)
SETTINGS = {"synchronous_commit": ["on", "off"], "commit_delay": ["0", "100"]}


@pytest.fixture
def weak_role(postgres_server, pg_database) -> Iterator[str]:  # noqa: F811
    role = f"weak_{uuid.uuid4().hex[:8]}"
    with postgres_server.connect() as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
    yield role
    for database in (pg_database, "postgres"):
        with postgres_server.connect(database) as admin:
            admin.execute(f"DROP OWNED BY {role}")  # its grants, here and on parameters
    with postgres_server.connect() as admin:
        admin.execute(f"DROP ROLE {role}")


def failed_privileges(report) -> list[str]:
    return [c.message for c in report.checks if c.check == "privilege" and c.status == "failed"]


def test_preflight_lists_every_missing_privilege_with_its_grant_then_passes_once_granted(
    postgres_server,
    pg_target,  # noqa: F811
    pg_database,  # noqa: F811
    weak_role,
    clean_auto_conf,  # noqa: F811
    transactional_db,
    local_host,
):
    # issue 37: preflight said ok, then three launches failed one missing privilege at a
    # time, with a hint (pg_read_all_settings) that opens nothing on PostgreSQL 15.
    with postgres_server.connect() as admin:
        admin.execute(f"GRANT pg_read_all_settings TO {weak_role}")
    target = Target.objects.create(**{**_fields(pg_target), "user": weak_role})
    plan = _plan(target, local_host, server_settings=SETTINGS)

    refused = plan_preflight(plan=plan)

    assert not refused.ok
    where = f"(connected to the database {pg_database})"
    assert failed_privileges(refused) == [
        f"{weak_role} may not read pg_file_settings (what postgresql.auto.conf holds, to "
        f"restore it): GRANT SELECT ON pg_catalog.pg_file_settings TO {weak_role}; {where}",
        f"{weak_role} may not execute pg_show_all_file_settings() (the function "
        "pg_file_settings calls): GRANT EXECUTE ON FUNCTION "
        f"pg_catalog.pg_show_all_file_settings() TO {weak_role}; {where}",
        f"{weak_role} may not execute pg_reload_conf() (a setting written takes effect): "
        f"GRANT EXECUTE ON FUNCTION pg_catalog.pg_reload_conf() TO {weak_role}; {where}",
        f"{weak_role} may not ALTER SYSTEM SET commit_delay: "
        f"GRANT ALTER SYSTEM ON PARAMETER commit_delay TO {weak_role};",
        f"{weak_role} may not ALTER SYSTEM SET synchronous_commit: "
        f"GRANT ALTER SYSTEM ON PARAMETER synchronous_commit TO {weak_role};",
    ]
    # At launch, the adapter refuses with all of them at once, before changing anything.
    with targets.connect_to(target) as db:
        missing = db.missing_privileges(SETTINGS)
        with pytest.raises(targets.SettingNotApplied) as at_launch:
            db.originals(SETTINGS)
    assert "pg_file_settings" in at_launch.value.message
    assert "pg_reload_conf()" in at_launch.value.message
    assert f"GRANT ALTER SYSTEM ON PARAMETER commit_delay TO {weak_role};" in at_launch.value.hint

    # A superuser runs exactly the GRANTs listed, the catalog's in the target's database.
    script = grants_text(missing)
    database = "postgres"
    for line in script.splitlines():
        if line.startswith("\\c "):
            database = line[3:]
            continue
        with postgres_server.connect(database) as admin:
            admin.execute(line)

    granted = plan_preflight(plan=plan)

    assert failed_privileges(granted) == []
    assert [c.message for c in granted.checks if c.check == "privileges"] == [
        "the account may change commit_delay, synchronous_commit"
    ]
    with targets.connect_to(target) as db:
        originals = db.originals(SETTINGS)
        applied = db.apply({"synchronous_commit": "off", "commit_delay": "100"})
        assert applied.verified == {"synchronous_commit": "off", "commit_delay": "100"}
        db.restore(originals)
    assert auto_conf(postgres_server) == {}


def test_grants_on_the_catalog_are_per_database(
    postgres_server,
    pg_target,  # noqa: F811
    weak_role,
):
    # Granted in another database, the target's database still lacks them.
    with postgres_server.connect("postgres") as admin:
        admin.execute(f"GRANT SELECT ON pg_catalog.pg_file_settings TO {weak_role}")
    weak = Target(**{**_fields(pg_target), "user": weak_role})
    with targets.connect_to(weak) as db:
        missing = db.missing_privileges(["synchronous_commit"])
    assert any("pg_file_settings TO" in m.grant for m in missing)
    assert all(m.database == pg_target.database for m in missing if "pg_catalog" in m.grant)


def test_a_superuser_lacks_nothing(pg_target):  # noqa: F811
    with targets.connect_to(pg_target) as db:
        assert db.missing_privileges(["synchronous_commit"]) == []
