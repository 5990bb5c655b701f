"""Health while the results database is down: the answer still comes, from Redis, to a
token the database verified lately; it names the database as down since its first
failure and lists the worker, beat and the sweeper; `benchdash health` prints it and
exits 1, without a traceback. A token never verified gets the database-down error, and
the command says that much, exit 1 too.

A private PostgreSQL is the results database of a uvicorn and a real worker process the
test starts; it is stopped mid-test (never the shared one)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import requests

from runs.execution import liveness
from tests.helpers import wait_until
from tests.processes import ROOT, AsgiServer, WorkerProcess
from tests.servers import PrivatePostgres

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

INSTALLATION = "health-outage"


def create_token(env: dict[str, str], name: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", "create_token", "monitor", name, "--create-user"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout.split()[-1]  # fmt: skip


def logged_in(env: dict[str, str], url: str) -> requests.Session:
    """A browser's session of a user with a password, logged in through the login page."""
    subprocess.run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "watcher",
         "--email", "watcher@example.com"],
        cwd=ROOT, env={**env, "DJANGO_SUPERUSER_PASSWORD": "watcher-pass-1"}, check=True,
    )  # fmt: skip
    browser = requests.Session()
    page = browser.get(url + "/accounts/login/", timeout=30)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert csrf, page.text[:500]
    answer = browser.post(
        url + "/accounts/login/",
        data={"username": "watcher", "password": "watcher-pass-1", "csrfmiddlewaretoken": csrf[1]},
        headers={"Referer": url + "/accounts/login/"},
        allow_redirects=False,
        timeout=30,
    )
    assert answer.status_code == 302, answer.text[:500]
    return browser


def health_command(url: str, token: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchdash_cli", *extra, "health"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "BENCHDASH_URL": url, "BENCHDASH_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def beat_and_sweeper(settings) -> Iterator[None]:
    """Beat's and the sweeper's heartbeats, written every second as their processes write
    them (runs/execution/liveness.py), where the web of INSTALLATION reads them."""
    settings.BENCHDASH_INSTALLATION = INSTALLATION
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            liveness.process_beat(name=liveness.BEAT)
            liveness.process_beat(name=liveness.SWEEPER, report={"recovered": []})
            stop.wait(1.0)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def test_with_the_results_database_down_health_names_it_since_and_lists_the_rest(
    tmp_path: Path, beat_and_sweeper
):
    server, web, worker = PrivatePostgres(), None, None
    try:
        server.start()
        env = {
            **server.benchdash_env("benchdash_health"),
            "BENCHDASH_INSTALLATION": INSTALLATION,
        }
        token, never_used = create_token(env, "monitor"), create_token(env, "drawer")
        web = AsgiServer(tmp_path / "uvicorn.log", env=env)
        worker = WorkerProcess(tmp_path / "worker.log", name="outage", env=env)
        wait_until(
            lambda: any(n.startswith("worker:outage@") for n in liveness.heartbeats_read()),
            timeout=120,
            what="the worker's heartbeat",
        )
        headers = {"Authorization": f"Token {token}"}
        up = requests.get(web.url + "/api/v1/health", headers=headers, timeout=30)
        assert up.status_code == 200, up.text  # the token is verified, and remembered
        assert up.json()["database"] == {"reachable": True, "error": "", "down_since": None}
        browser = logged_in(env, web.url)
        assert browser.get(web.url + "/health", timeout=30).status_code == 200  # remembered
        stranger = requests.Session()  # a session the database never verified
        stranger.cookies.set("sessionid", "x" * 32)

        stopped_at = time.time()
        server.stop_server()

        down = requests.get(web.url + "/api/v1/health", headers=headers, timeout=30)
        assert down.status_code == 503, down.text
        body = down.json()
        database = body["database"]
        assert database["reachable"] is False
        since = datetime.fromisoformat(database["down_since"]).timestamp()
        assert stopped_at - 1 <= since <= time.time()
        assert database["error"].startswith("the results database cannot be reached since ")
        assert body["problems"][0] == database["error"]
        assert body["broker"]["reachable"] is True
        (listed,) = body["workers"]
        assert listed["name"].startswith("outage@") and listed["alive"] is True
        assert set(listed["queues"]) == {"benchmarks", "celery"}
        assert body["beat"]["alive"] is True and body["sweeper"]["alive"] is True
        assert body["sweeper"]["report"] == {"recovered": []}
        assert body["queued"] is None  # the queue lives in the database
        again = requests.get(web.url + "/api/v1/health", headers=headers, timeout=30).json()
        assert again["database"]["down_since"] == database["down_since"]  # the first failure

        # A token the database did not verify lately gets what every endpoint answers now.
        unknown = {"Authorization": f"Token {never_used}"}
        refused = requests.get(web.url + "/api/v1/health", headers=unknown, timeout=30)
        assert refused.status_code == 503
        assert "workers" not in refused.json()
        assert refused.json()["message"].startswith("the results database cannot be reached")
        # Nothing else is answered on a remembered token's word.
        other = requests.get(web.url + "/api/v1/batches", headers=headers, timeout=30)
        assert other.status_code == 503 and "workers" not in other.json()

        # The page, to the session that opened it lately; the database-down page otherwise.
        page = browser.get(web.url + "/health", timeout=30)
        assert page.status_code == 503
        assert listed["name"] in page.text and "beat</td><td>alive" in page.text
        assert "the results database cannot be reached since " in page.text
        other_page = stranger.get(web.url + "/health", timeout=30)
        assert other_page.status_code == 503
        assert "The results database is unreachable" in other_page.text
        assert listed["name"] not in other_page.text

        told = health_command(web.url, token)
        assert told.returncode == 1, told.stderr
        assert "Traceback" not in told.stderr
        lines = told.stdout.splitlines()
        assert lines[0] == "UNHEALTHY"
        assert f"  problem: {database['error'].split(' (')[0]}" in told.stdout
        assert any(line.startswith("outage@") and ": alive," in line for line in lines)
        assert any(line.startswith("beat: alive") for line in lines)
        assert any(line.startswith("sweeper: alive") for line in lines)
        assert "database: the results database cannot be reached since " in told.stdout
        assert "queue: unknown while the results database is away" in lines

        as_json = health_command(web.url, token, "--format", "json")
        assert as_json.returncode == 1, as_json.stderr
        assert json.loads(as_json.stdout)["database"]["down_since"] == database["down_since"]

        blind = health_command(web.url, never_used)
        assert blind.returncode == 1, blind.stderr
        assert "Traceback" not in blind.stderr
        assert blind.stdout.startswith("UNHEALTHY\n  problem: the results database cannot be")

        server.start_again()
        last: list[str] = []

        def healthy_again() -> bool:
            answer = requests.get(web.url + "/api/v1/health", headers=headers, timeout=30)
            last[:] = [f"{answer.status_code} {answer.text[:600]}"]
            return answer.status_code == 200

        # 180 s: a loaded whole run was still unhealthy at 60 s once (its answer was not
        # kept then); now the last answer is said
        try:
            wait_until(healthy_again, timeout=180, what="health to answer 200 again")
        except AssertionError as e:
            raise AssertionError(f"{e}; its last answer: {last}") from None
        back = requests.get(web.url + "/api/v1/health", headers=headers, timeout=30).json()
        assert back["database"]["down_since"] is None
    finally:
        if worker is not None:
            worker.stop()
        if web is not None:
            web.stop()
        server.stop()
