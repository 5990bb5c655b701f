"""A load host logs in with the key stored (encrypted) with it, never with a key file on
the worker that a user names: otherwise anyone could borrow a colleague's key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runs.loadhosts import ExecutorError, executor_for
from runs.models import LoadHost
from tests.api.test_permissions import api_of
from tests.servers import PrivateSSHD

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
