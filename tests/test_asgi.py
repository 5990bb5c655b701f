"""A web worker's start-up (benchdash/asgi.py): every view imported before the first
request, and what is loaded by then left out of the garbage collector's full collections,
which walked it for 120 ms about every other results page of a large batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What the scripts below share: a GET request's ASGI scope, for asgiref's communicator.
SCOPE_OF = """
def scope_of(path, query=b""):
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": query, "root_path": "", "headers": [(b"host", b"127.0.0.1")],
            "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 80)}

"""


def in_a_web_worker(code: str) -> str:
    """What `code` prints, run in a process of its own as a web worker starts."""
    done = subprocess.run(
        [sys.executable, "-c", SCOPE_OF + code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchdash.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_web_worker_starts_with_its_views_imported_and_what_it_loaded_frozen():
    code = (
        "import gc, sys, benchdash.asgi; "
        "print(gc.get_freeze_count(), 'runs.web.views.results' in sys.modules)"
    )
    printed = in_a_web_worker(code)
    frozen, views_imported = printed.split()
    assert int(frozen) > 50_000, frozen  # Django, the REST framework, benchdash
    assert views_imported == "True"


def test_a_web_worker_serves_its_requests_from_a_pool_of_threads():
    # Django's ASGI handler started a thread for every request and joined it after; here
    # each request borrows a thread of the worker's pool and gives it back.
    code = """
import asyncio, threading
from asgiref.testing import ApplicationCommunicator
from benchdash.asgi import application

async def get(path):
    talk = ApplicationCommunicator(application, scope_of(path))
    await talk.send_input({"type": "http.request", "body": b""})
    start = await talk.receive_output(10)
    await talk.receive_output(10)
    await talk.wait(10)  # the request handled to its end: its thread given back
    return start["status"]

async def main():
    before = threading.active_count()
    statuses = [await get("/accounts/login/") for _ in range(5)]
    print(statuses, len(application.threads), threading.active_count() - before)

asyncio.run(main())
"""
    printed = in_a_web_worker(code)
    statuses, pooled, started = printed.strip().rsplit(" ", 2)
    assert statuses == "[200, 200, 200, 200, 200]"
    assert pooled == "1" and started == "1"  # one thread, lent five times


def test_a_page_is_answered_in_one_hop_to_its_thread():
    # request_started, the answer and request_finished were three hops to the request's
    # thread; a page now takes one, with both signals in that thread, once each.
    code = """
import asyncio, threading
from asgiref.testing import ApplicationCommunicator
from concurrent.futures import ThreadPoolExecutor
from django.core import signals
from benchdash.asgi import application

hops, seen = [], []
submit = ThreadPoolExecutor.submit
def counted(self, *args, **kwargs):
    hops.append(1)
    return submit(self, *args, **kwargs)
ThreadPoolExecutor.submit = counted
for signal in (signals.request_started, signals.request_finished):
    signal.connect(lambda signal, **kw: seen.append((signal is signals.request_started,
                   threading.current_thread() is threading.main_thread())), weak=False)

async def get(path):
    talk = ApplicationCommunicator(application, scope_of(path))
    await talk.send_input({"type": "http.request", "body": b""})
    start = await talk.receive_output(10)
    body = await talk.receive_output(10)
    await talk.wait(10)
    return start["status"], len(body["body"])

async def main():
    status, size = await get("/accounts/login/")
    print(status, size > 500, len(hops), seen)

asyncio.run(main())
"""
    printed = in_a_web_worker(code)
    status, whole, hops, seen = printed.strip().split(" ", 3)
    assert (status, whole) == ("200", "True")
    assert hops == "1"
    assert seen == "[(True, False), (False, False)]"  # started then finished, off the loop


def test_a_stream_a_client_that_leaves_and_an_unreadable_request_send_each_signal_once():
    # What a page's hop leaves to handle(): a stream is closed once sent (its connection
    # back to the pool then), a client that leaves while its answer is made ends the
    # request once its thread is done with it, and a request Django cannot read (a
    # query that is not UTF-8) has both signals, from the handler as the others.
    code = """
import asyncio, threading, time
from asgiref.testing import ApplicationCommunicator
from django.core import signals
from django.http import StreamingHttpResponse
from benchdash.asgi import Handler

seen = []
for signal, name in ((signals.request_started, "started"), (signals.request_finished, "finished")):
    signal.connect(lambda name=name, **kw: seen.append((name, kw["sender"].__name__)), weak=False)

class Probe(Handler):
    def get_response(self, request):
        if request.path == "/slow":
            time.sleep(0.5)  # the client leaves meanwhile
        return StreamingHttpResponse(iter([b"one ", b"two"]))

application = Probe()

async def streamed():
    talk = ApplicationCommunicator(application, scope_of("/stream"))
    await talk.send_input({"type": "http.request", "body": b""})
    body = b""
    message = await talk.receive_output(10)
    while True:
        message = await talk.receive_output(10)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await talk.wait(10)
    return body

async def left():
    talk = ApplicationCommunicator(application, scope_of("/slow"))
    await talk.send_input({"type": "http.request", "body": b""})
    await asyncio.sleep(0.1)
    await talk.send_input({"type": "http.disconnect"})
    await talk.wait(10)

async def unreadable():
    talk = ApplicationCommunicator(application, scope_of("/x", b"q=\\xff"))  # not UTF-8
    await talk.send_input({"type": "http.request", "body": b""})
    start = await talk.receive_output(10)
    await talk.receive_output(10)
    await talk.wait(10)
    return start["status"]

async def main():
    body = await streamed()
    print(body.decode(), seen); seen.clear()
    await left()
    print(seen); seen.clear()
    status = await unreadable()
    print(status, seen)

asyncio.run(main())
"""
    printed = in_a_web_worker(code)
    stream, client_left, unread = printed.strip().splitlines()
    both = "[('started', 'Probe'), ('finished', 'Probe')]"
    assert stream == "one two " + both
    assert client_left == both
    assert unread.startswith("400 ") and unread.endswith(both)
