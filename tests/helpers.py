"""Helpers of the tests that run real batches: waiting for a batch or a condition, and
reading what the private server and sysbench really say."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from runs.models import FINISHED_STATUSES, Batch, LoadHost
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
    raise AssertionError(f"batch {batch.pk} still {batch.status} after {timeout}s")


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
