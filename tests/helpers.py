"""Helpers of the tests that run real batches: waiting for a batch or a condition, and
reading what the private server and sysbench really say."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from django.utils import timezone

from runs.models import ACTIVE_STATUSES, FINISHED_STATUSES, Alert, Batch, LoadHost
from runs.services import selectors
from runs.services.nightly import confirming
from tests.servers import SSHKey

if TYPE_CHECKING:
    from tests.netns import TestNetwork


def wait_for_batch(batch: Batch, timeout: float = 180) -> Batch:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        batch.refresh_from_db()
        if batch.status in FINISHED_STATUSES:
            return batch
        time.sleep(0.3)
    raise AssertionError(
        f"batch {batch.pk} still {batch.status} after {timeout}s: {_behind(batch)}"
    )


def _behind(batch: Batch) -> str:
    """What an unfinished batch waits behind: a lock's holder, the batches the workers
    run, or its runs so far."""
    runs = list(batch.runs.values_list("status", flat=True))
    done = sum(status in FINISHED_STATUSES for status in runs)
    busy = Batch.objects.filter(status__in=ACTIVE_STATUSES).exclude(pk=batch.pk)
    others = ", ".join(f"batch {pk} {status}" for pk, status in busy.values_list("pk", "status"))
    return (
        f"{selectors.batch_waiting_for(batch) or 'no lock in its way'}; {done} of {len(runs)}"
        f" runs done; other batches active: {others or 'none'}"
    )


def wait_for_confirmation(night: Batch) -> Alert:
    """The alert of a night its check flagged, once its re-run answered. Waited for as long
    as the product promises (runs/services/nightly/confirming.py: the answer's due time,
    which grows only by the repeats a marginal step adds, each saying why), and failing
    with what it waited behind."""
    night.refresh_from_db()
    status = (night.analysis or {}).get("status")
    assert status == "regression", f"batch {night.pk} was not alerted: {night.analysis}"
    # The alert is opened by the task that stored the check, just after it.
    ended = night.finished_at or timezone.now()
    opened = ended + timedelta(seconds=confirming.HAND_OVER_ALLOWANCE_S)
    while (alert := Alert.objects.filter(batch=night).select_related("batch").first()) is None:
        assert timezone.now() < opened, f"batch {night.pk} was alerted, no alert was opened"
        time.sleep(0.2)
    while True:
        alert.refresh_from_db()
        if alert.state != Alert.State.CONFIRMING or alert.verdict:
            return alert
        due = confirming.confirmation_due(alert=alert)
        if timezone.now() > due:
            waited = (due - ended).total_seconds()
            raise AssertionError(
                f"the confirmation of batch {night.pk} was due {waited:.0f} s after the "
                f"night's end, at {due:%H:%M:%S}: {confirming.confirmation_waiting(alert=alert)}"
            )
        time.sleep(0.2)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def global_variable(server, name: str) -> str:
    db = server.root_connect()
    try:
        cursor = db.cursor()
        cursor.execute("SELECT @@GLOBAL." + name)  # names are constants of these tests
        return str(cursor.fetchone()[0])
    finally:
        db.close()


@contextmanager
def server_variable(server, name: str, value: str) -> Iterator[None]:
    """A global variable of a private server set for the block, then put back."""
    before = global_variable(server, name)
    server.execute(f"SET GLOBAL {name} = {value}")  # constants of these tests
    try:
        yield
    finally:
        server.execute(f"SET GLOBAL {name} = {before}")


def printed_transactions(raw_log: str) -> int:
    """The transaction count of the last report sysbench printed, read independently."""
    counts = re.findall(r"^\s*transactions:\s+(\d+)", raw_log, re.MULTILINE)
    return int(counts[-1])


def namespace_load_hosts(network: TestNetwork, prefix: str) -> list[LoadHost]:
    """A load host for each of the network's namespaces (`prefix` + 1, 2, ...), each
    reached over its own sshd with a key of its own."""
    made = []
    for i, host in enumerate(network.hosts):
        key = SSHKey.generate()
        host.sshd.authorize(key)
        made.append(
            LoadHost.objects.create(
                name=f"{prefix}{i + 1}",
                kind="ssh",
                address=host.address,
                port=host.sshd.port,
                user=host.sshd.user,
                private_key=key.private,
                host_key=host.sshd.host_key.public,
            )
        )
    return made
