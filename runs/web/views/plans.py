"""Pages of plans: the editor with its live check and preflight, launch, delete, and
the list of schedules."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.forms import Form
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone as dj_timezone
from django.views.decorators.http import require_POST

from runs import targets
from runs.analysis.auto import settings as auto_settings
from runs.errors import InvalidInput
from runs.http.responses import json_response
from runs.models import Batch, LaunchedBy, LoadHost, Plan, Target
from runs.services import batches, definitions, permissions, plan_axes, restarts, selectors
from runs.services import plans as plan_checks
from runs.services.nightly import schedules
from runs.services.queue import BrokerUnavailable
from runs.sysbench.options import OPTIONS
from runs.web import plan_editor, plan_estimate
from runs.web.plan_form import PlanForm
from runs.web.plan_initial import plan_initial, plan_matrix_values
from runs.web.views.common import request_user, show_model_errors, show_protected, show_refusal


def plans_list(request: HttpRequest) -> HttpResponse:
    return render(request, "runs/plans.html", {"plans": selectors.plans_listed()})


def _plan_from_post(
    request: HttpRequest, plan: Plan, data: QueryDict | None = None
) -> tuple[PlanForm, plan_editor.Matrix | None]:
    """The posted editor as an unsaved plan; errors land on the form."""
    data = data if data is not None else request.POST
    form = PlanForm(data, user=request.user, initial={"script": plan.script_id})
    matrix = None
    try:
        matrix = plan_editor.matrix_from_form(data)
    except InvalidInput as e:
        show_refusal(form, e)
    if form.is_valid() and matrix is not None:
        for name, value in form.plan_fields().items():
            setattr(plan, name, value)
        plan.threads = matrix.threads
        plan.options = matrix.options
        try:
            script_options = plan_editor.parse_script_options(
                form.cleaned_data.get("script_options") or ""
            )
        except InvalidInput as e:
            show_refusal(form, e)
        else:
            if script_options:
                plan.options = {**matrix.options, "script_options": script_options}
        plan.server_settings = matrix.server_settings
        plan.option_axes = matrix.option_axes
        plan.servers = form.servers(matrix.configs)
    return form, matrix


def plan_edit(request: HttpRequest, plan_id: int | None = None) -> HttpResponse:
    plan = get_object_or_404(selectors.plans_listed(), pk=plan_id) if plan_id else Plan()
    if request.method == "POST" and plan.pk:
        permissions.require(request.user, "change", plan)
    if request.method == "POST":
        form, matrix = _plan_from_post(request, plan)
        if form.is_valid() and matrix is not None:
            saved = _plan_save(request, form, plan)
            if saved is not None:
                return saved
        values = plan_editor.form_values_from_post(request.POST)
    else:
        initial = plan_initial(plan) if plan.pk else {}
        form = PlanForm(initial=initial, user=request.user)
        values = (
            plan_matrix_values(plan)
            if plan.pk
            else plan_editor.form_values(
                threads=[1, 2, 4, 8],
                options={"time": 60, "report-interval": 1, "tables": 1, "table-size": 10000},
                server_settings={},
                option_axes={},
            )
        )
    return render(request, "runs/plan_form.html", _editor_context(plan, form, values))


class _NotLaunched(Exception):
    """Save and launch: the launch was refused, so the save is undone with it."""

    def __init__(self, refusal: InvalidInput) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


def _plan_save(request: HttpRequest, form: PlanForm, plan: Plan) -> HttpResponse | None:
    """Save the plan; with "Save and launch", launch it in the same transaction: a launch
    refused (more threads than the server allows, ...) saves nothing, and says so."""
    if plan.created_by_id is None:
        plan.created_by = request_user(request)
    launch = request.POST.get("action") == "launch"
    was_new = plan.pk is None
    batch = None
    try:
        extra = list(form.cleaned_data["extra_load_hosts"])
        more = list(form.cleaned_data["server_targets"])
        permissions.require_use(request.user, plan, extra, more)
        if launch and not was_new:
            permissions.require_launch(request.user, plan)
        with transaction.atomic():
            check = definitions.plan_save(plan=plan, extra_load_hosts=extra, server_targets=more)
            _save_schedule(form, plan)
            if launch:
                batch = _launch_saved(request, plan)
    except permissions.NotAllowed as e:
        field = EDITOR_FIELDS.get(e.field or "", e.field)
        form.add_error(field if field in form.fields else None, e.message)
        return None
    except InvalidInput as e:
        show_refusal(form, _in_editor(e))
        return None
    except DjangoValidationError as e:
        show_model_errors(form, e)
        return None
    except _NotLaunched as e:
        if was_new:
            plan.pk = None  # its row was rolled back with the launch
        show_refusal(form, e.refusal)
        form.add_error(
            None,
            f"Not saved: the plan cannot be launched ({e}). Change the plan, or press Save "
            "to keep it without launching.",
        )
        return None
    except BrokerUnavailable as e:
        # Raised as the transaction committed: the plan is saved, its batch failed at once.
        messages.error(request, f"Plan {plan.name} saved, but not launched: {e}")
        return redirect("plan_edit", plan_id=plan.pk)
    if batch is not None:
        messages.success(request, f"Plan {plan.name} saved; batch {batch.pk} launched.")
        return redirect("batch_detail", batch_id=batch.pk)
    messages.success(request, f"Plan {plan.name} saved: {check.run_count} runs.")
    return redirect("plan_edit", plan_id=plan.pk)


def _launch_saved(request: HttpRequest, plan: Plan) -> Batch:
    try:
        return batches.batch_launch(
            plan=plan, launched_by=LaunchedBy.UI, user=request_user(request)
        )
    except InvalidInput as e:
        raise _NotLaunched(e) from e


# The services name a plan's fields as the API has them; the editor's own names differ.
EDITOR_FIELDS = {
    "servers.targets": "server_targets",
    "servers.installs": "installs",
    "servers.after_restart": "after_restart",
    "servers.warm_s": "warm_s",
}


def _in_editor(refusal: InvalidInput) -> InvalidInput:
    """A service's refusal naming the editor's field."""
    field = EDITOR_FIELDS.get(refusal.field)
    return refusal if field is None else InvalidInput(field, refusal.message)


# The schedule's fields on the page, by the names the service gives its refusals.
SCHEDULE_FIELDS = {
    "cron": "schedule_cron",
    "interval_s": "schedule_interval_min",
    "clocked_at": "schedule_clocked_at",
    "timezone": "schedule_timezone",
}


def _save_schedule(form: PlanForm, plan: Plan) -> None:
    data = form.cleaned_data
    kind = data.get("schedule_kind") or ""
    if not kind:
        schedules.plan_schedule_delete(plan=plan)
        return
    cron = (data.get("schedule_cron") or "").strip() if kind == "cron" else None
    minutes = data.get("schedule_interval_min") if kind == "interval" else None
    clocked_at = data.get("schedule_clocked_at") if kind == "clocked" else None
    if kind == "cron" and not cron:
        raise InvalidInput("schedule_cron", "give a cron expression, e.g. 0 2 * * *")
    if kind == "interval" and not minutes:
        raise InvalidInput("schedule_interval_min", "give the minutes between launches")
    if kind == "clocked" and not clocked_at:
        raise InvalidInput("schedule_clocked_at", "give the date and time to launch at")
    # The input has no zone: the time as typed, read in the schedule's zone.
    typed = dj_timezone.make_naive(clocked_at) if clocked_at else None
    zone = data.get("schedule_timezone") or "UTC"
    enabled = bool(data.get("schedule_enabled"))
    if typed is not None and _same_clocked(plan, typed, zone, enabled):
        return  # kept as it was: a time that has passed fired already, and stays so
    try:
        schedules.plan_schedule_set(
            plan=plan,
            cron=cron,
            interval_s=minutes * 60 if minutes else None,
            clocked_at=typed,
            timezone=zone,
            enabled=enabled,
            run_now=bool(data.get("schedule_run_now")),
        )
    except InvalidInput as e:
        raise InvalidInput(SCHEDULE_FIELDS.get(e.field, e.field), e.message) from None


def _same_clocked(plan: Plan, typed: datetime, zone: str, enabled: bool) -> bool:
    if plan.schedule is None or plan.schedule.clocked is None:
        return False
    stored = schedules.schedule_describe(plan.schedule)
    at = dj_timezone.make_aware(typed, ZoneInfo(zone))
    # The page shows whole seconds.
    same = stored.clocked_at is not None and stored.clocked_at.replace(microsecond=0) == at
    return same and stored.enabled == enabled


def _editor_context(plan: Plan, form: PlanForm, values: dict[str, Any]) -> dict[str, Any]:
    options = [spec for name, spec in OPTIONS.items() if name != "threads"]
    common = [s for s in options if s.name in plan_editor.COMMON_OPTIONS]
    return {
        "plan": plan,
        "form": form,
        "values": values,
        "common_options": common,
        "more_options": [s for s in options if s.name not in plan_editor.COMMON_OPTIONS],
        "axis_options": options,
        "presets": plan_editor.THREAD_PRESETS,
        "mysql_settings": targets.allowed_settings("mysql"),
        "postgres_settings": targets.allowed_settings("postgresql"),
        "engines": {t.pk: t.engine for t in Target.objects.only("id", "engine")},
        "host_kinds": {h.pk: h.kind for h in LoadHost.objects.only("id", "kind")},
        "target_installs": {
            t.pk: plan_axes.target_install_labels(t)
            for t in Target.objects.only("id", "engine", "restart_mode", "restart_config")
        },
        "batches": selectors.plan_last_batches(plan) if plan.pk else [],
    }


@require_POST
def plan_check(request: HttpRequest) -> HttpResponse:
    """What the editor shows as the user types: cells, runs, time, warnings, errors."""
    plan = Plan()
    form, matrix = _plan_from_post(request, plan, _named(request))
    if not form.is_valid() or matrix is None:
        return json_response({"ok": False, "errors": _form_errors(form)})
    extra = list(form.cleaned_data["extra_load_hosts"])
    more = list(form.cleaned_data["server_targets"])
    # The server is asked with the target's stored password: for who may use it only, as
    # the preflight; anyone else gets the checks that need no server, and why.
    not_allowed = _not_allowed_to_use(request, plan, extra, more)
    # The order (so the restarts) of the plan's seed; without one, a launch draws its own
    # and the count is about that of seed 0 (the estimate says so).
    seed = plan.seed if plan.seed is not None else 0
    try:
        check = plan_checks.plan_check(
            plan=plan,
            seed=seed,
            contact_server=plan.target is not None and not not_allowed,
            extra_load_hosts=extra,
            server_targets=more,
        )
        if not_allowed:
            check.warnings.append(f"the target was not asked: {not_allowed}")
    except targets.TargetError as e:
        check = plan_checks.plan_check(
            plan=plan, seed=seed, contact_server=False, extra_load_hosts=extra, server_targets=more
        )
        check.warnings.append(f"the target could not be asked: {e.message}")
    except InvalidInput as e:
        e = _in_editor(e)
        return json_response({"ok": False, "errors": [{"field": e.field, "message": str(e)}]})
    auto = auto_settings.auto_from_dict(plan.auto)
    restart = restarts.restart_estimate(plan, check.cells)
    # Interleaved rounds are shuffled by the seed: one drawn at launch may restart more or less.
    restart["exact"] = plan.seed is not None or plan.order_policy != "interleaved"
    estimate = plan_estimate.estimate(check.cells, plan.dataset_policy, auto, restart, plan.servers)
    return json_response({"ok": True, "estimate": estimate.to_dict(), "warnings": check.warnings})


def _not_allowed_to_use(
    request: HttpRequest, plan: Plan, extra: list[LoadHost], more: list[Target]
) -> str:
    try:
        permissions.require_use(request.user, plan, extra, more)
    except permissions.NotAllowed as e:
        return e.message
    return ""


def _named(request: HttpRequest) -> QueryDict:
    # A plan being written has no name yet: its matrix can be checked all the same.
    data = request.POST.copy()
    if not str(data.get("name", "")).strip():
        data["name"] = "unsaved plan"
    return data


def _form_errors(form: Form) -> list[dict[str, str]]:
    refusals: list[InvalidInput] = form.__dict__.get("refusals", [])
    errors = [{"field": e.field, "message": str(e)} for e in refusals]
    for field, problems in form.errors.items():
        if field == "__all__" and refusals:
            continue  # those are the refusals, with their fields
        for message in problems:
            text = str(message) if field == "__all__" else f"{field}: {message}"
            errors.append({"field": field, "message": text})
    return errors


@require_POST
def plan_preflight(request: HttpRequest) -> HttpResponse:
    """Preflight of the plan as it stands in the editor, saved or not."""
    plan = Plan()
    form, matrix = _plan_from_post(request, plan, _named(request))
    if not form.is_valid() or matrix is None:
        return json_response({"ok": False, "errors": _form_errors(form), "checks": []})
    try:
        extra = list(form.cleaned_data["extra_load_hosts"])
        more = list(form.cleaned_data["server_targets"])
        permissions.require_use(request.user, plan, extra, more)
    except permissions.NotAllowed as e:
        # Shown by the editor like its other errors.
        error = {"field": EDITOR_FIELDS.get(e.field or "", e.field), "message": e.message}
        return json_response({"ok": False, "errors": [error], "checks": []})
    try:
        report = plan_checks.plan_preflight(plan=plan, extra_load_hosts=extra, server_targets=more)
    except InvalidInput as e:  # a stored load host or target no connection can use
        e = _in_editor(e)
        errors = [{"field": e.field, "message": str(e)}]
        return json_response({"ok": False, "errors": errors, "checks": []}, status=400)
    return json_response(report.to_dict())


@require_POST
def plan_launch(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(selectors.plans_listed(), pk=plan_id)
    permissions.require_launch(request.user, plan)
    return _launch(request, plan)


def _launch(request: HttpRequest, plan: Plan) -> HttpResponse:
    try:
        batch = batches.batch_launch(
            plan=plan, launched_by=LaunchedBy.UI, user=request_user(request)
        )
    except (InvalidInput, BrokerUnavailable) as e:
        messages.error(request, f"Plan {plan.name} cannot be launched: {e}")
        return redirect("plan_edit", plan_id=plan.pk)
    messages.success(request, f"Batch {batch.pk} of {plan.name} launched.")
    return redirect("batch_detail", batch_id=batch.pk)


def plan_delete(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(Plan, pk=plan_id)
    permissions.require(request.user, "delete", plan)
    if request.method == "POST":
        try:
            definitions.plan_delete(plan=plan)
        except ProtectedError as e:
            show_protected(request, f"Plan {plan.name}", e)
            return redirect("plan_edit", plan_id=plan.pk)
        messages.success(request, f"Plan {plan.name} deleted.")
        return redirect("plans")
    return render(request, "runs/confirm_delete.html", {"object": plan, "kind": "plan"})


def schedules_list(request: HttpRequest) -> HttpResponse:
    rows = [
        (plan, schedules.schedule_describe(plan.schedule))
        for plan in selectors.plans_scheduled()
        if plan.schedule is not None
    ]
    return render(request, "runs/schedules.html", {"rows": rows})
