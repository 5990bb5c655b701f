"""Plans checked, above the worker: what a plan would run, checked completely before
anything runs (when it is saved, edited live or launched): the matrix of cells
(runs/sysbench/matrix.py over the option table), the server settings against the engine's
allow-list, and what the target says of itself (its max_connections, its binary log, the
account's privileges; runs/execution/preflight/limits.py). And a plan's preflight on
demand: the same checks a batch starts with (runs/execution/preflight/), on the plan as
it is."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from runs import loadhosts, targets
from runs.analysis.auto import settings as auto_settings
from runs.columns import RunOptions
from runs.errors import InvalidInput
from runs.execution.preflight import batch as preflight
from runs.execution.preflight import limits
from runs.execution.preflight.report import FAILED, PreflightReport, Subject
from runs.frozen import FrozenScript
from runs.models import Engine, LoadHost, LoadSplit, Plan, Target
from runs.services import restarts
from runs.services.plan_axes import plan_all_targets, plan_servers, plan_tests
from runs.services.scripts import plan_scripts
from runs.sysbench import matrix
from runs.sysbench.options import is_sql_test

DEFAULT_OPTIONS: dict[str, object] = {"report-interval": 1, "histogram": "on"}
# In a plan's options: the values of its custom script's own options (name → value),
# checked against what the script declares (services/plan_scripts.py).
SCRIPT_OPTIONS = "script_options"


@dataclass
class PlanCheck:
    """What a plan would run, and what the user should know before launching it."""

    cells: list[matrix.Cell]
    settings: dict[str, list[str]]
    options: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    server: targets.ServerInfo | None = None
    script: FrozenScript | None = None  # the plan's custom script, as a launch freezes it

    @property
    def run_count(self) -> int:
        return len(self.cells)


def plan_options(plan: Plan) -> dict[str, object]:
    """The fixed options of a plan with benchdash's defaults and the warmup checkpoint."""
    given = {k: v for k, v in plan.options.items() if k != SCRIPT_OPTIONS}
    options = {**DEFAULT_OPTIONS, **given}
    if plan.warmup_s and "report-checkpoints" not in options:
        # sysbench 1.0 has no warmup option: a checkpoint report at W resets the counters,
        # so the final report covers only the steady state after the warmup.
        options["report-checkpoints"] = str(plan.warmup_s)
    return options


def plan_check(
    *,
    plan: Plan,
    seed: int = 0,
    contact_server: bool = True,
    extra_load_hosts: Sequence[LoadHost] | None = None,
    server_targets: Sequence[Target] | None = None,
) -> PlanCheck:
    """Validate a plan completely; raises InvalidInput naming the field at fault.

    With contact_server, the target is asked for its variables: a thread count above
    max_connections is refused, and a sync_binlog axis without binary logging is a warning.
    `extra_load_hosts` and `server_targets` are the plan's as it is being saved (else those
    stored).
    """
    plan_connections_check(plan=plan)
    _check_target_fits(plan)
    server_settings = _validate_settings(plan)
    axis = plan_all_targets(plan, server_targets)
    restarts.servers_check(plan, axis)  # first: a target that never restarts, by name
    _check_server_targets(plan, axis)
    options = plan_options(plan)
    script = plan_scripts.plan_script_check(plan=plan, options=options)
    auto = _auto_modes(plan, options)
    tests = plan_tests(plan)
    if tests and auto.any:
        raise InvalidInput("auto", "the auto modes do not add runs to a tests axis: turn them off")
    option_axes = dict(plan.option_axes)
    if auto.rate is not None:
        option_axes["rate"] = [auto.rate.start]  # the search's first value, as an axis value
    servers = plan_servers(plan, server_targets)
    cells = matrix.expand(
        test=plan.test,
        tests=tests,
        servers=servers,
        fixed_options=options,
        axes=matrix.Axes(
            threads=list(plan.threads),
            server_settings=server_settings,
            options=option_axes,
        ),
        repeats=auto.start_repeats(plan.repeats),
        order=plan.order_policy,
        seed=seed,
        # With existing tables the cells still group by data set; nothing is prepared.
        dataset_policy="fresh" if plan.dataset_policy == "fresh" else "shared",
    )
    hold = auto_settings.hold_from_dict(plan.auto)
    if hold is not None:
        cells = _held(cells, hold.last_level_s)
    if extra_load_hosts is None:
        extra_load_hosts = list(plan.extra_load_hosts.all()) if plan.pk else []
    _check_load_hosts(plan, extra_load_hosts, cells, auto)
    check = PlanCheck(cells=cells, settings=server_settings, options=options, script=script)
    if contact_server and plan.target is not None:
        check.server = limits.target_inspect(target=plan.target)
        max_threads = max([c.threads for c in cells] + ([auto.threads.max] if auto.threads else []))
        check.warnings = limits.server_warnings(check.server, server_settings, max_threads)
    return check


def plan_preflight(
    *,
    plan: Plan,
    extra_load_hosts: Sequence[LoadHost] | None = None,
    server_targets: Sequence[Target] | None = None,
) -> PreflightReport:
    """Check a plan against its load hosts and targets, without running it. A stored value
    no connection can use is refused (InvalidInput) rather than reported as a step.
    `extra_load_hosts` and `server_targets` are those of a plan being edited, else stored."""
    if extra_load_hosts is None:
        extra_load_hosts = list(plan.extra_load_hosts.all()) if plan.pk else []
    plan_connections_check(plan=plan)
    try:
        check = plan_check(
            plan=plan,
            contact_server=False,
            extra_load_hosts=extra_load_hosts,
            server_targets=server_targets,
        )
    except InvalidInput as e:
        report = PreflightReport()
        report.add(plan.name, "plan", FAILED, str(e))
        return report
    subject = Subject(
        load_host=plan.load_host,
        target=plan.target,
        test=plan.test,
        has_script=plan.script_id is not None,
        max_threads=max(cell.threads for cell in check.cells),
        server_settings=check.settings,
        fileio_bytes=preflight.fileio_bytes(plan.test, [cell.options for cell in check.cells]),
        extra_load_hosts=tuple(extra_load_hosts),
        prepared_statements=preflight.most_statements(
            plan.test, [(cell.threads, cell.options, cell.test) for cell in check.cells]
        ),
        server_targets=tuple(plan_all_targets(plan, server_targets)[1:]),
        servers=dict(plan.servers) if isinstance(plan.servers, dict) else {},
    )
    return preflight.run_preflight(subject)


def _held(cells: list[matrix.Cell], seconds: int) -> list[matrix.Cell]:
    """The last level of a ramp (its largest thread count) held `seconds` long."""
    top = max(cell.threads for cell in cells)
    return [
        dataclasses.replace(cell, options={**cell.options, "time": seconds})
        if cell.threads == top
        else cell
        for cell in cells
    ]


def _auto_modes(plan: Plan, options: dict[str, object]) -> auto_settings.Auto:
    """The plan's auto modes, checked against its matrix."""
    auto = auto_settings.auto_from_dict(plan.auto)
    if auto_settings.hold_from_dict(plan.auto) is not None:
        _check_hold(plan, auto, options)
    if auto.threads is not None and list(plan.threads) != [1]:
        raise InvalidInput(
            "threads",
            "with threads auto the search starts at 1 thread and doubles up to its maximum: "
            "give the threads [1]",
        )
    if auto.rate is not None and ("rate" in options or "rate" in plan.option_axes):
        raise InvalidInput("rate", "with rate auto the search sets the rate: leave it out")
    return auto


def _check_load_hosts(
    plan: Plan, extra: Sequence[LoadHost], cells: Sequence[matrix.Cell], auto: auto_settings.Auto
) -> None:
    """More load hosts drive each cell together: SSH hosts only (`local` is whichever
    worker's machine), each once, and enough threads (and rate) to give each one some."""
    if not extra:
        return
    hosts = [plan.load_host, *extra]
    if len({h.pk for h in hosts}) < len(hosts):
        raise InvalidInput("extra_load_hosts", "name each load host once")
    local = [h.name for h in hosts if h.kind != LoadHost.Kind.SSH]
    if local:
        raise InvalidInput(
            "extra_load_hosts",
            f"a cell from several load hosts needs SSH load hosts; {', '.join(local)} is the "
            "machine of whichever worker takes the batch",
        )
    if plan.script_id is not None:
        raise InvalidInput("extra_load_hosts", "custom Lua scripts run from one load host")
    if plan.load_split != LoadSplit.DIVIDE:
        return
    if auto.threads is not None:
        raise InvalidInput(
            "load_split",
            f"threads auto starts at 1 thread, which cannot be divided between {len(hosts)} "
            "load hosts: run the threads on each host instead",
        )
    for cell in cells:
        rate = RunOptions.load(cell.options).rate or 0
        if cell.threads < len(hosts) or 0 < rate < len(hosts):
            raise InvalidInput(
                "threads" if cell.threads < len(hosts) else "rate",
                f"{cell.label} cannot be divided between {len(hosts)} load hosts: give "
                "each host at least one thread (and one transaction per second)",
            )


def plan_connections_check(*, plan: Plan) -> None:
    """The plan's load host and target as stored, checked as the connection layers would
    use them (a row saved before these checks existed may hold what they cannot): a
    refusal names the field, e.g. load_host.address."""
    try:
        loadhosts.loadhost_check(plan.load_host)
    except InvalidInput as e:
        raise e.within("load_host") from None
    if plan.target is not None and is_sql_test(plan.test):
        try:
            targets.target_check(plan.target)
        except InvalidInput as e:
            raise e.within("target") from None


def _check_target_fits(plan: Plan) -> None:
    if is_sql_test(plan.test):
        if plan.target is None:
            raise InvalidInput("target", f"{plan.test} is a database test: choose a target")
        target_validate(target=plan.target)


def _validate_settings(plan: Plan) -> dict[str, list[str]]:
    if not plan.server_settings:
        return {}
    if plan.target is None:
        raise InvalidInput("server_settings", "server settings need a target")
    if _on_results_server(plan.target):
        raise InvalidInput(
            "server_settings",
            "this PostgreSQL server holds benchdash's own results: its settings are never "
            "changed; benchmark another server",
        )
    return restarts.settings_check(plan.target, plan.server_settings)


def _check_server_targets(plan: Plan, axis: list[Target]) -> None:
    """A servers axis's targets: database tests only, each target once, each one benchdash may use,
    and the settings axes known on each one's engine (engines may differ)."""
    if len(axis) < 2 and (plan.target is not None or not axis):
        return
    if not is_sql_test(plan.test):
        raise InvalidInput(
            "servers.targets",
            f"{plan.test} does not use a target: several targets need a database test",
        )
    if plan.target is None:
        raise InvalidInput("servers.targets", "choose the plan's target first: it is the baseline")
    seen: set[int] = set()
    for target in axis:
        if target.pk in seen:
            raise InvalidInput(
                "servers.targets", f"{target} is listed twice (the plan's target is the first)"
            )
        seen.add(target.pk)
    for target in axis[1:]:
        try:
            target_validate(target=target)
        except InvalidInput as e:
            raise InvalidInput("servers.targets", f"{target}: {e}") from None
        if plan.server_settings and _on_results_server(target):
            raise InvalidInput(
                "servers.targets",
                f"{target} holds benchdash's own results: its settings are never changed",
            )
        try:  # restart-only settings on a target that opted in, as on the first one
            restarts.settings_check(target, plan.server_settings)
        except InvalidInput as e:
            raise InvalidInput(
                e.field, f"{e.message} (on {target}, a {target.get_engine_display()} server)"
            ) from None


def _on_results_server(target: Target) -> bool:
    """Whether the target is the PostgreSQL server of the results store (ALTER SYSTEM
    there would change benchdash's own database server)."""
    store = settings.DATABASES["default"]
    return (
        target.engine == Engine.POSTGRESQL
        and target.host in {store["HOST"], "localhost", "127.0.0.1"}
        and str(target.port or 5432) == str(store["PORT"] or 5432)
    )


def target_validate(*, target: Target) -> None:
    """Refuse targets whose database benchdash must never prepare or clean up, and values
    the connection layer cannot use."""
    targets.check_database_name(target.database, target.engine)
    targets.target_check(target)
    store = settings.DATABASES["default"]
    same_store = (
        target.engine == Engine.POSTGRESQL
        and target.database == store["NAME"]
        and target.host in {store["HOST"], "localhost", "127.0.0.1"}
        and str(target.port or 5432) == str(store["PORT"] or 5432)
    )
    if same_store:
        raise InvalidInput("database", "this is benchdash's own results database")
    restarts.target_restart_check(target=target, on_results_server=_on_results_server(target))


def _check_hold(plan: Plan, auto: auto_settings.Auto, options: dict[str, object]) -> None:
    if plan.order_policy != "ramp":
        raise InvalidInput(
            "auto.hold", "holds the last level of stepped concurrency: set the order to ramp"
        )
    if auto.threads is not None or auto.rate is not None:
        raise InvalidInput("auto.hold", "holds the last level of a fixed ramp, not of a search")
    if len(set(plan.threads)) < 2:
        raise InvalidInput(
            "auto.hold", "needs at least two thread counts: levels to hold the last of"
        )
    if not options.get("time"):
        raise InvalidInput("auto.hold", "needs a timed test (time > 0) to hold longer")
