"""Fixtures of the worker's tests that more than one file uses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import PrivateMariaDB


@pytest.fixture
def restartable() -> Iterator[PrivateMariaDB]:
    """A MariaDB of this test's own: the test stops and starts it."""
    server = PrivateMariaDB()
    try:
        server.start()
        server.create_database("sbtest")
        yield server
    finally:
        server.stop()
