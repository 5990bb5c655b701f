"""The Django admin shows no secret: walking every admin page of every registered model
(list, add, change) as a superuser, no stored password or private key, nor its
ciphertext, appears anywhere."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from runs.models import Batch, LoadHost, Plan, Run, Sample, Target
from runs.secrets import EncryptedTextField
from tests.servers import SSHKey

PASSWORD = "target-pw-Zq81"


@pytest.fixture
def secrets_stored(db, django_user_model) -> list[str]:
    """A row of every kind, those with secrets holding them; returns the secrets' texts."""
    key = SSHKey.generate()
    owner = django_user_model.objects.create_user("owner", password="owner-pass-1")
    target = Target.objects.create(
        name="db", host="127.0.0.1", port=3306, user="bench", password=PASSWORD, created_by=owner
    )
    host = LoadHost.objects.create(
        name="lg", kind="ssh", address="10.0.0.9", user="bench", private_key=key.private,
        created_by=owner,
    )  # fmt: skip
    plan = Plan.objects.create(name="p", target=target, load_host=host, threads=[1])
    batch = Batch.objects.create(
        plan=plan, target=target, load_host=host, params={}, seed=1, launched_by="ui"
    )
    run = Run.objects.create(batch=batch, position=0, round=0, cell_key="c", threads=1)
    Sample.objects.create(run=run, seq=1, time_s=1, threads=1, received_at=timezone.now())
    key_lines = [line for line in key.private.splitlines() if not line.startswith("-----")]
    return [PASSWORD, *key_lines, *_ciphertexts()]


def _ciphertexts() -> list[str]:
    """What the database holds for every encrypted field: not to be shown either."""
    texts = []
    for model in (Target, LoadHost):
        for field in model._meta.get_fields():
            if isinstance(field, EncryptedTextField):
                with connection.cursor() as cursor:
                    table, column = model._meta.db_table, field.column
                    cursor.execute(f"SELECT {column} FROM {table} WHERE {column} <> ''")  # noqa: S608
                    texts += [row[0] for row in cursor.fetchall()]
    assert len(texts) == 2
    return texts


def test_no_admin_page_shows_a_secret(secrets_stored, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="root-pass-1")
    client = Client()
    client.force_login(root)
    walked = []
    for model in admin.site._registry:
        meta = model._meta
        pages = [f"admin:{meta.app_label}_{meta.model_name}_changelist"]
        pages += [f"admin:{meta.app_label}_{meta.model_name}_add"]
        urls = [reverse(page) for page in pages]
        urls += [
            reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
            for obj in model._default_manager.all()[:3]
        ]
        for url in urls:
            page = client.get(url)
            assert page.status_code == 200, url
            text = page.content.decode()
            leaked = [secret[:12] for secret in secrets_stored if secret in text]
            assert not leaked, f"{url} shows {leaked}"
            walked.append(url)
    assert any("/runs/loadhost/" in url and url.endswith("/change/") for url in walked)
    assert any("/runs/target/" in url and url.endswith("/change/") for url in walked)
    assert len(walked) > 20


# --- the admin keeps the rules the API keeps (runs/services/definitions.py) ------------------


def admin_form(obj: Target | LoadHost, **changes: object) -> dict[str, object]:
    """The admin change form's fields as stored, with `changes`."""
    data: dict[str, object]
    if isinstance(obj, Target):
        names = ["name", "engine", "host", "port", "socket", "database", "user", "cpu_cores",
                 "disk_count"]  # fmt: skip
        data = {name: getattr(obj, name) for name in names}
        data |= {"server_host": obj.server_host_id, "created_by": obj.created_by_id}
    else:
        names = ["name", "kind", "address", "port", "user", "host_key", "seen_host_key"]
        data = {name: getattr(obj, name) for name in names}
        data |= {"facts": "{}", "facts_at_0": "", "facts_at_1": "", "created_by": obj.created_by_id}
    return {**{k: "" if v is None else v for k, v in data.items()}, **changes}


@pytest.fixture
def staff_client(db, django_user_model) -> Client:
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", password="root-pass-1"))
    return client


def change(client: Client, obj: Target | LoadHost, **changes: object):
    url = reverse(f"admin:runs_{type(obj)._meta.model_name}_change", args=[obj.pk])
    return client.post(url, admin_form(obj, **changes))


def test_moving_a_target_in_the_admin_clears_its_password(staff_client):
    target = Target.objects.create(
        name="db", host="127.0.0.1", port=3306, user="bench", password=PASSWORD
    )

    answer = change(staff_client, target, host="db.elsewhere.example", port=3307)

    assert answer.status_code == 302, answer.content[:2000]
    target.refresh_from_db()
    assert (target.host, target.port, target.password) == ("db.elsewhere.example", 3307, "")


def test_renaming_a_target_in_the_admin_keeps_its_password(staff_client):
    target = Target.objects.create(
        name="db", host="127.0.0.1", port=3306, user="bench", password=PASSWORD
    )
    assert change(staff_client, target, name="db-renamed").status_code == 302
    target.refresh_from_db()
    assert (target.name, target.password) == ("db-renamed", PASSWORD)


def test_moving_a_load_host_in_the_admin_clears_its_key(staff_client):
    host = LoadHost.objects.create(
        name="lg", kind="ssh", address="10.0.0.9", user="bench", private_key="a key"
    )

    answer = change(staff_client, host, address="10.0.0.10")

    assert answer.status_code == 302, answer.content[:2000]
    host.refresh_from_db()
    assert (host.address, host.private_key) == ("10.0.0.10", "")


@pytest.mark.parametrize(
    ("model", "field", "value"),
    [
        (Target, "host", "db;id"),
        (Target, "user", "bench\nmysql-host=evil"),
        (LoadHost, "address", "$(curl evil)"),
        (LoadHost, "user", "root\nProxyCommand"),
    ],
)
def test_the_admin_refuses_what_the_api_refuses_naming_the_field(staff_client, model, field, value):
    obj = (
        Target.objects.create(name="db", host="127.0.0.1", port=3306, user="bench")
        if model is Target
        else LoadHost.objects.create(name="lg", kind="ssh", address="10.0.0.9", user="bench")
    )
    before = getattr(obj, field)

    answer = change(staff_client, obj, **{field: value})

    assert answer.status_code == 200  # the form again, with the error
    errors = answer.context["adminform"].form.errors
    assert field in errors, errors
    obj.refresh_from_db()
    assert getattr(obj, field) == before


# --- plans, checked and stored by plan_save as through the API --------------------------------


def page_form(client: Client, url: str, **changes: object) -> dict[str, object]:
    """The admin form on `url` as it shows the stored plan, with `changes`: what a browser
    would post back."""
    form = client.get(url).context["adminform"].form
    data: dict[str, object] = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue  # an empty field, an unticked box: not posted
        data[name] = value
    return {**data, **changes}


@pytest.fixture
def plan(db) -> Plan:
    target = Target.objects.create(name="db", host="127.0.0.1", port=3306, user="bench")
    host, _ = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})
    return Plan.objects.create(name="p", target=target, load_host=host, threads=[1])


def post_plan(client: Client, plan: Plan, **changes: object):
    url = reverse("admin:runs_plan_change", args=[plan.pk])
    return client.post(url, page_form(client, url, **changes))


def test_a_plan_changed_in_the_admin_is_stored_as_the_api_stores_it(staff_client, plan):
    answer = post_plan(staff_client, plan, threads="[1, 2]", notify_emails="ops@example.com")

    assert answer.status_code == 302, answer.context and answer.context["adminform"].form.errors
    plan.refresh_from_db()
    assert (plan.threads, plan.notify_emails) == ([1, 2], "ops@example.com")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("notify_emails", "not an address"),
        ("threads", "[0]"),
    ],
)
def test_the_admin_refuses_a_plan_the_api_refuses_naming_the_field(
    staff_client, plan, field, value
):
    before = getattr(plan, field)

    answer = post_plan(staff_client, plan, **{field: value})

    assert answer.status_code == 200  # the form again, with the error
    errors = answer.context["adminform"].form.errors
    assert field in errors, errors
    plan.refresh_from_db()
    assert getattr(plan, field) == before
