"""The forms of a plan's history and of a batch page that record what the team wrote
down beside the figures: an annotation on the timeline, a batch's notes and tags
(runs/services/notes.py)."""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_POST

from runs.errors import InvalidInput
from runs.models import Annotation, Batch, Plan
from runs.services import notes, permissions


@require_POST
def annotation_add(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = get_object_or_404(Plan, pk=plan_id)
    permissions.require(request.user, "change", plan)
    try:
        at = _when(request.POST.get("at", ""))
        notes.annotation_create(
            plan=plan, at=at, text=request.POST.get("text", ""), user=request.user
        )
    except InvalidInput as e:
        messages.error(request, f"Annotation not added: {e}")
    return redirect("plan_history", plan_id=plan.pk)


def _when(given: str) -> datetime:
    """The page's datetime-local field, read in the server's zone; empty: now."""
    if not given:
        return timezone.now()
    try:
        at = datetime.fromisoformat(given)
    except ValueError:
        raise InvalidInput("at", f"not a date and time: {given!r}") from None
    return at if timezone.is_aware(at) else timezone.make_aware(at)


@require_POST
def annotation_delete(request: HttpRequest, annotation_id: int) -> HttpResponse:
    annotation = get_object_or_404(Annotation.objects.select_related("plan"), pk=annotation_id)
    permissions.require(request.user, "change", annotation.plan)
    notes.annotation_delete(annotation=annotation)
    return redirect("plan_history", plan_id=annotation.plan_id)


@require_POST
def batch_notes(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_object_or_404(Batch.objects.select_related("plan"), pk=batch_id)
    permissions.require_note(request.user, batch)
    tags = [t for t in request.POST.get("tags", "").split(",") if t.strip()]
    try:
        notes.batch_annotate(batch=batch, notes=request.POST.get("notes", ""), tags=tags)
    except InvalidInput as e:
        messages.error(request, f"Notes not saved: {e}")
    return redirect("batch_detail", batch_id=batch.pk)
