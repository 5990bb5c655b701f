import asyncio
import gc
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, nullcontext, suppress
from typing import Any

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.urls import get_resolver, set_script_prefix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
# Tells the settings that requests run here, each in a thread of its own: database
# connections then come from a bounded pool (see DATABASES in benchdash/settings.py).
os.environ["BENCHDASH_WEB_SERVER"] = "asgi"
django.setup(set_prefix=False)

from runs.http.uploads import FORM_MARGIN, max_log_bytes  # noqa: E402


class Handler(ASGIHandler):
    """Django's, with three changes.

    Pages take turns: at most settings.WEB_TURNS answers of this process are computed
    at once, the others wait in line (first come, first served). Django under ASGI runs
    each request in a thread of its own, and 25 threads sharing one interpreter lock made
    every request as slow as the crowd and the slowest slower still: with turns, 50
    clients got more answers a second and a p99 under the 1 s goal (docs/PERFORMANCE.md).
    A turn covers computing the answer, not receiving the body nor sending the answer: a
    slow client holds none, nor does a stream (an export, a run's events followed for
    hours), which is sent after its view has returned.

    And for bodies sent in chunks (Transfer-Encoding: chunked, no Content-Length):
    such a body is given its length once read, so that an upload in chunks is read like
    any other (Django takes a body without a length for an empty one: "No file was
    submitted."), and what comes after a body passes the largest log is not kept; the
    upload handler then refuses it as it refuses one that declares such a length
    (runs/http/uploads.py, runs/web/middleware.py).

    And the middleware and the view run as under WSGI, in one hop to the request's
    thread: Django's asynchronous middleware chain went back and forth between the event
    loop and that thread at each middleware: 2.7 of the 11 ms of CPU the login page cost
    under load (docs/performance/load.md)."""

    def __init__(self) -> None:
        super().__init__()
        # Each request's thread for synchronous code, from a pool: Django's
        # ThreadSensitiveContext started a thread for every request and joined it after.
        self.threads: list[ThreadPoolExecutor] = []
        self.turns: AbstractAsyncContextManager[Any] = (
            asyncio.Semaphore(settings.WEB_TURNS) if settings.WEB_TURNS else nullcontext()
        )
        # The middleware chain as under WSGI (get_response_async): Django's async one
        # hopped to the event loop and back at each middleware that can be async and at
        # each that cannot (ours), and again for the view.
        self.load_middleware(is_async=False)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Django's, with the request's thread taken from the pool and given back."""
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        thread = self.threads.pop() if self.threads else ThreadPoolExecutor(max_workers=1)
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        finally:
            self.threads.append(thread)

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        """Django's, with what it did in three hops to the request's thread done in one:
        the request_started signal, the answer (get_response_async) and, for an answer
        that is not streamed, its close() (the request_finished signal: the database
        connection goes back to the pool before the answer is sent, not after). Each hop
        is a future, a thread woken and the event loop woken back: the loop's thread was
        a sixth of a web worker's CPU under 50 clients (docs/performance/load.md). A stream
        is closed once sent, as Django does. Each request sends each signal once
        (tests/test_asgi.py)."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:  # a request Django could not read: its signals as Django sends them
            await signals.request_started.asend(sender=self.__class__, scope=scope)
            body_file.close()
            error_response._handler_class = self.__class__
            await self.send_response(error_response, send)
            await sync_to_async(error_response.close)()
            return

        async def process_request() -> Any:
            response = await self.run_get_response(request)
            with suppress(asyncio.CancelledError):  # the client left while it was sent
                await self.send_response(response, send)
            return response

        # Django's watch for a client that leaves while its answer is made.
        listen = asyncio.create_task(self.listen_for_disconnect(receive))
        answer = asyncio.create_task(process_request())
        await asyncio.wait((listen, answer), return_when=asyncio.FIRST_COMPLETED)
        for task in (listen, answer):
            if not task.done():
                task.cancel()
            with suppress(RequestAborted, asyncio.CancelledError):
                await task
        if answer.cancelled():
            # The client left: its thread may still be at work on the answer. This runs
            # after it, in the same thread, and ends the request unless the answer did.
            await sync_to_async(self.ended, thread_sensitive=True)(request)
        elif answer.result().streaming:
            await sync_to_async(answer.result().close)()
        body_file.close()

    async def run_get_response(self, request: Any) -> Any:
        async with self.turns:
            return await super().run_get_response(request)

    async def get_response_async(self, request: Any) -> Any:
        """Django's, in one hop to the request's thread for synchronous code: middleware
        and view (an asynchronous view, the events of a run, is run from there on the
        event loop, and its stream is sent from the loop as before)."""
        return await sync_to_async(self.answered, thread_sensitive=True)(request)

    def answered(self, request: Any) -> Any:
        """The request's synchronous steps, in its thread: see handle()."""
        signals.request_started.send(sender=self.__class__, scope=request.scope)
        request.benchdash_stage = "started"
        response = self.get_response(request)
        # The sender of its request_finished, as Django's run_get_response sets it later.
        response._handler_class = self.__class__  # type: ignore[attr-defined]
        if not response.streaming:
            response.close()
            request.benchdash_stage = "ended"
        return response

    def ended(self, request: Any) -> None:
        """A request whose client left: request_finished once, if it started and its
        answer did not send it already (a request still waiting for its turn never
        started: neither signal)."""
        if getattr(request, "benchdash_stage", "") == "started":
            signals.request_finished.send(sender=self.__class__)
            request.benchdash_stage = "ended"

    async def read_body(self, receive: Any) -> Any:
        body = _Body(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, mode="w+b")
        limit = max_log_bytes() + FORM_MARGIN
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                body.close()
                raise RequestAborted()
            if not body.too_large:
                body.write(message.get("body", b""))
                # The rest is read but not kept: Django wants the whole body received.
                body.too_large = body.tell() > limit
            if not message.get("more_body", False):
                break
        body.seek(0)
        return body

    def create_request(self, scope: Any, body_file: Any) -> Any:
        request, error = super().create_request(scope, body_file)
        if request is not None and (body_file.too_large or not request.META.get("CONTENT_LENGTH")):
            # Past the limit, the length read so far is past it too: the upload handler
            # refuses it (LogTooLarge), and the page or the API says so in words.
            request.META["CONTENT_LENGTH"] = str(body_file.seek(0, 2))
            body_file.seek(0)
        return request, error


class _Body(tempfile.SpooledTemporaryFile[bytes]):
    too_large = False


application = Handler()

# Every view imported now rather than at the first request, then what is loaded, which
# lives as long as the process, is left out of the garbage collector's full collections:
# walking it cost a request 120 ms about every other results page of a large batch
# (docs/PERFORMANCE.md). The worker does the same once it is ready (runs/tasks.py).
get_resolver().url_patterns  # noqa: B018 - imports the URLconf and every view
gc.collect()
gc.freeze()
