"""Fixtures shared by the whole suite."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.servers import PrivateMariaDB, PrivatePostgres

# --- private database servers (tests/servers.py) ------------------------------------------
# Started once per session on free ports, with their own data directories, and removed at
# the end. The machine's shared MariaDB and PostgreSQL are never used as targets.


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[PrivateMariaDB]:
    """A private MariaDB with binary logging on and max_connections=20."""
    server = PrivateMariaDB()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def mariadb_db(mariadb_server: PrivateMariaDB) -> Iterator[str]:
    """The name of a fresh, empty database on the private MariaDB, dropped afterwards."""
    name = mariadb_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    yield name
    mariadb_server.drop_database(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PrivatePostgres]:
    """A private PostgreSQL; superuser `postgres`, trust authentication."""
    server = PrivatePostgres()
    try:
        yield server.start()
    finally:
        server.stop()


# --- end of private database servers -------------------------------------------------------
