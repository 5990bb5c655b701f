"""The import page: old sysbench logs, previewed, then stored as a batch."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from runs.services import importer
from runs.sysbench.options import ValidationError
from runs.web.forms import (
    ImportForm,
)
from runs.web.views.common import show_refusal


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
            show_refusal(form, e)
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
