"""Pages and formats as the schema says: DRF's pagination and content negotiation, held
to the schema. Named in REST_FRAMEWORK's settings, which DRF loads while it defines its
views: this module imports nothing of DRF's views, nor anything that does."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


class Pages(PageNumberPagination):
    """?page=N: a whole number, as the schema says. DRF would also read `?page=` as the first
    page and `?page=last` as the last."""

    def get_page_number(self, request: Request, paginator: Any) -> Any:
        page = request.query_params.get(self.page_query_param)
        if page is None:
            return 1
        if not page.isdigit():
            raise exceptions.NotFound(f"no page {page!r}: pages are numbered from 1")
        return page


class Negotiation(DefaultContentNegotiation):
    """`?format=` given empty is refused, not read as left out."""

    def select_renderer(self, request: Request, renderers: Any, format_suffix: Any = None) -> Any:
        if request.query_params.get(self.settings.URL_FORMAT_OVERRIDE) == "":
            raise exceptions.ValidationError(
                {"format": ["give a format (json, or csv where offered), or leave it out"]}
            )
        return super().select_renderer(request, renderers, format_suffix)
