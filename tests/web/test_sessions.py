"""Sessions read with one written-out statement (runs/web/sessions.py): a page sees its
user, an expired session is no login, a logout ends it, and the read is that statement."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone


def test_a_logged_in_page_reads_its_session_in_one_written_out_statement(client_in):
    with CaptureQueriesContext(connection) as queries:
        page = client_in.get("/")

    assert page.status_code == 200 and b"Log out ana" in page.content
    reads = [q["sql"] for q in queries if "django_session" in q["sql"]]
    assert len(reads) == 1 and reads[0].startswith("SELECT session_key, session_data, expire_date")


def test_an_expired_session_is_no_login(client_in):
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))

    page = client_in.get("/")

    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")


def test_a_logout_ends_the_session_for_its_cookie(client_in):
    cookie = client_in.cookies["sessionid"].value
    client_in.post("/accounts/logout/")
    copied = Client()
    copied.cookies["sessionid"] = cookie

    assert copied.get("/").status_code == 302
    assert not Session.objects.filter(session_key=cookie).exists()
