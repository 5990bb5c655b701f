"""What a plan would run, checked completely before anything runs: the matrix of cells,
the server settings against the engine's allow-list, and what the target says of itself
(its max_connections, its binary log, the account's privileges)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from runs import loadhosts, targets
from runs.analysis import matrix
from runs.analysis.auto import settings as auto_settings
from runs.columns import RunOptions
from runs.errors import InvalidInput
from runs.models import Engine, LoadHost, LoadSplit, Plan, Target
from runs.sysbench.options import is_sql_test

DEFAULT_OPTIONS: dict[str, object] = {"report-interval": 1, "histogram": "on"}


@dataclass
class PlanCheck:
    """What a plan would run, and what the user should know before launching it."""

    cells: list[matrix.Cell]
    settings: dict[str, list[str]]
    options: dict[str, object]
    warnings: list[str] = field(default_factory=list)
    server: targets.ServerInfo | None = None

    @property
    def run_count(self) -> int:
        return len(self.cells)


def plan_options(plan: Plan) -> dict[str, object]:
    """The fixed options of a plan with benchdash's defaults and the warmup checkpoint."""
    options = {**DEFAULT_OPTIONS, **plan.options}
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
) -> PlanCheck:
    """Validate a plan completely; raises InvalidInput naming the field at fault.

    With contact_server, the target is asked for its variables: a thread count above
    max_connections is refused, and a sync_binlog axis without binary logging is a warning.
    `extra_load_hosts` are the plan's as it is being saved (else those stored).
    """
    plan_connections_check(plan=plan)
    _check_target_fits(plan)
    _check_script_host(plan)
    server_settings = _validate_settings(plan)
    options = plan_options(plan)
    auto = _auto_modes(plan, options)
    option_axes = dict(plan.option_axes)
    if auto.rate is not None:
        option_axes["rate"] = [auto.rate.start]  # the search's first step, as an axis value
    cells = matrix.expand(
        test=plan.test,
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
        cells = _held(cells, hold.last_step_s)
    if extra_load_hosts is None:
        extra_load_hosts = list(plan.extra_load_hosts.all()) if plan.pk else []
    _check_load_hosts(plan, extra_load_hosts, cells, auto)
    check = PlanCheck(cells=cells, settings=server_settings, options=options)
    if contact_server and plan.target is not None:
        check.server = target_inspect(target=plan.target)
        max_threads = max([c.threads for c in cells] + ([auto.threads.max] if auto.threads else []))
        check.warnings = server_warnings(check.server, server_settings, max_threads)
    return check


def _held(cells: list[matrix.Cell], seconds: int) -> list[matrix.Cell]:
    """The last step of a ramp (its largest thread count) held `seconds` long."""
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


def _check_script_host(plan: Plan) -> None:
    # A custom Lua script is arbitrary code: never on the worker's machine, next to the
    # worker's secrets (its database passwords, the encryption keys).
    if plan.script_id is not None and plan.load_host.kind != LoadHost.Kind.SSH:
        raise InvalidInput(
            "load_host",
            "custom Lua scripts run on SSH load hosts only, not on the local host, which "
            "shares the worker's secrets",
        )


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
    return targets.validate_settings(plan.target.engine, plan.server_settings)


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


def target_inspect(*, target: Target) -> targets.ServerInfo:
    with targets.connect_to(target) as db:
        return db.server_info()


def server_warnings(
    server: targets.ServerInfo, server_settings: dict[str, list[str]], max_threads: int
) -> list[str]:
    """Warnings for the user, and a refusal when threads exceed max_connections."""
    allowed = connections_allowed(server, server_settings)
    # benchdash holds one connection of its own while sysbench runs.
    if max_threads + 1 > allowed:
        where = (
            " in the cells that set it so"
            if server_settings.get("max_connections")
            else " on the server"
        )
        raise InvalidInput(
            "threads",
            f"threads={max_threads} needs {max_threads + 1} connections (one per sysbench "
            f"thread, one for benchdash) but max_connections is {allowed}{where}; raise "
            f"max_connections or use fewer threads{_max_connections_fix(server, max_threads)}",
        )
    warnings = _superuser_warnings(server, server_settings)
    if "sync_binlog" in server_settings and not server.log_bin:
        warnings.append("sync_binlog has no effect: binary logging is off (log_bin=OFF)")
    return warnings


def _max_connections_fix(server: targets.ServerInfo, max_threads: int) -> str:
    if "server_version_num" in server.variables:  # PostgreSQL reads it at start only
        return " (PostgreSQL: in postgresql.conf, then restart the server)"
    return (
        f": the plan itself may set it (server settings: max_connections={max_threads + 1} "
        "or more, applied before the runs and put back after the batch)"
    )


def connections_allowed(server: targets.ServerInfo, server_settings: dict[str, list[str]]) -> int:
    """The connections the benchmark may open in its tightest cell. A max_connections
    axis is set before every cell, and every thread count meets every one of its values
    (the matrix is a cross product): its smallest value counts, not the server's current
    one. PostgreSQL keeps its reserved connections from a role that is not a superuser
    either way."""
    values = server_settings.get("max_connections")
    if not values:
        return server.max_connections
    reserved = int(server.variables.get("max_connections", "0") or 0) - server.max_connections
    return min(int(v) for v in values) - reserved


def _superuser_warnings(
    server: targets.ServerInfo, server_settings: dict[str, list[str]]
) -> list[str]:
    """PostgreSQL changes settings with ALTER SYSTEM: a superuser's privilege, which
    PostgreSQL 15 and later can also grant per setting."""
    if not server_settings or server.variables.get("is_superuser") != "off":
        return []
    names = ", ".join(sorted(server_settings))
    if int(server.variables.get("server_version_num", "0") or 0) < 150000:
        raise InvalidInput(
            "server_settings",
            f"the target's PostgreSQL account is not a superuser: it cannot change {names} "
            "with ALTER SYSTEM; connect the target as a superuser",
        )
    return [
        f"the target's PostgreSQL account is not a superuser: changing {names} needs "
        "GRANT ALTER SYSTEM ON PARAMETER for each of them"
    ]


def prepared_statements_step(
    server: targets.ServerInfo,
    server_settings: dict[str, list[str]],
    *,
    test: str,
    max_threads: int,
    statements: int,
) -> tuple[str, str] | None:
    """Prepared-statement tests hold threads x tables x statements on the server; beyond
    max_prepared_stmt_count the threads fail to start with error 1461. (status, message)
    of the preflight step, or None when there is nothing to say. A warning, not a refusal:
    other sessions' statements count too, and the server's value may change before the run."""
    allowed = _statements_allowed(server, server_settings)
    if not statements or allowed is None:
        return None
    needs = f"{test} at threads={max_threads} prepares up to {statements} statements"
    if statements <= allowed:
        if "max_prepared_stmt_count" in server_settings:  # the plan's fix, confirmed
            return "ok", f"{needs}; max_prepared_stmt_count={allowed} holds them"
        return None
    return (
        "warning",
        f"{needs} but max_prepared_stmt_count is {allowed}: the runs would fail with error "
        f"1461; set max_prepared_stmt_count={statements} or more in the plan's server "
        "settings (applied before the runs, put back after the batch), or use "
        "--db-ps-mode=disable, fewer threads or fewer tables",
    )


def _statements_allowed(
    server: targets.ServerInfo, server_settings: dict[str, list[str]]
) -> int | None:
    """The tightest limit of the batch: a plan's max_prepared_stmt_count axis meets every
    thread count (the matrix is a cross product), so its smallest value counts."""
    values = server_settings.get("max_prepared_stmt_count")
    if values:
        return min(int(v) for v in values)
    current = server.variables.get("max_prepared_stmt_count")
    return int(current) if current and current.isdigit() else None


def _check_hold(plan: Plan, auto: auto_settings.Auto, options: dict[str, object]) -> None:
    if plan.order_policy != "ramp":
        raise InvalidInput(
            "auto.hold", "holds the last step of stepped concurrency: set the order to ramp"
        )
    if auto.threads is not None or auto.rate is not None:
        raise InvalidInput("auto.hold", "holds the last step of a fixed ramp, not of a search")
    if len(set(plan.threads)) < 2:
        raise InvalidInput(
            "auto.hold", "needs at least two thread counts: steps to hold the last of"
        )
    if not options.get("time"):
        raise InvalidInput("auto.hold", "needs a timed test (time > 0) to hold longer")
