"""A load host lost mid-batch (its sshd or the machine went away) is waited for like a
target (target_wait.py): bounded by BENCHDASH_TARGET_WAIT_S, shown on the batch. When it
answers again, the sysbench the lost connection left there is stopped and the private
directories left there are removed; when it does not, LoadHostGone ends the batch, whose
data set the worker then drops on the target itself."""

from __future__ import annotations

import time

from django.conf import settings
from django.utils import timezone

from runs.execution.outages.target_wait import POLL_S, show_waiting
from runs.execution.stream.heartbeat import Pulse, Watch
from runs.loadhosts import Executor, ExecutorError
from runs.models import Batch, Run

# What a connection that cannot be made says (runs/loadhosts/ssh.py), or the line the SSH
# executor adds when sysbench's output ended without an exit status.
_LOST_WORDS = ("cannot reach ", "was lost", "no SSH handshake with ")


class LoadHostGone(Exception):
    """The load host did not answer again within the wait."""


def host_unreachable(message: str) -> bool:
    return any(word in message for word in _LOST_WORDS)


def load_host_wait(
    *, batch: Batch, pulse: Pulse, executor: Executor, error: str, pgid: int | None = None
) -> None:
    """Wait, beating, until the load host answers over SSH; LoadHostGone after the limit.
    `pgid`: the sysbench group the lost connection left running there, stopped once back."""
    limit = settings.BENCHDASH_TARGET_WAIT_S
    name = executor.host_name
    since = timezone.now()
    deadline = time.monotonic() + limit
    watch = Watch(batch.pk)
    show_waiting(
        batch, pulse, f"waiting: load host {name} unreachable since {since:%H:%M:%S} UTC ({error})"
    )
    try:
        while True:
            try:
                _next_contact(batch, executor, pgid)
                away_s = (timezone.now() - since).total_seconds()
                batch.warnings = [
                    *batch.warnings,
                    f"the load host {name} was unreachable from {since:%H:%M:%S} UTC and "
                    f"answered again {away_s:.0f} s later; the batch went on",
                ]
                return
            except ExecutorError as e:
                error = str(e)
            if time.monotonic() >= deadline:
                raise LoadHostGone(
                    f"the load host {name} was unreachable for {limit:g} s "
                    f"(since {since:%H:%M:%S} UTC): {error}"
                )
            time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
            stop = pulse.tick(watch)
            if stop is not None:
                raise stop
    finally:
        show_waiting(batch, pulse, "")


def _next_contact(batch: Batch, executor: Executor, pgid: int | None) -> None:
    """The host answers: what the lost connection left there goes first, the sysbench and
    the private directories (those recorded on the batch's runs, and any other whose
    sysbench is gone)."""
    if pgid:
        executor.kill_group(pgid)
    for run in batch.runs.exclude(config_dir=""):
        executor.remove_config_dir(run.config_dir)
        Run.objects.filter(pk=run.pk).update(config_dir="")
    sweep = getattr(executor, "sweep_private_dirs", None)
    if sweep is not None:
        sweep()
    else:
        executor.sysbench_version()
