"""What a PostgreSQL account that is not a superuser must be granted for benchdash to change
server settings, each privilege checked on its own, with the exact GRANT that gives it.

benchdash changes a setting with ALTER SYSTEM, makes it take with pg_reload_conf(), and
first reads what postgresql.auto.conf holds for it through the pg_file_settings view (to
put the file back as it was). The view calls pg_show_all_file_settings() with the caller's
privileges, so reading it takes both a SELECT on the view and EXECUTE on the function.
Membership in pg_read_all_settings opens neither (PostgreSQL 15): only these GRANTs do.
Grants on the objects of pg_catalog are per database (each database has its own
catalog): they are made connected to the target's database. ALTER SYSTEM ON PARAMETER
(PostgreSQL 15 and later) is the cluster's, made once from any database.

Pure apart from the `ask` function it is given: the adapter (postgres.py) asks the server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

# (what it is for, the check that answers true when held, the GRANT, per database)
CATALOG_PRIVILEGES = (
    (
        "read pg_file_settings (what postgresql.auto.conf holds, to restore it)",
        "SELECT has_table_privilege('pg_catalog.pg_file_settings', 'SELECT')",
        "GRANT SELECT ON pg_catalog.pg_file_settings TO {role}",
    ),
    (
        "execute pg_show_all_file_settings() (the function pg_file_settings calls)",
        "SELECT has_function_privilege('pg_catalog.pg_show_all_file_settings()', 'EXECUTE')",
        "GRANT EXECUTE ON FUNCTION pg_catalog.pg_show_all_file_settings() TO {role}",
    ),
    (
        "execute pg_reload_conf() (a setting written takes effect)",
        "SELECT has_function_privilege('pg_catalog.pg_reload_conf()', 'EXECUTE')",
        "GRANT EXECUTE ON FUNCTION pg_catalog.pg_reload_conf() TO {role}",
    ),
)
PARAMETER_CHECK = "SELECT has_parameter_privilege(%s, 'ALTER SYSTEM')"
PARAMETER_GRANT = "GRANT ALTER SYSTEM ON PARAMETER {name} TO {role}"
FIRST_GRANTABLE = 150000  # ALTER SYSTEM ON PARAMETER came with PostgreSQL 15


@dataclass(frozen=True)
class MissingPrivilege:
    """One privilege the account lacks: what it is for, and how to give it."""

    what: str
    grant: str  # the exact statement, or "" when only a superuser can (before 15)
    database: str  # the database to run it in; "" for a privilege of the cluster

    @property
    def text(self) -> str:
        if not self.grant:
            return f"{self.what}: only a superuser can (PostgreSQL 14 and older)"
        where = f" (connected to the database {self.database})" if self.database else ""
        return f"{self.what}: {self.grant};{where}"

    def to_dict(self) -> dict[str, str]:
        return {**asdict(self), "text": self.text}


Ask = Callable[[str, list[Any]], Any]


def missing_privileges(
    ask: Ask, *, names: Iterable[str], role: str, database: str, version: int
) -> list[MissingPrivilege]:
    """Every privilege benchdash needs to change the settings `names` that the account
    lacks, each checked on its own (a superuser lacks none)."""
    quoted = quote_identifier(role)
    missing = [
        MissingPrivilege(what, grant.format(role=quoted), database)
        for what, check, grant in CATALOG_PRIVILEGES
        if not ask(check, [])
    ]
    for name in sorted(set(names)):
        what = f"ALTER SYSTEM SET {name}"
        if version < FIRST_GRANTABLE:
            missing.append(MissingPrivilege(what, "", ""))
        elif not ask(PARAMETER_CHECK, [name]):
            missing.append(
                MissingPrivilege(what, PARAMETER_GRANT.format(name=name, role=quoted), "")
            )
    return missing


def grants_text(missing: Iterable[MissingPrivilege]) -> str:
    """The GRANTs of `missing` as a script a superuser runs: those of the cluster, then
    those of each database under a `\\c` line."""
    missing = list(missing)
    cluster = [m.grant + ";" for m in missing if m.grant and not m.database]
    lines = list(cluster)
    for database in sorted({m.database for m in missing if m.database}):
        lines.append(f"\\c {quote_identifier(database)}")
        lines += [m.grant + ";" for m in missing if m.grant and m.database == database]
    return "\n".join(lines)


def quote_identifier(name: str) -> str:
    """A role or database name as SQL writes it: as is when plain, else in double quotes."""
    plain = name.isascii() and name.replace("_", "a").isalnum() and name == name.lower()
    return name if plain and not name[:1].isdigit() else '"' + name.replace('"', '""') + '"'
