"""Pages. Thin: they read through selectors and write through services."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from runs import selectors


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "runs/home.html", {"batches": selectors.recent_batches()})
