"""Fixtures shared by the whole suite, and its tiers (docs/testing.md)."""

from __future__ import annotations

import subprocess
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from benchdash.celery import app
from runs.models import Batch, LoadHost, Plan, Target
from tests import isolation, servers, stored
from tests.processes import AsgiServer, WorkerProcess
from tests.servers import PrivateMariaDB, PrivatePostgres, PrivateRedis, PrivateSSHD, SSHKey

# --- the tiers: each test is in one, the heaviest it needs ----------------------------------
# pure: no database, no server, no process; database: the test database (and this slot's
# Redis); servers: private servers, benchdash's own processes, sysbench or any program run;
# browser: Chromium. Set from the fixtures a test uses, and from the table below for the
# files whose needs no fixture shows.

DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}
SERVER_FIXTURES = {
    "mariadb_server",
    "mariadb_nobinlog_server",
    "mariadb_ps_server",
    "postgres_server",
    "private_redis",
    "sshd_server",
    "celery_worker",
    "two_celery_workers",
    "worker_process",
    "asgi_server",
    "live_server",
}
# The files (or single tests, as file::name) whose needs no fixture shows: they run
# sysbench, scripts or servers themselves ("servers"), or talk to this slot's Redis
# ("database"). A pure or database test that starts a process fails and names this table.
TIER_OF_FILE = {
    "tests/execution/test_live.py::test_an_installation_never_sees_the_live_events_of_another_on_the_same_redis": "database",  # noqa: E501
    "tests/execution/test_live.py::test_an_error_answer_is_read_at_the_next_publish_which_goes_out_all_the_same": "database",  # noqa: E501
    "tests/execution/test_cancel.py": "database",
    "tests/loadhosts/test_reading.py": "servers",
    "tests/test_bootstrap_npm_postgres.py": "servers",
    "tests/loadhosts/test_script_account.py": "servers",
    "tests/loadhosts/test_server_shell.py": "servers",
    "tests/loadhosts/test_process_io.py": "servers",
    "tests/execution/test_restart_options_file.py": "servers",
    "tests/services/test_luascripts.py": "servers",
    "tests/web/test_scripts_page.py": "servers",
    "tests/web/test_setup_pages.py::test_only_permitted_users_upload_lua_scripts": "servers",
    "tests/web/test_plan_editor_round_trip.py::test_a_plan_of_a_custom_script_saved_unchanged_reads_back_as_written": "servers",  # noqa: E501
    "tests/sysbench/test_command.py::test_sysbench_reads_back_the_exact_connection_from_the_config_file": "servers",  # noqa: E501
    "tests/sysbench/test_command.py::test_a_built_cpu_command_runs_in_real_sysbench": "servers",
    "tests/test_asgi.py": "servers",
    "tests/test_bench_scripts.py": "servers",
    "tests/test_check.py::test_the_page_scripts_pass_eslint_and_the_type_check": "servers",
    "tests/test_demo_mariadb.py": "servers",
    "tests/test_deploy.py": "servers",
    "tests/test_docs.py::test_the_benchmark_scripts_take_the_options_the_pages_show": "servers",
    "tests/test_keep.py": "servers",
    "tests/api/test_errors.py::test_the_api_answers_503_in_words_while_the_results_database_is_down": "servers",  # noqa: E501
    "tests/api/test_health_outage.py": "servers",
    "tests/execution/test_installations.py": "servers",
    "tests/test_mail.py": "servers",
    "tests/targets/test_inside.py": "servers",
    "tests/targets/test_sync_probe.py": "servers",
    "tests/loadhosts/test_procstream.py::test_sysbench_s_own_cpu_is_read_over_its_threads_and_stops_when_it_ends": "servers",  # noqa: E501
    "tests/web/test_connections.py": "servers",
    "tests/web/test_events.py": "servers",
    "tests/web/test_uploads.py": "servers",
}


def tier_of(item: pytest.Item) -> str:
    module = getattr(item, "module", None)
    if module is not None and any(
        getattr(value, "__module__", "").startswith("playwright") for value in vars(module).values()
    ):
        return "browser"
    test = item.nodeid.split("[")[0]
    by_table = TIER_OF_FILE.get(test) or TIER_OF_FILE.get(test.split("::")[0])
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & SERVER_FIXTURES or by_table == "servers":
        return "servers"
    if fixtures & DATABASE_FIXTURES or item.get_closest_marker("django_db"):
        return "database"
    return by_table or "pure"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by them
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(tier_of(item))


@pytest.fixture(autouse=True)
def _tier_holds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pure or database test starts no process (its tier would be a lie); the others
    get this slot's Redis, started at the first of them. A test on the database leaves
    nobody connected to it."""
    heavy = request.node.get_closest_marker("servers") or request.node.get_closest_marker("browser")
    if heavy or request.node.get_closest_marker("database"):
        isolation.start_redis()
    if "django_db_setup" in request.fixturenames:
        request.getfixturevalue("_nobody_left_on_the_database")
        blocker = request.getfixturevalue("django_db_blocker")
        request.addfinalizer(lambda: _no_connection_left_by_the_test(blocker))
    if heavy:
        return

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(
            "a test of the pure or database tier started a process: put its file in "
            "TIER_OF_FILE of tests/conftest.py as 'servers'"
        )

    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.fixture(scope="session")
def _nobody_left_on_the_database(django_db_setup: None) -> Iterator[None]:
    """Torn down just before the test database is dropped: a connection still open to it
    then (a thread or a process a test left) would make the drop fail; it is named."""
    yield
    from django.db import connection, connections

    connections.close_all()
    name = str(connection.settings_dict["NAME"])
    for holder in isolation.connected_to(connection.settings_dict, name):
        warnings.warn(pytest.PytestWarning(f"{name} in use at its drop: {holder}"), stacklevel=1)


def _no_connection_left_by_the_test(blocker: Any) -> None:
    """After a test and its fixtures, nobody but this thread is on the test database: a
    connection a test leaves open (a thread, a process) is named at the test that left it,
    not found at the end of the run when the database cannot be dropped."""
    from django.db import connection

    with blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_backend_pid(), count(*) FILTER (WHERE pid <> pg_backend_pid())"
            " FROM pg_stat_activity WHERE datname = current_database()"
        )
        mine, others = cursor.fetchone()
    if others:
        name = str(connection.settings_dict["NAME"])
        for holder in isolation.connected_to(connection.settings_dict, name, besides=mine):
            left = pytest.PytestWarning(f"the test left {name} in use: {holder}")
            warnings.warn(left, stacklevel=1)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its run's first process cleaned up
    from django.conf import settings

    database = settings.DATABASES["default"]
    isolation.drop_databases_of_gone_runs(database, str(database["NAME"]))


def pytest_unconfigure(config: pytest.Config) -> None:
    isolation.tear_down()


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


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """A Redis of this test's own, without persistence, for tests that stop or restart
    the broker: benchdash's processes are pointed at it, never the shared one."""
    server = PrivateRedis()
    try:
        yield server.start()
    finally:
        server.stop()


# --- end of private database servers -------------------------------------------------------


# --- a real worker and what it runs ------------------------------------------------------


@pytest.fixture
def celery_worker(transactional_db: None) -> Iterator[None]:
    """A real Celery worker in a thread of the test process, consuming both queues."""
    with start_worker(
        app,
        pool="solo",
        concurrency=1,
        queues=["benchmarks", "celery"],
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield


@pytest.fixture
def local_host(transactional_db: None) -> LoadHost:
    # Created by a migration; transactional tests flush it away after each test.
    return LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]


@pytest.fixture
def target(transactional_db: None, mariadb_server, mariadb_db: str) -> Target:
    return Target.objects.create(
        name="private-mariadb",
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_server.port,
        database=mariadb_db,
        user=mariadb_server.user,
        password=mariadb_server.password,
    )


@pytest.fixture
def make_plan(target: Target, local_host: LoadHost) -> Callable[..., Plan]:
    counter = iter(range(1000))

    def make(**fields: object) -> Plan:
        values: dict[str, object] = {
            "name": f"plan {next(counter)}",
            "target": target,
            "load_host": local_host,
            "test": "oltp_insert",
            "options": {"time": 2, "report-interval": 1, "tables": 1, "table-size": 100},
            "threads": [1],
        }
        values.update(fields)
        return Plan.objects.create(**values)

    return make


# --- a private OpenSSH server: the remote load host of the SSH tests (tests/servers.py) ----
# One sshd per session on a free loopback port, with a temporary host key. Each load host
# logs in with a key of its own; a key may carry a forced command that changes the login
# (no sysbench on its PATH, a low open-file limit), so one sshd serves every case.


@pytest.fixture(scope="session")
def sshd_server() -> Iterator[PrivateSSHD]:
    server = PrivateSSHD()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ssh_key(sshd_server: PrivateSSHD) -> SSHKey:
    """The key of the plain load host: logs in as the test user, nothing forced."""
    key = SSHKey.generate()
    sshd_server.authorize(key)
    key.write(sshd_server.dir / "benchdash_key")
    return key


@pytest.fixture(scope="session")
def ssh_key_file(sshd_server: PrivateSSHD, ssh_key: SSHKey) -> Path:
    """The same key in a file, for the tests' own checks with the OpenSSH client."""
    return sshd_server.dir / "benchdash_key"


@pytest.fixture
def make_ssh_host(transactional_db: None, sshd_server: PrivateSSHD) -> Callable[..., LoadHost]:
    """An SSH load host on the private sshd, its host key confirmed. `command` is forced
    on its logins, `$SSH_ORIGINAL_COMMAND` being what benchdash asked for."""

    def make(name: str, command: str = "", **fields: object) -> LoadHost:
        key = SSHKey.generate()
        sshd_server.authorize(key, command=command)
        values: dict[str, object] = {
            "name": name,
            "kind": "ssh",
            "address": sshd_server.host,
            "port": sshd_server.port,
            "user": sshd_server.user,
            "private_key": key.private,
            "host_key": sshd_server.host_key.public,
        }
        values.update(fields)
        return LoadHost.objects.create(**values)

    return make


@pytest.fixture
def ssh_host(transactional_db: None, sshd_server: PrivateSSHD, ssh_key: SSHKey) -> LoadHost:
    """loadhost-1: the plain SSH load host, host key confirmed."""
    return LoadHost.objects.create(
        name="loadhost-1",
        kind="ssh",
        address=sshd_server.host,
        port=sshd_server.port,
        user=sshd_server.user,
        private_key=ssh_key.private,
        host_key=sshd_server.host_key.public,
    )


# --- end of the private OpenSSH server -------------------------------------------------------


# --- benchdash's own processes, and what tests of real batches share ------------------------


@pytest.fixture
def two_celery_workers(transactional_db: None) -> Iterator[None]:
    """Two benchmark slots, so that two batches could run at once but for the locks."""
    with start_worker(
        app,
        pool="threads",
        concurrency=2,
        queues=["benchmarks", "celery"],
        perform_ping_check=False,
        shutdown_timeout=60,
    ):
        yield


@pytest.fixture
def worker_process(
    transactional_db: None, tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    """Starts real `celery worker` processes, each with a name of its own."""
    started: list[WorkerProcess] = []

    def start(name: str = "benchdash", nofile: int | None = None) -> WorkerProcess:
        log = "worker.log" if name == "benchdash" else f"worker-{name}.log"
        worker = WorkerProcess(tmp_path / log, name, nofile=nofile)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def asgi_server(transactional_db: None, tmp_path: Path) -> Iterator[AsgiServer]:
    server = AsgiServer(tmp_path / "uvicorn.log")
    yield server
    server.stop()


@pytest.fixture
def session_cookie(transactional_db: None, django_user_model) -> dict[str, str]:
    """The session cookie of a logged-in user, for HTTP clients outside Django's test client."""
    from django.test import Client

    user = django_user_model.objects.create_user("watcher", password="watcher-pass-1")
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


@pytest.fixture(scope="session")
def mariadb_nobinlog_server() -> Iterator[servers.PrivateMariaDB]:
    """A private MariaDB as Debian ships it: binary logging off."""
    server = servers.PrivateMariaDB(log_bin=False)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def mariadb_ps_server() -> Iterator[servers.PrivateMariaDB]:
    """A private MariaDB with binary logging and performance_schema on (it times fsyncs)."""
    server = servers.PrivateMariaDB(performance_schema=True)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def free_port() -> int:
    return servers.free_port()


# --- stored batches (tests/stored.py) ------------------------------------------------------


@pytest.fixture
def make_batch(request: pytest.FixtureRequest, db: None) -> Callable[..., Batch]:
    """A batch of `plan` (tests/web's stored plan when none is given): with `threads`, a
    finished batch of stored runs (threads x flush 1/2 x `repeats`, each run with
    `samples` interval samples, a histogram and counters); without, the row a launch
    leaves, with `fields` set."""

    def make(
        plan: Plan | None = None,
        *,
        threads: tuple[int, ...] | None = None,
        repeats: int = 4,
        samples: int = 120,
        spike_at: int | None = None,
        **fields: Any,
    ) -> Batch:
        plan = plan or request.getfixturevalue("stored_plan")
        if threads is None:
            return stored.bare_batch(plan, **fields)
        return stored.finished_batch(plan, threads, repeats, samples, spike_at)

    return make
