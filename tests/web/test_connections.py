"""The web server keeps its PostgreSQL connections bounded: many concurrent requests to
uvicorn (with benchdash's production settings, two worker processes) never hold more
than the pools allow, and leave no more open afterwards. Persistent connections under
ASGI left one per request thread open: 10 clients for 5 s left 51 connections."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import requests
from django.db import connection
from django.utils import timezone

from runs.models import Target
from tests.processes import AsgiServer

pytestmark = pytest.mark.timeout(180)

WORKERS, POOL_SIZE, CLIENTS, SECONDS = 2, 4, 40, 4


@pytest.fixture
def production_web(
    request: pytest.FixtureRequest, transactional_db: None, tmp_path: Path
) -> Iterator[tuple[AsgiServer, datetime]]:
    """The server, and when it started; given a parameter (indirect), that many turns a
    process, with pools of 8."""
    env = {"DJANGO_SETTINGS_MODULE": "benchdash.settings", "BENCHDASH_DB_POOL_SIZE": str(POOL_SIZE)}
    if hasattr(request, "param"):
        env.update(BENCHDASH_DB_POOL_SIZE="8", BENCHDASH_WEB_TURNS=str(request.param))
    started = timezone.now()
    server = AsgiServer(tmp_path / "uvicorn.log", env=env, workers=WORKERS)
    yield server, started
    server.stop()


def web_connections(since: datetime) -> int:
    """Connections to the test database opened since the web server started, but this
    test's own (one left open by an earlier test is not the web server's)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_start >= %s",
            [since],
        )
        return int(cursor.fetchone()[0])


def test_many_concurrent_requests_hold_and_leave_few_connections(production_web, session_cookie):
    web, started = production_web
    statuses, peak, after = load(web, started, session_cookie)

    assert len(statuses) > CLIENTS and set(statuses) == {200}
    assert peak <= WORKERS * POOL_SIZE, f"{peak} connections at the peak"
    assert after <= WORKERS * POOL_SIZE, f"{after} connections left after the load"


@pytest.mark.parametrize("production_web", [1], indirect=True)
def test_pages_take_turns_and_so_need_a_connection_or_two_not_the_pool(
    production_web, session_cookie
):
    # Pools of 8 a process, which 40 clients each asking at once would fill; one page at
    # a time per process needs its connection and, for a moment, the one the page before
    # is handing back.
    web, started = production_web
    statuses, peak, _ = load(web, started, session_cookie)

    assert len(statuses) > CLIENTS and set(statuses) == {200}
    assert peak <= WORKERS * 3, f"{peak} connections at the peak"


def load(web: AsgiServer, started: datetime, cookies: dict[str, str]) -> tuple[list[int], int, int]:
    """CLIENTS clients asking for a page for SECONDS: the statuses, the peak of the web
    server's connections, and how many it holds a second later."""
    for i in range(20):
        Target.objects.create(name=f"db-{i}", host="127.0.0.1", port=3306, user="bench")
    statuses: list[int] = []
    stop = time.monotonic() + SECONDS

    def client() -> None:
        with requests.Session() as session:
            session.cookies.update(cookies)
            while time.monotonic() < stop:
                statuses.append(session.get(f"{web.url}/targets/", timeout=60).status_code)

    clients = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in clients:
        thread.start()
    peak = 0
    while any(thread.is_alive() for thread in clients):
        peak = max(peak, web_connections(started))
        time.sleep(0.1)
    for thread in clients:
        thread.join()
    time.sleep(1)
    return statuses, peak, web_connections(started)
