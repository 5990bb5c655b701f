"""The import page: old sysbench logs, previewed, then stored as a batch."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from runs.errors import InvalidInput
from runs.http.uploads import LogTooLarge
from runs.services.imports import importer
from runs.web.forms import ImportForm
from runs.web.views.common import show_refusal

# An uploaded log up to this size is put in the text box after its preview, so that
# "save" sends it again; a larger one is chosen again (a file input cannot be refilled).
CARRY_BYTES = 2 * 1024 * 1024


def log_import(request: HttpRequest) -> HttpResponse:
    """Paste or upload a log; preview what was parsed; save it as a batch."""
    try:
        form = ImportForm(request.POST or None, request.FILES or None)
    except LogTooLarge as e:
        return log_refused(request, str(e))
    except RequestDataTooBig:
        return log_refused(request, "the pasted text is too long: upload the log as a file")
    preview, reupload = None, False
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        save = request.POST.get("action") == "save"
        try:
            imported = importer.log_import(
                log=form.log(),
                target=data.get("target"),
                test=data.get("test") or None,
                label=data.get("label") or "",
                user=request.user,
                dry_run=not save,
            )
        except InvalidInput as e:
            show_refusal(form, e)
        else:
            if save and imported.batch is not None:
                messages.success(request, f"Log imported as batch {imported.batch.pk}.")
                return redirect("batch_results", batch_id=imported.batch.pk)
            preview = imported
            form, reupload = _carried_over(form)
    return render(request, "runs/import.html", {**_context(form, preview), "reupload": reupload})


def _carried_over(form: ImportForm) -> tuple[ImportForm, bool]:
    """The form again after a preview, holding the log for the save step; and whether
    the log was too large for that and must be chosen again."""
    data = form.cleaned_data
    upload = data.get("upload")
    text = data.get("text") or ""
    too_large = upload is not None and upload.size > CARRY_BYTES
    if upload is not None and not too_large:
        upload.seek(0)
        text = upload.read().decode("utf-8", errors="replace")
    return ImportForm(initial={**data, "text": text, "upload": None}), too_large


def log_refused(request: HttpRequest, message: str) -> HttpResponse:
    """The import page again, saying why the log was refused (413)."""
    context = {**_context(ImportForm(), None), "refusal": message}
    return render(request, "runs/import.html", context, status=413)


def _context(form: ImportForm, preview: importer.ImportResult | None) -> dict[str, Any]:
    return {
        "form": form,
        "preview": preview,
        "samples": preview.first_samples if preview else [],
        "sample_count": preview.sample_count if preview else 0,
        "chart": _preview_chart(preview),
    }


def _preview_chart(preview: importer.ImportResult | None) -> dict[str, Any] | None:
    if preview is None or not preview.preview:
        return None
    return {"tps": preview.preview.get("tps", []), "latency": preview.preview.get("latency_ms", [])}
