"""Pages of targets: the list, the form, a target's page with its connection test."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import ProtectedError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from runs import targets
from runs.errors import InvalidInput
from runs.models import Target
from runs.services import definitions, permissions, restarts, selectors
from runs.web.forms import (
    TargetForm,
)
from runs.web.views.common import request_user, show_model_errors, show_protected, show_refusal

# Said beside the restart fields a user may not set: who may, and how to become one.
WHO_RESTARTS = (
    "The server host, restart mode and restart config are set by staff, or by a user or "
    "group granted the permission runs.manage_restarts, only: a restart runs commands on "
    "the server's machine. Ask one of them (an administrator grants it in the admin)."
)
TARGET_MOVED = (
    "The stored password was removed: the target points to another server or account now. "
    "Give its password again."
)


def targets_list(request: HttpRequest) -> HttpResponse:
    return render(request, "runs/targets.html", {"targets": selectors.targets_listed()})


def target_edit(request: HttpRequest, target_id: int | None = None) -> HttpResponse:
    target = get_object_or_404(Target, pk=target_id) if target_id else Target()
    if target.pk:
        permissions.require(request.user, "change", target)
    had_password = bool(target.password)
    may_restart = permissions.may_manage_restarts(request.user)
    form = TargetForm(request.POST or None, instance=target, may_restart=may_restart)
    if request.method == "POST" and form.is_valid():
        given = form.new_password()
        try:
            saved = form.save(commit=False)
            if saved.pk is None:
                saved.created_by = request_user(request)
            permissions.require_restarts(request.user, saved)
            saved = definitions.target_save(target=saved, password=given)
        except permissions.NotAllowed as e:
            form.add_error(e.field if e.field in form.fields else None, e.message)
        except InvalidInput as e:
            show_refusal(form, e)
        except DjangoValidationError as e:
            show_model_errors(form, e)
        else:
            messages.success(request, f"Target {saved.name} saved.")
            if had_password and given is None and not saved.password:
                messages.warning(request, TARGET_MOVED)
            return redirect("target_detail", target_id=saved.pk)
    return render(
        request,
        "runs/target_form.html",
        {"form": form, "target": target, "who_restarts": None if may_restart else WHO_RESTARTS},
    )


def target_detail(request: HttpRequest, target_id: int) -> HttpResponse:
    target = get_object_or_404(selectors.targets_listed(), pk=target_id)
    check = None
    if request.method == "POST":  # "test connection": reads the server, changes nothing
        check = definitions.target_test_connection(target=target)
    return render(
        request,
        "runs/target_detail.html",
        {
            "target": target,
            "check": check,
            "allowed_settings": targets.allowed_settings(target.engine),
            "batches": selectors.batches_filtered(target=target.pk)[:10],
            "restart": restarts.target_restart_shown(target=target),
        },
    )


def target_delete(request: HttpRequest, target_id: int) -> HttpResponse:
    target = get_object_or_404(selectors.targets_listed(), pk=target_id)
    permissions.require(request.user, "delete", target)
    if request.method == "POST":
        try:
            target.delete()
        except ProtectedError as e:
            show_protected(request, f"Target {target.name}", e)
            return redirect("target_detail", target_id=target.pk)
        messages.success(request, f"Target {target.name} deleted.")
        return redirect("targets")
    return render(request, "runs/confirm_delete.html", {"object": target, "kind": "target"})
