"""A target that restarts mid-batch is waited for, bounded; an error that every cell would
repeat stops the batch after its first occurrence, with one clear reason."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from runs.models import Batch, LoadHost, Plan, Sample, Status, Target
from runs.services import batches, recovery
from tests.helpers import global_variable, wait_for_batch, wait_until
from tests.servers import PrivateMariaDB, PrivatePostgres, free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

RUN = {"time": 6, "report-interval": 1, "tables": 1, "table-size": 100, "rate": 10}
FLUSH = "innodb_flush_log_at_trx_commit"


@pytest.fixture
def plan_on(local_host: LoadHost):
    def make(server: PrivateMariaDB, flush_values: list[str], **fields: object) -> Plan:
        target = Target.objects.create(
            name=f"restartable-{server.port}",
            engine="mariadb",
            host=server.host,
            port=server.port,
            database="sbtest",
            user=server.user,
            password=server.password,
        )
        values: dict[str, object] = {
            "name": f"faults {server.port}",
            "target": target,
            "load_host": local_host,
            "test": "oltp_read_only",
            "options": RUN,
            "threads": [1],
            "server_settings": {FLUSH: flush_values},
            "order_policy": "ramp",
        }
        values.update(fields)
        return Plan.objects.create(**values)

    return make


def wait_for_samples(batch: Batch, count: int) -> None:
    wait_until(
        lambda: Sample.objects.filter(run__batch=batch, run__position=0).count() >= count,
        timeout=90,
        what=f"{count} samples",
    )


def test_a_target_that_restarts_mid_run_is_waited_for_and_the_batch_goes_on(
    celery_worker, restartable, plan_on
):
    original = global_variable(restartable, FLUSH)
    batch = batches.batch_launch(plan=plan_on(restartable, ["0", "2"]))
    wait_for_samples(batch, 2)

    restartable.stop_server()
    wait_until(
        lambda: Batch.objects.get(pk=batch.pk).waiting_for.startswith(
            "waiting: target unreachable"
        ),
        timeout=60,
        what="the batch to wait for its target",
    )
    waiting = Batch.objects.get(pk=batch.pk)
    restartable.start_again()
    batch = wait_for_batch(batch, timeout=180)

    assert waiting.status == Status.RUNNING  # neither the sweeper nor the locks misread it
    first, second = batch.runs.order_by("position")
    assert first.status == Status.FAILED and first.error_kind == "connect", first.error
    assert second.status == Status.DONE, second.error
    assert second.verified_settings == {FLUSH: "2"}  # applied and verified again
    assert second.samples.count() >= 5
    assert batch.waiting_for == ""
    assert global_variable(restartable, FLUSH) == original
    # The ending names its cause: which run failed, and the target's absence.
    assert batch.status == Status.FAILED
    # issue 37: the run named by its id, as users see it, and the cause in words
    assert batch.error.startswith(f"1 of 2 runs failed; the first, run {first.pk} ("), batch.error
    assert first.error.startswith("the server closed the connection at about "), first.error
    assert "2013" in first.error and "the server closed the connection" in batch.error
    assert any("was unreachable from" in w and "came back" in w for w in batch.warnings)


def test_a_target_that_stays_away_skips_the_remaining_cells_with_one_reason(
    celery_worker, restartable, plan_on, settings
):
    settings.BENCHDASH_TARGET_WAIT_S = 4
    batch = batches.batch_launch(plan=plan_on(restartable, ["0", "1", "2"]))
    wait_for_samples(batch, 2)

    restartable.stop_server()
    batch = wait_for_batch(batch, timeout=120)

    runs = list(batch.runs.order_by("position"))
    assert [r.status for r in runs] == [Status.FAILED, Status.SKIPPED, Status.SKIPPED]
    reasons = {r.error for r in runs[1:]}
    assert len(reasons) == 1
    (reason,) = reasons
    assert reason.startswith("skipped: the target restartable-") and "unreachable for 4 s" in reason
    assert batch.status == Status.FAILED
    assert "unreachable for 4 s" in batch.error


def test_a_missing_table_stops_the_batch_after_the_first_failure(
    celery_worker, restartable, plan_on
):
    plan = plan_on(restartable, ["0", "1", "2"], dataset_policy="existing")

    batch = wait_for_batch(batches.batch_launch(plan=plan))

    runs = list(batch.runs.order_by("position"))
    assert [r.status for r in runs] == [Status.FAILED, Status.SKIPPED, Status.SKIPPED]
    assert runs[0].error_kind == "missing_table"
    assert "1146" in runs[1].error and "every remaining cell would fail" in runs[1].error
    assert batch.status == Status.FAILED


class CutOff:
    """A TCP relay in front of a server: `cut()` drops every connection and refuses new
    ones, the server itself untouched (its settings stay as the batch left them), as a
    network outage does; `restore()` lets connections through again, on the same port."""

    def __init__(self, port: int) -> None:
        self.backend = port
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            server = socket.create_connection(("127.0.0.1", self.backend))
            self._sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        assert self._listener is not None
        self._listener.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
                s.close()
        self._sockets = []


def test_settings_left_by_a_target_gone_too_long_are_restored_once_it_is_back(
    celery_worker, restartable, plan_on, settings
):
    settings.BENCHDASH_TARGET_WAIT_S = 3
    original = global_variable(restartable, FLUSH)
    relay = CutOff(restartable.port)
    plan = plan_on(restartable, ["0", "2"])
    Target.objects.filter(pk=plan.target_id).update(port=relay.port)
    batch = batches.batch_launch(plan=plan)
    wait_for_samples(batch, 2)

    relay.cut()
    batch = wait_for_batch(batch, timeout=120)
    assert batch.status == Status.FAILED and "could not restore" in batch.error
    assert global_variable(restartable, FLUSH) == "0"  # left as the first cell set it

    relay.restore()
    recovery.batches_sweep_stale(hostname=socket.gethostname())

    batch.refresh_from_db()
    assert global_variable(restartable, FLUSH) == original
    assert batch.settings_restored_at is not None
    assert any("restored" in w and "target was back" in w for w in batch.warnings), batch.warnings


def _tables(server: PrivateMariaDB) -> list[str]:
    db = server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute("SHOW TABLES FROM sbtest")
        return sorted(str(row[0]) for row in cursor.fetchall())
    finally:
        db.close()


def test_a_target_stopped_past_the_wait_gets_its_settings_and_data_set_back_once_started(
    celery_worker, restartable, plan_on, settings, caplog
):
    settings.BENCHDASH_TARGET_WAIT_S = 3
    original = global_variable(restartable, FLUSH)
    batch = batches.batch_launch(plan=plan_on(restartable, ["2"], threads=[1, 2]))
    wait_for_samples(batch, 2)

    restartable.stop_server()  # longer than the wait: the batch ends without its target
    batch = wait_for_batch(batch, timeout=120)
    assert batch.status == Status.FAILED and batch.settings_restored_at is None, batch.error

    restartable.start_again()
    assert "sbtest1" in _tables(restartable)  # what the batch left there
    # The sweeper's put-back (runs/services/put_back.py) logs what it dropped.
    with caplog.at_level(logging.INFO, logger="runs.services.put_back"):
        recovery.batches_sweep_stale(hostname=socket.gethostname())

    batch.refresh_from_db()
    assert global_variable(restartable, FLUSH) == original
    assert batch.settings_restored_at is not None
    assert _tables(restartable) == []  # neither sbtest1 nor the marker
    last = batch.stages[-1]
    assert last["kind"] == "cleanup" and last["ok"], batch.stages
    assert "by the sweeper" in last["reason"], last
    assert any("data set" in w and "dropped at" in w and "UTC" in w for w in batch.warnings), (
        batch.warnings
    )
    said = [r.getMessage() for r in caplog.records]
    assert any(f"batch {batch.pk}: data set" in m and "dropped at" in m for m in said), said

    # A second sweep finds nothing more to do there.
    stages = len(batch.stages)
    recovery.batches_sweep_stale(hostname=socket.gethostname())
    batch.refresh_from_db()
    assert len(batch.stages) == stages


@pytest.fixture
def restartable_pg() -> Iterator[PrivatePostgres]:
    """A PostgreSQL of this test's own: the test stops and starts it."""
    server = PrivatePostgres()
    try:
        server.start()
        with server.connect() as db:
            db.execute("CREATE DATABASE sbtest")
        yield server
    finally:
        server.stop()


def test_a_postgresql_stopped_mid_run_is_told_as_the_server_closing_the_connection(
    celery_worker, restartable_pg, local_host
):
    # issue 37: sysbench's pgsql driver prints nothing and dies of SIGSEGV when the server
    # goes away; the run, the batch, the webhook and the command said "sysbench exited with
    # code 139 ... (other)", the batch naming the run by its place ("run 2").
    target = Target.objects.create(
        name="restartable-pg", engine="postgresql", host=restartable_pg.host,
        port=restartable_pg.port, database="sbtest", user=restartable_pg.user, password="",
    )  # fmt: skip
    plan = Plan.objects.create(
        name="pg faults", target=target, load_host=local_host, test="oltp_read_only",
        options=RUN, threads=[1, 2], order_policy="ramp",
    )  # fmt: skip
    batch = batches.batch_launch(plan=plan)
    wait_for_samples(batch, 2)

    restartable_pg.stop_server()
    wait_until(
        lambda: Batch.objects.get(pk=batch.pk).waiting_for.startswith(
            "waiting: target unreachable"
        ),
        timeout=60,
        what="the batch to wait for its target",
    )
    restartable_pg.start_again()
    batch = wait_for_batch(batch, timeout=180)

    first, second = batch.runs.order_by("position")
    assert first.status == Status.FAILED and first.error_kind == "connect", first.error
    assert first.error.startswith("the server closed the connection at about "), first.error
    assert "into the run" in first.error and "(other)" not in first.error
    assert "went away during the run" in first.error_hint
    assert second.status == Status.DONE, second.error
    assert batch.error.startswith(
        f"1 of 2 runs failed; the first, run {first.pk} (threads=1): the server closed the "
        "connection at about "
    ), batch.error
