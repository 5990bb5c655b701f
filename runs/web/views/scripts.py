"""The page of custom Lua scripts: the list and the upload."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from runs.errors import InvalidInput
from runs.models import LuaScript
from runs.services import luascripts
from runs.web.forms import (
    ScriptForm,
)
from runs.web.views.common import show_refusal


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
            except InvalidInput as e:
                show_refusal(form, e)
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
