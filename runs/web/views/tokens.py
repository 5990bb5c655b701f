"""The page of a user's API tokens: create (shown once) and revoke."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from runs.services import tokens
from runs.web.forms import (
    TokenForm,
)


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
