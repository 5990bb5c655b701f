"""Every answer under /api/ is JSON in the `{field, message}` shape, whatever answers it:
an unknown address or an id that is not a number (Django's URL resolver), a method or a
media type the operation does not take (DRF), an unexpected error. The pages keep their
HTML error pages. The schema lists the error answers of each operation."""

from __future__ import annotations

import subprocess
import sys

import pytest
import requests
from django.test import Client, override_settings

from tests.processes import ROOT, AsgiServer
from tests.servers import PrivatePostgres


def _is_error(answer, status: int) -> None:
    assert answer.status_code == status, answer.text[:300]
    assert answer.headers["Content-Type"] == "application/json", answer.text[:300]
    body = answer.json()
    assert set(body) >= {"field", "message"} and body["message"], body


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nothing-here",
        "/api/v1/plans/abc",  # an id that is not a number
        "/api/v1/plans/1/nothing",
        "/api/v2/plans",
    ],
)
def test_an_unknown_address_under_api_is_a_json_404(api, path):
    _is_error(api.get(path), 404)


def test_a_json_404_needs_no_token_either(anonymous):
    _is_error(anonymous.get("/api/v1/plans/abc"), 404)


def test_a_method_the_operation_does_not_take_is_a_json_405(api):
    answer = api.delete("/api/v1/batches")
    _is_error(answer, 405)
    assert answer.headers["Allow"] == "GET, HEAD, OPTIONS"


def test_a_body_that_is_not_json_is_a_json_415(api, offline_target, local_host):
    form = {"name": "inserts", "target": offline_target.pk, "load_host": local_host.pk}
    _is_error(api.post("/api/v1/plans", data=form), 415)
    # The log import takes the file it uploads, as multipart, and nothing else.
    _is_error(api.post("/api/v1/imports", json={"log": "x"}), 415)


def test_a_value_of_the_wrong_json_type_is_refused_naming_the_field(api, local_host):
    answer = api.post(
        "/api/v1/plans",
        json={"name": 7, "load_host": str(local_host.pk), "threads": ["1"], "cleanup": "yes"},
    )
    _is_error(answer, 400)
    refused = {e["field"]: e["message"] for e in answer.json()["errors"]}
    assert refused == {
        "name": "must be a string",
        "load_host": "must be an id, a whole number",
        "threads": "must be a whole number",
        "cleanup": "must be true or false",
    }


def test_a_string_longer_than_the_schema_allows_is_refused_as_sent(api):
    # DRF would trim the leading control character first, and find 100 characters.
    answer = api.post("/api/v1/tokens", json={"name": "\x1c" + "*" * 100})
    _is_error(answer, 400)
    assert answer.json() == {"field": "name", "message": "must be at most 100 characters"}


def test_the_log_import_refuses_what_is_not_a_log_upload(api):
    no_file = api.post("/api/v1/imports", files={"test": (None, "cpu")})
    _is_error(no_file, 400)
    assert no_file.json()["field"] == "log"
    unsure = api.post(
        "/api/v1/imports", files={"log": ("cpu.txt", b"x")}, data={"dry_run": "maybe"}
    )
    _is_error(unsure, 400)
    assert unsure.json()["field"] == "dry_run"


def test_a_name_already_taken_is_a_409(api, offline_target):
    answer = api.post(
        "/api/v1/targets",
        json={"name": offline_target.name, "host": "127.0.0.1", "user": "bench"},
    )
    _is_error(answer, 409)
    assert answer.json()["field"] == "name"


def test_an_empty_query_parameter_is_refused_not_ignored(api):
    answer = api.get("/api/v1/batches?plan=")
    _is_error(answer, 400)
    assert answer.json()["field"] == "plan"

    answer = api.get("/api/v1/plans?format=")
    _is_error(answer, 400)
    assert answer.json()["field"] == "format"


@pytest.mark.parametrize("page", ["", "last", "0", "x"])
def test_a_page_is_a_number_from_1(api, page):
    _is_error(api.get(f"/api/v1/targets?page={page}"), 404)
    assert api.get("/api/v1/targets?page=1").status_code == 200


@override_settings(ROOT_URLCONF="tests.api.crashing_urls")
def test_an_unexpected_error_is_a_json_500_under_api_and_an_html_page_elsewhere(
    transactional_db, django_user_model
):
    client = Client(raise_request_exception=False)
    client.force_login(django_user_model.objects.create_user("someone"))

    api_answer = client.get("/api/v1/failing")
    assert api_answer.status_code == 500
    assert api_answer.headers["Content-Type"] == "application/json"
    assert api_answer.json()["message"].startswith("internal error")

    page = client.get("/failing")
    assert page.status_code == 500
    assert page.headers["Content-Type"].startswith("text/html")


def test_the_pages_keep_their_html_404(transactional_db, django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user("someone"))
    page = client.get("/plans/abc/")
    assert page.status_code == 404
    assert page.headers["Content-Type"].startswith("text/html")


def test_the_schema_lists_the_error_answers_of_each_operation(api):
    schema = api.get("/api/v1/schema/", headers={"Accept": "application/json"}).json()
    paths = schema["paths"]

    def errors(path: str, method: str) -> set[str]:
        responses = paths[path][method]["responses"]
        for code in responses:
            if code >= "400":
                content = responses[code]["content"]["application/json"]["schema"]
                assert content == {"$ref": "#/components/schemas/Error"}, (path, method, code)
        return {code for code in responses if code >= "400"}

    assert errors("/api/v1/plans", "get") == {"401", "403", "404", "500"}  # 404: no such page
    assert errors("/api/v1/plans", "post") == {"400", "401", "403", "409", "415", "500"}
    assert errors("/api/v1/plans/{id}", "get") == {"401", "403", "404", "500"}
    assert errors("/api/v1/plans/{id}", "delete") == {"401", "403", "404", "409", "500"}
    assert errors("/api/v1/batches", "get") >= {"400", "401"}
    assert "404" in errors("/api/v1/compare", "get")
    assert errors("/api/v1/load-hosts/{id}/scan", "post") == {"400", "401", "403", "404", "500"}


def test_the_schema_offers_each_request_body_as_json_alone(api):
    schema = api.get("/api/v1/schema/", headers={"Accept": "application/json"}).json()
    media = {
        (path, method): sorted(operation["requestBody"]["content"])
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    }
    assert media.pop(("/api/v1/imports", "post")) == ["multipart/form-data"]
    assert media and set(map(tuple, media.values())) == {("application/json",)}, media


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_api_answers_503_in_words_while_the_results_database_is_down(tmp_path):
    # A private PostgreSQL as the results database, benchdash under uvicorn (the pool of
    # connections is the ASGI server's), then the database stopped.
    server, web = PrivatePostgres(), None
    try:
        server.start()
        env = server.benchdash_env("benchdash_down")
        token = subprocess.run(
            [sys.executable, "manage.py", "create_token", "ci", "t", "--create-user"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        ).stdout.split()[-1]  # fmt: skip
        web = AsgiServer(tmp_path / "uvicorn.log", env=env)
        headers = {"Authorization": f"Token {token}"}
        assert requests.get(web.url + "/api/v1/batches", headers=headers, timeout=60).ok

        server.stop_server()

        for path in ("/api/v1/batches", "/api/v1/plans"):
            # Within the client's 20 s, not the pool's former 30 s: never a tighter bound.
            answer = requests.get(web.url + path, headers=headers, timeout=20)
            _is_error(answer, 503)
            assert "results database" in answer.json()["message"], answer.text
            assert answer.json()["field"] is None and answer.headers["Retry-After"]
        # A page of someone logged in: their session is read from the database.
        session = {"sessionid": "a" * 32}
        page = requests.get(web.url + "/", cookies=session, timeout=20, allow_redirects=False)
        assert page.status_code == 503 and "results database is unreachable" in page.text
    finally:
        if web is not None:
            web.stop()
        server.stop()
