"""Answers compressed when the browser asks for it; an upload beyond the log size limit
refused in words."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.gzip import GZipMiddleware

from runs.web.uploads import LogTooLarge
from runs.web.views.imports import log_refused


class CompressionMiddleware(GZipMiddleware):
    """gzip for pages, JSON and CSV (a results page or an export shrinks 5 to 10 times),
    except the Server-Sent Events of a live run.

    Django compresses a streamed answer as it goes: a synchronous stream through one
    compressor that sends what it has, an asynchronous one piece by piece. Neither holds
    an export back, so exports are compressed too. An event stream is not: each event
    would be a gzip member of its own, bigger than the event, and proxies are quicker to
    buffer a compressed stream.
    """

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.get("Content-Type", "").startswith("text/event-stream"):
            return response
        return super().process_response(request, response)


class UploadLimitMiddleware:
    """A page's upload is read here, before the CSRF check reads it: a log beyond the
    limit (runs/web/uploads.py) is then the import page saying so (413), not Django's
    bare "Bad Request (400)". The API reads its own uploads and answers in JSON."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method == "POST" and not request.path.startswith("/api/"):
            try:
                request.POST  # noqa: B018 - parsed now, kept for the view
            except LogTooLarge as e:
                return log_refused(request, str(e))
        return self.get_response(request)
