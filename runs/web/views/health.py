"""The health page, and the banner every page shows when beat or the housekeeper is gone."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from runs.services import health, verified_tokens


def health_page(request: HttpRequest) -> HttpResponse:
    if request.session.session_key:  # so that this page still comes while the database is down
        verified_tokens.remember_session(
            session_key=request.session.session_key,
            username=request.user.get_username(),
            expiry=request.session.get_expiry_date(),
        )
    report = health.health_report()
    return render(request, "runs/health.html", {"report": report}, status=200)


def health_banner(request: HttpRequest) -> dict[str, Any]:
    """Context processor: one Redis read per page, for signed-in users only."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    return {"health_banner": health.health_banner()}
