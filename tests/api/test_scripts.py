"""Lua scripts and bundles through the API: upload (files, an archive in base64), the
list, a script with its options and commands, its versions; a plan that runs a bundle
with its own options, and those options refused when wrong."""

from __future__ import annotations

import base64
import io
import re
import tarfile
from datetime import datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from runs.models import LoadHost, LuaScript
from runs.services import tokens
from tests.api.conftest import Api
from tests.sysbench.test_bundles import lying_zip

TPCC_LIKE = Path(__file__).parent.parent / "fixtures" / "lua" / "tpcc_like"


def bundle_files() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(TPCC_LIKE.glob("*.lua"))}


@pytest.fixture
def author(owner):
    owner.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    return owner


def test_a_bundle_is_uploaded_listed_described_and_versioned(api, author):
    created = api.post("/api/v1/scripts", json={"name": "tpcc-like", "files": bundle_files()})

    assert created.status_code == 201, created.text
    body = created.json()
    assert body["entry"] == "tpcc_like.lua" and body["version"] == 1
    assert body["file_names"][0] == "tpcc_like.lua" and len(body["file_names"]) == 4
    assert {o["name"]: o["kind"] for o in body["options"]} == {
        "report_csv": "text", "scale": "int", "tables": "int", "trx_level": "text",
    }  # fmt: skip
    assert body["commands"] == ["check", "cleanup", "prepare"]

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path in sorted(TPCC_LIKE.glob("*.lua")):
            archive.add(path, arcname=path.name)
    again = api.post(
        "/api/v1/scripts",
        json={"name": "tpcc-like", "archive": base64.b64encode(out.getvalue()).decode()},
    )

    assert again.status_code == 201, again.text
    assert again.json()["version"] == 2
    listed = api.get("/api/v1/scripts").json()["results"]
    assert [(s["name"], s["version"]) for s in listed] == [("tpcc-like", 2)]
    versions = api.get(f"/api/v1/scripts/{body['id']}/versions").json()
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[0]["digests"] == versions[1]["digests"]  # the same files twice


def uploader(live_server, django_user_model, name: str) -> Api:
    """A teammate who may upload scripts and new versions of others' (runs.change_luascript)."""
    user = django_user_model.objects.create_user(name, password=f"{name}-pass-1")
    for codename in ("upload_luascript", "change_luascript"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return Api(live_server.url, tokens.token_create(user=user, name="t", expires_in=None)[1])


def test_each_version_lists_who_uploaded_it_and_when_in_upload_order(
    api, author, live_server, django_user_model
):
    ada = uploader(live_server, django_user_model, "ada")
    spans = []
    for n, client in enumerate([api, ada, api], start=1):
        before = timezone.now()
        stored = client.post("/api/v1/scripts", json={"name": "mine", "content": f"x = {n}\n"})
        spans.append((before, timezone.now()))
        assert stored.status_code == 201, stored.text
        assert stored.json()["version"] == n

    versions = api.get(f"/api/v1/scripts/{stored.json()['id']}/versions").json()
    browser = Api(live_server.url)
    browser.login("owner", "owner-pass-1")
    page = browser.get("/scripts/").text

    assert [(v["version"], v["uploaded_by"]) for v in versions] == [
        (3, "owner"), (2, "ada"), (1, "owner"),
    ]  # fmt: skip
    listed = re.findall(r'<li value="(\d)">v\d · (\w+) · <time datetime="([^"]+)">', page)
    assert [(int(n), who) for n, who, _ in listed] == [(3, "owner"), (2, "ada"), (1, "owner")]
    for version, (_, _, shown) in zip(versions, listed, strict=True):
        before, after = spans[version["version"] - 1]
        uploaded = datetime.fromisoformat(version["created_at"])
        assert before <= uploaded <= after  # its own upload's time, not the next one's
        assert datetime.fromisoformat(shown) == uploaded


def test_a_hostile_archive_is_a_400_naming_the_archive(api, author):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo("../../evil.lua")
        info.size = 5
        archive.addfile(info, io.BytesIO(b"x = 1"))

    answer = api.post(
        "/api/v1/scripts",
        json={"name": "evil", "archive": base64.b64encode(out.getvalue()).decode()},
    )

    assert answer.status_code == 400
    assert answer.json()["field"] == "archive"
    assert "climbs out" in answer.json()["message"]
    assert not LuaScript.objects.exists()


def test_a_zip_whose_size_headers_lie_is_a_400_naming_the_damage(api, author):
    answer = api.post(
        "/api/v1/scripts",
        json={"name": "liar", "archive": base64.b64encode(lying_zip()).decode()},
    )

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "archive"
    assert "the zip archive is damaged at a.lua (Bad CRC-32" in answer.json()["message"]
    assert not LuaScript.objects.exists()


def test_uploading_without_the_permission_is_a_403(api, owner):
    answer = api.post("/api/v1/scripts", json={"name": "x", "content": "function event() end"})

    assert answer.status_code == 403
    assert "runs.upload_luascript" in answer.text


def test_a_plan_takes_the_bundles_options_and_refuses_wrong_ones(api, author, offline_target):
    script = api.post("/api/v1/scripts", json={"name": "tpcc-like", "files": bundle_files()}).json()
    local = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})[0]
    plan = {
        "name": "tpcc",
        "target": offline_target.pk,
        "load_host": local.pk,
        "test": "oltp_read_write",
        "script": script["id"],
        "threads": [1],
        "options": {"time": 5, "script_options": {"scale": 2, "trx_level": "RR"}},
    }

    saved = api.post("/api/v1/plans", json=plan)
    wrong = api.post(
        "/api/v1/plans",
        json={**plan, "name": "wrong", "options": {"script_options": {"scale": "lots"}}},
    )
    unknown = api.post(
        "/api/v1/plans", json={**plan, "name": "unknown", "options": {"table-size": 10}}
    )

    assert saved.status_code == 201, saved.text
    assert saved.json()["options"]["script_options"] == {"scale": 2, "trx_level": "RR"}
    assert wrong.status_code == 400, wrong.text
    assert wrong.json()["field"] == "options.script_options.scale"
    assert "not a whole number" in wrong.json()["message"]
    assert unknown.status_code == 400 and unknown.json()["field"] == "table-size"
    assert "declares no option table-size" in unknown.json()["message"]
