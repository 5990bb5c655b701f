"""A load host logs in with the key stored (encrypted) with it, never with a key file on
the worker that a user names: otherwise anyone could borrow a colleague's key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from runs.loadhosts import ExecutorError, executor_for
from runs.models import LoadHost
from tests.api.test_permissions import api_of
from tests.servers import PrivateSSHD, SSHKey

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_a_user_cannot_make_the_worker_log_in_with_a_key_file_on_it(
    live_server: Any, outsider: Any, sshd_server: PrivateSSHD, ssh_key_file: Path
):
    # ssh_key_file: a colleague's key on the worker machine, authorized on the sshd.
    them = api_of(live_server, outsider)
    answer = them.post(
        "/api/v1/load-hosts",
        json={"name": "borrowed", "kind": "ssh", "address": sshd_server.host,
              "port": sshd_server.port, "user": sshd_server.user,
              "key_path": str(ssh_key_file)},
    )  # fmt: skip

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "key_path"
    assert "paste the private key" in answer.json()["message"]
    assert not LoadHost.objects.filter(name="borrowed").exists()
    # Without the path, the host has no key of its own: the worker cannot log in.
    answer = them.post(
        "/api/v1/load-hosts",
        json={"name": "borrowed", "kind": "ssh", "address": sshd_server.host,
              "port": sshd_server.port, "user": sshd_server.user},
    )  # fmt: skip
    assert answer.status_code == 201, answer.text
    host = LoadHost.objects.get(name="borrowed")
    host.host_key = sshd_server.host_key.public
    host.save()
    with pytest.raises(ExecutorError, match="has no private key"):
        executor_for(host).sysbench_version()
    assert "key_path" not in them.get(f"/api/v1/load-hosts/{host.pk}").json()


def test_the_host_form_has_no_key_file(client: Any, outsider: Any):
    client.force_login(outsider)
    page = client.get("/load-hosts/new")
    assert page.status_code == 200
    assert b"key_path" not in page.content


def hostile_keys() -> dict[str, str]:
    """What a user may paste by mistake: none of it can log in."""
    key = ed25519.Ed25519PrivateKey.generate()
    protected = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.BestAvailableEncryption(b"secret-pass"),
    ).decode()
    public = SSHKey.generate().public
    return {"garbage": "hello, not a key", "public": public, "passphrase": protected,
            "oversized": "A" * (1024 * 1024)}  # fmt: skip


REASONS = {
    "garbage": "not an unencrypted",
    "public": "this is a public key: paste the private key",
    "passphrase": "protected by a passphrase",
    "oversized": "a private key is a few kB",
}


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_hostile_keys_are_refused_at_save_with_the_reason(live_server: Any, outsider: Any, kind):
    them = api_of(live_server, outsider)
    host = {"name": f"lg-{kind}", "kind": "ssh", "address": "10.0.0.9", "user": "bench"}

    answer = them.post("/api/v1/load-hosts", json={**host, "private_key": hostile_keys()[kind]})

    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "private_key"
    assert REASONS[kind] in answer.json()["message"]
    assert not LoadHost.objects.filter(name=host["name"]).exists()
    good = them.post("/api/v1/load-hosts", json={**host, "private_key": SSHKey.generate().private})
    assert good.status_code == 201, good.text


def test_a_passphrase_protected_key_stored_earlier_says_passphrase_at_use(
    db: None, sshd_server: PrivateSSHD
):
    host = LoadHost.objects.create(
        name="old", kind="ssh", address=sshd_server.host, port=sshd_server.port,
        user=sshd_server.user, private_key=hostile_keys()["passphrase"],
        host_key=sshd_server.host_key.public,
    )  # fmt: skip
    with pytest.raises(ExecutorError, match="protected by a passphrase"):
        executor_for(host).sysbench_version()
