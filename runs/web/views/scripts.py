"""The page of custom Lua scripts and bundles: the list with each script's version, files,
options and versions (who uploaded each, and when), and the upload (one script, a bundle's
files, or an archive)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from runs.errors import InvalidInput
from runs.models import LuaScript
from runs.services.scripts import luascripts
from runs.sysbench.bundles import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES
from runs.web.forms import (
    ScriptForm,
)
from runs.web.views.common import show_refusal


def scripts_list(request: HttpRequest) -> HttpResponse:
    may_upload = request.user.has_perm(luascripts.PERMISSION)
    form = ScriptForm(request.POST or None, request.FILES or None)
    if request.method == "POST":
        if not may_upload:
            raise PermissionDenied("uploading Lua scripts needs a permission")
        if form.is_valid():
            try:
                script = luascripts.luascript_upload(
                    user=request.user, name=form.cleaned_data["name"], **_uploaded(form)
                )
            except InvalidInput as e:
                show_refusal(form, e)
            else:
                messages.success(request, f"Script {script.name} stored, version {script.version}.")
                return redirect("scripts")
    scripts = luascripts.luascripts_listed()
    return render(
        request,
        "runs/scripts.html",
        {"scripts": [_row(s) for s in scripts], "form": form, "may_upload": may_upload},
    )


def _uploaded(form: ScriptForm) -> dict[str, Any]:
    data = form.cleaned_data
    if data.get("archive"):
        archive = data["archive"]
        if archive.size > MAX_ARCHIVE_BYTES:
            raise InvalidInput("archive", f"the archive is larger than {MAX_ARCHIVE_BYTES} bytes")
        return {"archive": archive.read(), "entry": data.get("entry") or ""}
    if data.get("bundle_files"):
        files = {}
        for upload in data["bundle_files"]:
            if upload.size > MAX_FILE_BYTES:
                raise InvalidInput("files", f"{upload.name} is larger than {MAX_FILE_BYTES} bytes")
            files[upload.name] = upload.read().decode("utf-8", errors="replace")
        return {"files": files, "entry": data.get("entry") or ""}
    return {"content": data.get("content") or ""}


def _row(script: LuaScript) -> dict[str, Any]:
    try:
        interface = luascripts.luascript_interface(script=script)
        options, commands, problem = list(interface.options.values()), interface.commands, ""
    except InvalidInput as e:
        options, commands, problem = [], frozenset(), e.message
    return {
        "script": script,
        "entry": script.entry or luascripts.ONE_FILE,
        "files": sorted(script.files or {}),
        "options": options,
        "commands": sorted(commands),
        "problem": problem,
        "versions": luascripts.luascript_versions(script=script),
    }
