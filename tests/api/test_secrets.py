"""Secrets go in and never come out: not in lists, details, updates, errors or the schema."""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from runs.models import LoadHost, Target

PASSWORD = "Tr0ub4dor-and-3-horses"


def private_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()


def key_body(pem: str) -> list[str]:
    return [line for line in pem.splitlines() if not line.startswith("-----")]


def test_no_secret_ever_comes_back(api):
    key = private_key()
    target = api.post(
        "/api/v1/targets",
        json={
            "name": "db1",
            "host": "127.0.0.1",
            "port": 3306,
            "user": "bench",
            "password": PASSWORD,
        },
    )
    host = api.post(
        "/api/v1/load-hosts",
        json={
            "name": "lg1",
            "kind": "ssh",
            "address": "127.0.0.1",
            "user": "bench",
            "private_key": key,
        },
    )
    assert target.status_code == host.status_code == 201, (target.text, host.text)
    assert target.json()["has_password"] is True
    assert host.json()["has_private_key"] is True
    t, h = target.json()["id"], host.json()["id"]

    # Every way of reading them back, and updates that leave the secret out or fail.
    api.get("/api/v1/targets")
    api.get(f"/api/v1/targets/{t}")
    read_only = {"id", "has_password", "created_by", "created_at", "updated_at"}
    as_read = {k: v for k, v in target.json().items() if k not in read_only}
    api.put(f"/api/v1/targets/{t}", json={**as_read, "name": "db1-renamed"})
    api.patch(f"/api/v1/targets/{t}", json={"database": "sbtest2"})
    api.patch(f"/api/v1/targets/{t}", json={"port": "not a port", "password": PASSWORD})
    api.get("/api/v1/load-hosts")
    api.get(f"/api/v1/load-hosts/{h}")
    api.patch(f"/api/v1/load-hosts/{h}", json={"port": 2222})
    api.patch(f"/api/v1/load-hosts/{h}", json={"kind": "nope", "private_key": key})
    api.request("OPTIONS", f"/api/v1/targets/{t}")
    api.get("/api/v1/schema/")

    for body in api.bodies:
        assert PASSWORD not in body
        assert not any(line in body for line in key_body(key))
    # Left out of an update, the secrets were kept.
    assert Target.objects.get(pk=t).password == PASSWORD
    assert LoadHost.objects.get(pk=h).private_key == key
    assert api.get(f"/api/v1/targets/{t}").json()["name"] == "db1-renamed"


def test_a_secret_can_be_replaced_and_cleared(api):
    t = api.post(
        "/api/v1/targets",
        json={"name": "db1", "host": "db", "user": "bench", "password": PASSWORD},
    ).json()["id"]

    api.patch(f"/api/v1/targets/{t}", json={"password": "another-one"})
    assert Target.objects.get(pk=t).password == "another-one"

    cleared = api.patch(f"/api/v1/targets/{t}", json={"password": ""})
    assert cleared.json()["has_password"] is False
