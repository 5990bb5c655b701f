"""Pages of load hosts: the list, the form, a host's page with its key and facts."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import ProtectedError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from runs.errors import ExecutorError, InvalidInput
from runs.models import LoadHost
from runs.services import definitions, loadhosts, permissions, selectors
from runs.web.forms import (
    FingerprintForm,
    LoadHostForm,
)
from runs.web.views.common import request_user, show_model_errors, show_protected, show_refusal

KEY_CLEARED = (
    "The stored private key was removed: the load host points to another machine or account "
    "now. Give its key again."
)


def load_hosts_list(request: HttpRequest) -> HttpResponse:
    return render(request, "runs/load_hosts.html", {"hosts": selectors.loadhosts_listed()})


def load_host_edit(request: HttpRequest, host_id: int | None = None) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id) if host_id else LoadHost()
    if load_host.pk:
        permissions.require(request.user, "change", load_host)
    had_key = bool(load_host.private_key)
    form = LoadHostForm(request.POST or None, instance=load_host)
    if request.method == "POST" and form.is_valid():
        given = form.new_private_key()
        try:
            saved = form.save(commit=False)
            if saved.pk is None:
                saved.created_by = request_user(request)
            saved = definitions.loadhost_save(load_host=saved, private_key=given)
        except InvalidInput as e:
            show_refusal(form, e)
        except DjangoValidationError as e:
            show_model_errors(form, e)
        else:
            messages.success(request, f"Load host {saved.name} saved.")
            if had_key and given is None and not saved.private_key:
                messages.warning(request, KEY_CLEARED)
            return redirect("load_host_detail", host_id=saved.pk)
    return render(request, "runs/load_host_form.html", {"form": form, "host": load_host})


def load_host_detail(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    return _host_page(request, load_host)


def _host_page(
    request: HttpRequest,
    load_host: LoadHost,
    *,
    seen: str = "",
    form: FingerprintForm | None = None,
    problem: str = "",
    status: int = 200,
) -> HttpResponse:
    pinned = loadhosts.host_key_fingerprint(load_host.host_key) if load_host.host_key else ""
    if not seen and load_host.seen_host_key and load_host.seen_host_key != load_host.host_key:
        seen = loadhosts.host_key_fingerprint(load_host.seen_host_key)
    return render(
        request,
        "runs/load_host_detail.html",
        {
            "host": load_host,
            "pinned": pinned,
            "seen": seen,
            "form": form or FingerprintForm(),
            "problem": problem,
            "facts": sorted((load_host.facts or {}).items()),
        },
        status=status,
    )


def _changed(request: HttpRequest, host_id: int) -> LoadHost:
    """The load host, if the user may change it (scanning, pinning, reading its facts)."""
    load_host = get_object_or_404(LoadHost, pk=host_id)
    permissions.require(request.user, "change", load_host)
    return load_host


@require_POST
def load_host_scan(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = _changed(request, host_id)
    try:
        seen = loadhosts.load_host_scan(load_host=load_host)
    except InvalidInput as e:  # the host as stored cannot be scanned: fix it first
        return _host_page(request, load_host, problem=str(e), status=400)
    except ExecutorError as e:
        return _host_page(request, load_host, problem=str(e))
    return _host_page(request, load_host, seen=seen)


@require_POST
def load_host_confirm(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = _changed(request, host_id)
    form = FingerprintForm(request.POST)
    if form.is_valid():
        try:
            loadhosts.load_host_pin_key(
                load_host=load_host, fingerprint=form.cleaned_data["fingerprint"]
            )
        except InvalidInput as e:
            form.add_error("fingerprint", e.message)
        else:
            messages.success(request, f"The host key of {load_host.name} is pinned.")
            return redirect("load_host_detail", host_id=load_host.pk)
    return _host_page(request, load_host, form=form)


@require_POST
def load_host_facts(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = _changed(request, host_id)
    try:
        loadhosts.load_host_refresh_facts(load_host=load_host)
    except ExecutorError as e:
        return _host_page(request, load_host, problem=str(e))
    messages.success(request, f"Facts of {load_host.name} read.")
    return redirect("load_host_detail", host_id=load_host.pk)


def load_host_delete(request: HttpRequest, host_id: int) -> HttpResponse:
    load_host = get_object_or_404(LoadHost, pk=host_id)
    permissions.require(request.user, "delete", load_host)
    if request.method == "POST":
        try:
            load_host.delete()
        except ProtectedError as e:
            show_protected(request, f"Load host {load_host.name}", e)
            return redirect("load_host_detail", host_id=load_host.pk)
        messages.success(request, f"Load host {load_host.name} deleted.")
        return redirect("load_hosts")
    return render(request, "runs/confirm_delete.html", {"object": load_host, "kind": "load host"})
