"""The links every page's header holds are found once a process (runs/web/links.py): the
same as the tags made them, and under a script prefix, that prefix's."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.templatetags.static import static
from django.test import Client
from django.urls import reverse, set_script_prefix

from runs.web import links

pytestmark = pytest.mark.django_db

PAGES = ("home", "plans", "targets", "load_hosts", "schedules", "compare", "import", "tokens",
         "health", "api-docs", "logout")  # fmt: skip


def test_the_header_links_to_each_page_and_file_as_the_tags_did(client_in: Client):
    html = client_in.get("/plans/").content.decode()

    for name in PAGES:
        assert f'"{reverse(name)}"' in html, name
    for path in links.FILES.values():
        assert f'"{static(path)}"' in html, path
    assert not re.search(r'(href|src)=""', html)


def test_the_admin_link_is_shown_to_staff(client_in: Client, django_user_model):
    user = django_user_model.objects.get(username="ana")
    user.is_staff = True
    user.save()

    assert f'href="{reverse("admin:index")}"' in client_in.get("/plans/").content.decode()


def test_under_a_script_prefix_the_links_carry_it():
    set_script_prefix("/bench/")
    try:
        under = links.links(HttpRequest())["links"]
        assert (under["plans"], under["api_docs"]) == ("/bench/plans/", "/bench/api/v1/docs/")
    finally:
        set_script_prefix("/")
    assert links.links(HttpRequest())["links"]["plans"] == "/plans/"


def test_a_file_the_header_does_not_know_is_an_error_not_a_blank_link():
    with pytest.raises(ImproperlyConfigured, match="no file 'chart'"):
        links.links(HttpRequest())["files"]["chart"]
