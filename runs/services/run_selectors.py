"""Reads of one run, each in one place: the environment it ran in (its own target's),
what sysbench printed, its samples and its machines' seconds."""

from __future__ import annotations

from typing import Any

from django.db.models import Max, QuerySet

from runs.analysis import run_facts, tpcc
from runs.columns import BatchEnvironment, RunOptions, RunSummary
from runs.execution import server_targets
from runs.models import HostMetrics, Run, Sample


def run_environment(run: Run) -> dict[str, Any]:
    """The environment a run ran in: its batch's snapshot of the run's own target, with
    what the run read from that server once its own settings were applied (its version,
    the variables it saw changed), the target's address and the config it ran with."""
    environment: dict[str, Any] = run.batch.environment or {}
    own = {k: v for k, v in (run.environment or {}).items() if k in RUN_OWN_ENVIRONMENT}
    recorded = BatchEnvironment.load(run.environment)
    further = run.target_id not in (None, run.batch.target_id)
    if not own and not recorded.server and not further:
        return environment
    before = BatchEnvironment.load(
        {"server": server_targets.server_snapshot(run.batch, run.target_id)}
    )
    variables = {**before.server_variables, **recorded.server_variables}
    server = {**before.server, **recorded.server, "variables": variables}
    return {**environment, **own, "server": server}


# What a run records of its own beside its server (runs/execution/environment.py).
RUN_OWN_ENVIRONMENT = ("target", "config", "restart", "rows")  # rows: execution/row_counts.py


def run_server_before(run: Run) -> dict[str, str]:
    """The variables of the run's own target as its batch recorded them before the first
    change: what the run's changed variables are compared with."""
    snapshot = server_targets.server_snapshot(run.batch, run.target_id)
    return BatchEnvironment.load({"server": snapshot}).server_variables


def run_facts_of(run: Run) -> run_facts.RunFacts:
    """Everything sysbench printed for a run, as its page and the import preview show it."""
    return run_facts.run_facts(
        outcome=run.outcome,
        reports=run.reports,
        histogram=run.histogram,
        counters=run.counters,
        raw_log=run.raw_log,
        histogram_option=RunOptions.load(run.options).histogram,
    )


def run_changed_variables(run: Run) -> dict[str, str]:
    """The server variables this run saw differ from its batch's snapshot."""
    return BatchEnvironment.load(run.environment).server_variables


def samples_after(run: Run, *, after: int, limit: int) -> list[Sample]:
    return list(samples_after_query(run, after=after, limit=limit))


def samples_after_query(run: Run, *, after: int, limit: int) -> QuerySet[Sample]:
    return run.samples.filter(seq__gt=after).order_by("seq")[:limit]


def run_host_metrics(run: Run) -> list[HostMetrics]:
    """A run's host metrics rows: each machine's seconds in order."""
    return list(run.host_metrics.order_by("role", "host", "seq"))


def last_seq_within(run: Run, *, after: int, limit: int) -> int:
    """The seq of the last of the `limit` samples after `after` (`after` if none): read
    from the index alone, before those samples are sent."""
    found = samples_after_query(run, after=after, limit=limit).aggregate(last=Max("seq"))["last"]
    return int(found) if found is not None else after


def run_tpcc(run: Run) -> tpcc.TpccRun | None:
    """A TPC-C run's tpmC, mix, ignored errors and warehouses; None for another run (told
    by its command, before any sample is read)."""
    if not tpcc.is_tpcc(run.argv):
        return None
    rows = run.samples.order_by("seq").values_list("tps", "errors_per_s", "extra", "in_warmup")
    tps = RunSummary.load(run.summary).tps
    return tpcc.tpcc_run(
        argv=run.argv,
        intervals=[tpcc.Interval(*row) for row in rows],
        tps=tps,
    )
