"""The form of a plan's history that records what the team decided on an alert:
acknowledged, dismissed or accepted as the new baseline (runs/services/nightly/alerts.py). Notes
and annotations are in runs/web/views/notes.py."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from runs.errors import InvalidInput
from runs.models import Alert
from runs.services import permissions
from runs.services.nightly import alerts


@require_POST
def alert_decide(request: HttpRequest, alert_id: int) -> HttpResponse:
    alert = get_object_or_404(Alert.objects.select_related("plan"), pk=alert_id)
    permissions.require(request.user, "change", alert.plan)
    decision = request.POST.get("decision", "")
    try:
        alert = alerts.alert_decide(
            alert=alert,
            decision=decision,
            user=request.user,
            comment=request.POST.get("comment", ""),
        )
    except InvalidInput as e:
        messages.error(request, f"Alert {alert.pk}: {e.message}")
    else:
        messages.info(request, f"Alert {alert.pk}: {alert.state}.")
    return redirect("plan_history", plan_id=alert.plan_id)
