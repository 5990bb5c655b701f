"""Pages that define experiments: targets, load hosts, plans and their schedules, Lua
scripts, imports of old logs, API tokens. Thin: reads through selectors, writes through
services (runs/definitions.py, services.py, hosts.py, schedules.py, importer.py, tokens.py).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.forms import BaseForm, Form
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from runs import (
    definitions,
    hosts,
    importer,
    luascripts,
    plan_editor,
    preflight,
    schedules,
    selectors,
    services,
    ssh,
    targets,
    tokens,
)
from runs.executors import ExecutorError
from runs.forms import (
    FingerprintForm,
    ImportForm,
    LoadHostForm,
    PlanForm,
    ScriptForm,
    TargetForm,
    TokenForm,
    plan_initial,
    plan_matrix_values,
)
from runs.models import LaunchedBy, LoadHost, LuaScript, Plan, Target
from runs.responses import json_response
from runs.sysbench.options import OPTIONS, ValidationError

# --- helpers --------------------------------------------------------------------------------


def _refuse(form: BaseForm, error: ValidationError) -> None:
    """Show a service's refusal on the field it names, or above the form."""
    field = error.field if error.field in form.fields else None
    form.add_error(field, error.message if field else str(error))
    if field is None:  # the page script marks the input of an option or a setting
        form.__dict__.setdefault("refusals", []).append(error)


def _model_errors(form: BaseForm, error: DjangoValidationError) -> None:
    for name, problems in error.message_dict.items():
        for problem in problems:
            form.add_error(name if name in form.fields else None, f"{name}: {problem}")


def _user(request: HttpRequest) -> User | None:
    return request.user if isinstance(request.user, User) else None


def _protected(request: HttpRequest, what: str, error: ProtectedError) -> None:
    kinds: dict[str, int] = {}
    for obj in error.protected_objects:
        name = type(obj)._meta.verbose_name_plural
        kinds[str(name)] = kinds.get(str(name), 0) + 1
    uses = " and ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    messages.error(
        request,
        f"{what} is kept: {uses} use it, and finished results are never deleted with what "
        "they ran on.",
    )


# --- targets ---------------------------------------------------------------------------------


def targets_list(request: HttpRequest) -> HttpResponse:
    return render(request, "runs/targets.html", {"targets": selectors.targets_listed()})


def target_edit(request: HttpRequest, target_id: int | None = None) -> HttpResponse:
    target = get_object_or_404(Target, pk=target_id) if target_id else Target()
    form = TargetForm(request.POST or None, instance=target)
    if request.method == "POST" and form.is_valid():
        try:
            saved = definitions.target_save(target=form.save(commit=False))
        except ValidationError as e:
            _refuse(form, e)
        except DjangoValidationError as e:
            _model_errors(form, e)
        else:
            messages.success(request, f"Target {saved.name} saved.")
            return redirect("target_detail", target_id=saved.pk)
    return render(request, "runs/target_form.html", {"form": form, "target": target})


def target_detail(request: HttpRequest, target_id: int) -> HttpResponse:
    target = get_object_or_404(selectors.targets_listed(), pk=target_id)
    check = None
    if request.method == "POST":  # "test connection": reads the server, changes nothing
        check = services.target_test_connection(target=target)
    return render(
        request,
        "runs/target_detail.html",
        {
            "target": target,
            "check": check,
            "allowed_settings": targets.allowed_settings(target.engine),
            "batches": selectors.batches_filtered(target=target.pk)[:10],
        },
    )


def target_delete(request: HttpRequest, target_id: int) -> HttpResponse:
    target = get_object_or_404(selectors.targets_listed(), pk=target_id)
    if request.method == "POST":
        try:
            target.delete()
        except ProtectedError as e:
            _protected(request, f"Target {target.name}", e)
            return redirect("target_detail", target_id=target.pk)
        messages.success(request, f"Target {target.name} deleted.")
        return redirect("targets")
    return render(request, "runs/confirm_delete.html", {"object": target, "kind": "target"})


# --- load hosts ------------------------------------------------------------------------------


def hosts_list(request: HttpRequest) -> HttpResponse:
    return render(request, "runs/hosts.html", {"hosts": selectors.loadhosts_listed()})


def host_edit(request: HttpRequest, host_id: int | None = None) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id) if host_id else LoadHost()
    form = LoadHostForm(request.POST or None, instance=load_host)
    if request.method == "POST" and form.is_valid():
        try:
            saved = definitions.loadhost_save(load_host=form.save(commit=False))
        except ValidationError as e:
            _refuse(form, e)
        except DjangoValidationError as e:
            _model_errors(form, e)
        else:
            messages.success(request, f"Load host {saved.name} saved.")
            return redirect("host_detail", host_id=saved.pk)
    return render(request, "runs/host_form.html", {"form": form, "host": load_host})


def host_detail(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    return _host_page(request, load_host)


def _host_page(
    request: HttpRequest,
    load_host: LoadHost,
    *,
    seen: str = "",
    form: FingerprintForm | None = None,
    problem: str = "",
) -> HttpResponse:
    pinned = ssh.fingerprint(load_host.host_key) if load_host.host_key else ""
    if not seen and load_host.seen_host_key and load_host.seen_host_key != load_host.host_key:
        seen = ssh.fingerprint(load_host.seen_host_key)
    return render(
        request,
        "runs/host_detail.html",
        {
            "host": load_host,
            "pinned": pinned,
            "seen": seen,
            "form": form or FingerprintForm(),
            "problem": problem,
            "facts": sorted((load_host.facts or {}).items()),
        },
    )


@require_POST
def host_scan(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    try:
        seen = hosts.loadhost_scan(load_host=load_host)
    except (ExecutorError, ValidationError) as e:
        return _host_page(request, load_host, problem=str(e))
    return _host_page(request, load_host, seen=seen)


@require_POST
def host_confirm(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    form = FingerprintForm(request.POST)
    if form.is_valid():
        try:
            hosts.loadhost_confirm_host_key(
                load_host=load_host, fingerprint=form.cleaned_data["fingerprint"]
            )
        except ValidationError as e:
            form.add_error("fingerprint", e.message)
        else:
            messages.success(request, f"The host key of {load_host.name} is pinned.")
            return redirect("host_detail", host_id=load_host.pk)
    return _host_page(request, load_host, form=form)


@require_POST
def host_facts(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    try:
        hosts.loadhost_refresh_facts(load_host=load_host)
    except ExecutorError as e:
        return _host_page(request, load_host, problem=str(e))
    messages.success(request, f"Facts of {load_host.name} read.")
    return redirect("host_detail", host_id=load_host.pk)


def host_delete(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    if request.method == "POST":
        try:
            load_host.delete()
        except ProtectedError as e:
            _protected(request, f"Load host {load_host.name}", e)
            return redirect("host_detail", host_id=load_host.pk)
        messages.success(request, f"Load host {load_host.name} deleted.")
        return redirect("hosts")
    return render(request, "runs/confirm_delete.html", {"object": load_host, "kind": "load host"})


# --- plans -----------------------------------------------------------------------------------


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
    except ValidationError as e:
        _refuse(form, e)
    if form.is_valid() and matrix is not None:
        for name, value in form.plan_fields().items():
            setattr(plan, name, value)
        plan.threads = matrix.threads
        plan.options = matrix.options
        plan.server_settings = matrix.server_settings
        plan.option_axes = matrix.option_axes
    return form, matrix


def plan_edit(request: HttpRequest, plan_id: int | None = None) -> HttpResponse:
    plan = get_object_or_404(selectors.plans_listed(), pk=plan_id) if plan_id else Plan()
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


def _plan_save(request: HttpRequest, form: PlanForm, plan: Plan) -> HttpResponse | None:
    if plan.created_by_id is None:
        plan.created_by = _user(request)
    try:
        with transaction.atomic():
            check = definitions.plan_save(plan=plan)
            _save_schedule(form, plan)
    except ValidationError as e:
        _refuse(form, e)
        return None
    except DjangoValidationError as e:
        _model_errors(form, e)
        return None
    if request.POST.get("action") == "launch":
        batch = services.batch_launch(plan=plan, launched_by=LaunchedBy.UI, user=_user(request))
        messages.success(request, f"Batch {batch.pk} of {plan.name} launched.")
        return redirect("batch_detail", batch_id=batch.pk)
    messages.success(request, f"Plan {plan.name} saved: {check.run_count} runs.")
    return redirect("plan_edit", plan_id=plan.pk)


def _save_schedule(form: PlanForm, plan: Plan) -> None:
    data = form.cleaned_data
    kind = data.get("schedule_kind") or ""
    if not kind:
        schedules.plan_schedule_delete(plan=plan)
        return
    cron = (data.get("schedule_cron") or "").strip() if kind == "cron" else None
    minutes = data.get("schedule_interval_min") if kind == "interval" else None
    if kind == "cron" and not cron:
        raise ValidationError("schedule_cron", "give a cron expression, e.g. 0 2 * * *")
    if kind == "interval" and not minutes:
        raise ValidationError("schedule_interval_min", "give the minutes between launches")
    schedules.plan_schedule_set(
        plan=plan,
        cron=cron,
        interval_s=minutes * 60 if minutes else None,
        clocked_at=None,
        timezone=data.get("schedule_timezone") or "UTC",
        enabled=bool(data.get("schedule_enabled")),
    )


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
        "checkboxes": plan_editor.SETTING_CHECKBOXES,
        "mysql_settings": targets.allowed_settings("mysql"),
        "postgres_settings": targets.allowed_settings("postgresql"),
        "engines": {t.pk: t.engine for t in Target.objects.only("id", "engine")},
        "host_kinds": {h.pk: h.kind for h in LoadHost.objects.only("id", "kind")},
        "batches": selectors.plan_last_batches(plan) if plan.pk else [],
    }


@require_POST
def plan_check(request: HttpRequest) -> HttpResponse:
    """What the editor shows as the user types: cells, runs, time, warnings, errors."""
    plan = Plan()
    form, matrix = _plan_from_post(request, plan, _named(request))
    if not form.is_valid() or matrix is None:
        return json_response({"ok": False, "errors": _form_errors(form)})
    try:
        check = services.plan_check(plan=plan, contact_server=plan.target is not None)
    except targets.TargetError as e:
        check = services.plan_check(plan=plan, contact_server=False)
        check.warnings.append(f"the target could not be asked: {e.message}")
    except ValidationError as e:
        return json_response({"ok": False, "errors": [{"field": e.field, "message": str(e)}]})
    estimate = plan_editor.estimate(check.cells, plan.dataset_policy)
    return json_response({"ok": True, "estimate": estimate.to_dict(), "warnings": check.warnings})


def _named(request: HttpRequest) -> QueryDict:
    # A plan being written has no name yet: its matrix can be checked all the same.
    data = request.POST.copy()
    if not str(data.get("name", "")).strip():
        data["name"] = "unsaved plan"
    return data


def _form_errors(form: Form) -> list[dict[str, str]]:
    refusals: list[ValidationError] = form.__dict__.get("refusals", [])
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
        return json_response({"ok": False, "errors": _form_errors(form), "steps": []})
    return json_response(preflight.plan_preflight(plan=plan).to_dict())


@require_POST
def plan_launch(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(selectors.plans_listed(), pk=plan_id)
    try:
        batch = services.batch_launch(plan=plan, launched_by=LaunchedBy.UI, user=_user(request))
    except ValidationError as e:
        messages.error(request, f"Plan {plan.name} cannot be launched: {e}")
        return redirect("plan_edit", plan_id=plan.pk)
    messages.success(request, f"Batch {batch.pk} of {plan.name} launched.")
    return redirect("batch_detail", batch_id=batch.pk)


def plan_delete(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(Plan, pk=plan_id)
    if request.method == "POST":
        try:
            definitions.plan_delete(plan=plan)
        except ProtectedError as e:
            _protected(request, f"Plan {plan.name}", e)
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


# --- Lua scripts -------------------------------------------------------------------------------


def scripts_list(request: HttpRequest) -> HttpResponse:
    may_upload = request.user.has_perm(luascripts.PERMISSION)
    form = ScriptForm(request.POST or None)
    if request.method == "POST":
        if not may_upload:
            raise PermissionDenied("uploading Lua scripts needs a permission")
        if form.is_valid():
            try:
                script = luascripts.luascript_upload(
                    user=request.user,
                    name=form.cleaned_data["name"],
                    content=form.cleaned_data["content"],
                )
            except ValidationError as e:
                _refuse(form, e)
            else:
                messages.success(request, f"Script {script.name} stored.")
                return redirect("scripts")
    return render(
        request,
        "runs/scripts.html",
        {
            "scripts": LuaScript.objects.select_related("uploaded_by"),
            "form": form,
            "may_upload": may_upload,
        },
    )


# --- import --------------------------------------------------------------------------------------


def log_import(request: HttpRequest) -> HttpResponse:
    """Paste or upload a log; preview what was parsed; save it as a batch."""
    form = ImportForm(request.POST or None, request.FILES or None)
    preview = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        save = request.POST.get("action") == "save"
        try:
            imported = importer.log_import(
                text=data["text"],
                target=data.get("target"),
                test=data.get("test") or None,
                label=data.get("label") or "",
                user=request.user,
                dry_run=not save,
            )
        except ValidationError as e:
            _refuse(form, e)
        else:
            if save and imported.batch is not None:
                messages.success(request, f"Log imported as batch {imported.batch.pk}.")
                return redirect("batch_results", batch_id=imported.batch.pk)
            preview = imported
            # An uploaded file is shown in the text box, so "save" sends it again.
            form = ImportForm(initial={**data, "text": data["text"], "upload": None})
    return render(
        request,
        "runs/import.html",
        {
            "form": form,
            "preview": preview,
            "samples": preview.result.samples[:30] if preview else [],
            "sample_count": len(preview.result.samples) if preview else 0,
            "chart": _preview_chart(preview),
        },
    )


def _preview_chart(preview: importer.ImportResult | None) -> dict[str, Any] | None:
    if preview is None or not preview.result.samples:
        return None
    samples = preview.result.samples
    return {
        "tps": [[s.time_s, s.tps] for s in samples if s.tps is not None],
        "latency": [[s.time_s, s.latency_ms] for s in samples if s.latency_ms is not None],
    }


# --- API tokens ----------------------------------------------------------------------------------


def tokens_page(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    created = None
    user = request.user
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data.get("expires_days")
        _, created = tokens.token_create(
            user=user,  # type: ignore[arg-type]
            name=form.cleaned_data.get("name") or "",
            expires_in=timedelta(days=days) if days else None,
        )
        form = TokenForm()
    return render(
        request,
        "runs/tokens.html",
        {
            "tokens": tokens.tokens_of(user),  # type: ignore[arg-type]
            "form": form,
            "created": created,
            "named": tokens.tokens_named(),
        },
    )


@require_POST
def token_revoke(request: HttpRequest, token_key: str) -> HttpResponse:
    if tokens.token_revoke(user=request.user, token_key=token_key):  # type: ignore[arg-type]
        messages.success(request, f"Token {token_key}… revoked.")
    else:
        messages.error(request, "You have no such token.")
    return redirect("tokens")
