"""Responses of the pages and the API: JSON with <, > and & escaped as \\u003C... (still
valid JSON: a log line or a name holding `<script>` stays inert even if the response is
ever shown as HTML), long responses (exports) streamed as they are written, and a finished
batch's stored response sent only when the client does not hold it already (conditional
GET)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.cache import get_conditional_response, patch_cache_control

_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}
PIECE_CHARS = 64 * 1024  # what a streamed response sends at a time (and gzips as one piece)
Responded = TypeVar("Responded", bound=HttpResponseBase)


def json_response(data: Any, *, indent: int | None = None, status: int = 200) -> HttpResponse:
    text = json.dumps(data, cls=DjangoJSONEncoder, indent=indent).translate(_ESCAPES)
    return HttpResponse(text, content_type="application/json", status=status)


def streamed(
    request: HttpRequest,
    pieces: Iterator[str],
    *,
    content_type: str,
    filename: str = "",
    headers: dict[str, str] | None = None,
) -> StreamingHttpResponse:
    """A response sent while `pieces` are produced, in bounded memory under either server.

    Under ASGI (uvicorn) Django reads a synchronous iterator whole into a list before
    sending the first byte; an asynchronous one that pulls each piece in Django's thread
    for synchronous code (where the request's database connection lives) streams.
    """
    joined = _joined(pieces)
    content = _pulled(joined) if isinstance(request, ASGIRequest) else joined
    response = StreamingHttpResponse(content, content_type=content_type, headers=headers)
    if filename:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _joined(pieces: Iterator[str]) -> Iterator[str]:
    """Small pieces sent together: fewer writes, and fewer gzip members under ASGI."""
    waiting: list[str] = []
    size = 0
    try:
        for piece in pieces:
            waiting.append(piece)
            size += len(piece)
            if size >= PIECE_CHARS:
                yield "".join(waiting)
                waiting, size = [], 0
        if waiting:
            yield "".join(waiting)
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            close()  # a client gone: the server-side cursor is closed now


def _next(pieces: Iterator[str]) -> str | None:
    return next(pieces, None)


async def _pulled(pieces: Iterator[str]) -> AsyncIterator[str]:
    pull = sync_to_async(_next, thread_sensitive=True)
    try:
        while (piece := await pull(pieces)) is not None:
            yield piece
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()


def conditional(
    request: Any, etag: str | None, respond: Callable[[], Responded]
) -> Responded | HttpResponseBase:
    """A stored response (`etag` given): 304 Not Modified when the client holds it
    (If-None-Match), else `respond()` with its ETag; kept by the browser only (private:
    every page needs a login) and asked again each time, since an import or an edit can
    still replace it. A live response (None): no ETag, never served from a cache."""
    if etag is None:
        response: HttpResponseBase = respond()
        patch_cache_control(response, private=True, no_cache=True)
        return response
    quoted = f'"{etag}"'
    response = get_conditional_response(request, etag=quoted) or respond()
    response["ETag"] = quoted
    patch_cache_control(response, private=True, max_age=0, must_revalidate=True)
    return response
