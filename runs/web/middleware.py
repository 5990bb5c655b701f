"""Responses compressed when the browser asks for it; an upload beyond the log size limit
refused in words; bidirectional controls in a page shown, not obeyed."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware.gzip import GZipMiddleware, re_accepts_gzip
from django.utils.cache import patch_vary_headers

from runs.bidi import BIDI_CONTROLS, BIDI_CONTROLS_UTF8, bidi_shown
from runs.http import deflated
from runs.http.uploads import LogTooLarge
from runs.web.views.imports import log_refused


class CompressionMiddleware(GZipMiddleware):
    """gzip for pages, JSON and CSV (a results page or an export shrinks 5 to 10 times),
    and a finished run's events (one whole answer), except the Server-Sent Events of a
    live run.

    Django compresses a streamed response as it goes: a synchronous stream through one
    compressor that sends what it has, an asynchronous one piece by piece. Neither holds
    an export back, so exports are compressed too. An event stream is not: each event
    would be a gzip member of its own, bigger than the event, and proxies are quicker to
    buffer a compressed stream.

    Whole responses are compressed at level 1 (nginx's default) rather than Django's 6: the
    results page of 50 runs (325 kB) in 1.5 ms of CPU instead of 8.4, for 90 kB sent instead
    of 77: level 6 was more than half of what the page cost the server
    (docs/PERFORMANCE.md). A stored part that every response repeats is compressed once
    (runs/http/deflated.py). Streams keep Django's compression.
    """

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.streaming:
            if response.get("Content-Type", "").startswith("text/event-stream"):
                return response  # a live run's events, each sent as it comes
            return super().process_response(request, response)
        return self.whole_compressed(request, response)

    def whole_compressed(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        """Django's GZipMiddleware for a response that is not streamed, at deflated.LEVEL;
        of a response made around a part compressed before (deflated.with_deflated), only
        the rest is compressed now."""
        content = response.content  # type: ignore[attr-defined]
        if len(content) < 200 or response.has_header("Content-Encoding"):
            return response
        patch_vary_headers(response, ("Accept-Encoding",))
        if not re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            return response
        compressed = _compressed(response, content, self.max_random_bytes)
        if len(compressed) >= len(content):
            return response
        response.content = compressed  # type: ignore[attr-defined]
        response.headers["Content-Length"] = str(len(compressed))
        etag = response.get("ETag")
        if etag and etag.startswith('"'):
            response.headers["ETag"] = "W/" + etag  # a strong ETag is for the bytes sent
        response.headers["Content-Encoding"] = "gzip"
        return response


def _compressed(response: HttpResponseBase, content: bytes, max_random_bytes: int) -> bytes:
    parts = deflated.parts_of(response)
    if parts is not None:
        head, middle, tail = parts
        # Only while the body is still what the view made of them (BidiShownMiddleware
        # forgets them when it changes a body; any other change is seen here).
        if deflated.is_body_of(content, head, middle, tail):
            return deflated.gzipped_around(head, middle, tail, max_random_bytes)
    return deflated.gzipped(content, max_random_bytes)


class UploadLimitMiddleware:
    """A page's upload is read here, before the CSRF check reads it: a log beyond the
    limit (runs/http/uploads.py) is then the import page saying so (413), not Django's
    bare "Bad Request (400)". The API reads its own uploads and responds in JSON."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method == "POST" and not request.path.startswith("/api/"):
            try:
                request.POST  # noqa: B018 - parsed now, kept for the view
            except LogTooLarge as e:
                return log_refused(request, str(e))
        return self.get_response(request)


class BidiShownMiddleware:
    """A page shows each bidirectional control character of user text (a U+202E in a
    comment, a note, a name) as "[U+202E]" instead of letting it reverse what follows
    (runs/bidi.py). One place for every page, so that no template can forget it: the
    pages' own markup holds none of these characters, so only user text changes. What is
    stored stays as typed; the API's JSON carries it raw (its reader decides)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        if getattr(response, "streaming", False) or response.has_header("Content-Encoding"):
            return response
        body = response.content  # type: ignore[attr-defined]
        if response.charset.lower() in ("utf-8", "utf8") and not BIDI_CONTROLS_UTF8.search(body):
            return response  # none (nearly every page): the page is not decoded
        content = body.decode(response.charset)
        if BIDI_CONTROLS.search(content):
            response.content = bidi_shown(content)  # type: ignore[attr-defined]
            deflated.forget_parts(response)  # not its body now
        return response
