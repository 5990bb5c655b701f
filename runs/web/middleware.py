"""Answers compressed when the browser asks for it."""

from __future__ import annotations

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.gzip import GZipMiddleware


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
