"""The scripts page and the plan editor with a bundle: files and archives uploaded, each
script listed with its version, files, options and commands; a plan's script options
written as name=value lines, kept, and refused when wrong. Uploading asks sysbench what
the script offers, so this file runs sysbench (the servers tier)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.models import LuaScript, Plan
from tests.sysbench.test_bundles import lying_zip
from tests.web.test_setup_pages import plan_post

TPCC_LIKE = Path(__file__).parent.parent / "fixtures" / "lua" / "tpcc_like"


@pytest.fixture
def author(user):
    user.user_permissions.add(Permission.objects.get(codename="upload_luascript"))
    return user


def uploads() -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(TPCC_LIKE.glob("*.lua"))]


def test_a_bundles_files_are_uploaded_together_and_listed(client_in, author):
    response = client_in.post("/scripts/", {"name": "tpcc-like", "bundle_files": uploads()})

    assert response.status_code == 302, response.content.decode()[:2000]
    script = LuaScript.objects.get(name="tpcc-like")
    assert script.entry == "tpcc_like.lua" and len(script.files) == 3
    page = client_in.get("/scripts/").content.decode()
    assert "<code>tpcc_like_common.lua</code>" in page
    assert 'title="Warehouses in each table set">scale=1</code>' in page
    assert "check, cleanup, prepare" in page


def test_an_archive_with_a_link_is_refused_on_the_page(client_in, author):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo("x.lua")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/shadow"
        archive.addfile(info)
    upload = SimpleUploadedFile("evil.tar.gz", out.getvalue())

    response = client_in.post("/scripts/", {"name": "evil", "archive": upload})

    assert response.status_code == 200
    assert "x.lua is a link" in response.content.decode()
    assert not LuaScript.objects.exists()


def test_a_zip_whose_size_headers_lie_is_refused_on_the_page(client_in, author):
    upload = SimpleUploadedFile("liar.zip", lying_zip())

    response = client_in.post("/scripts/", {"name": "liar", "archive": upload})

    assert response.status_code == 200
    assert "the zip archive is damaged at a.lua (Bad CRC-32" in response.content.decode()
    assert not LuaScript.objects.exists()


def test_the_editor_keeps_a_plans_script_options_and_refuses_wrong_ones(
    client_in, author, stored_target
):
    client_in.post("/scripts/", {"name": "tpcc-like", "bundle_files": uploads()})
    script = LuaScript.objects.get(name="tpcc-like")
    bundle = {
        "test": "oltp_read_write",
        "script": str(script.pk),
        "opt_tables": "",
        "opt_table-size": "",
        "set__innodb_flush_log_at_trx_commit": [],
        "set__sync_binlog": [],
    }

    wrong = client_in.post(
        "/plans/new", plan_post(stored_target, **bundle, script_options="scale=lots")
    )
    saved = client_in.post(
        "/plans/new", plan_post(stored_target, **bundle, script_options="scale=3\ntrx_level=RR")
    )

    assert wrong.status_code == 200 and "not a whole number" in wrong.content.decode()
    assert saved.status_code == 302, saved.content.decode()[-3000:]
    plan = Plan.objects.get(name="flush sweep")
    assert plan.options["script_options"] == {"scale": 3, "trx_level": "RR"}
    page = client_in.get(f"/plans/{plan.pk}/").content.decode()
    assert "scale=3\ntrx_level=RR</textarea>" in page
