"""Pinning an SSH load host's key from its page, against the private sshd: the page shows
the fingerprint the host presents, and pins the key only when the user gives the same."""

from __future__ import annotations

import re

import pytest

from runs.loadhosts import ssh
from runs.models import LoadHost
from tests.servers import SSHKey

pytestmark = pytest.mark.slow


def test_the_fingerprint_is_shown_and_pinned_once_confirmed(client_in, user, sshd_server):
    key = SSHKey.generate()
    sshd_server.authorize(key)
    host = LoadHost.objects.create(
        name="lh-1", kind="ssh", address=sshd_server.host, port=sshd_server.port,
        user=sshd_server.user, private_key=key.private, created_by=user,
    )  # fmt: skip
    expected = ssh.fingerprint(sshd_server.host_key.public)

    page = client_in.post(f"/load-hosts/{host.pk}/scan").content.decode()
    found = re.search(r'class="mono token-once">([^<]+)<', page)
    assert found is not None
    shown = found[1]
    assert shown == expected and "Pin this key" in page
    assert "BEGIN" not in page  # the private key never comes back

    wrong = client_in.post(f"/load-hosts/{host.pk}/confirm", {"fingerprint": "SHA256:nope"})
    assert "is not the fingerprint" in wrong.content.decode()
    host.refresh_from_db()
    assert host.host_key == ""

    client_in.post(f"/load-hosts/{host.pk}/confirm", {"fingerprint": shown})
    host.refresh_from_db()
    assert host.host_key == sshd_server.host_key.public
    assert expected in client_in.get(f"/load-hosts/{host.pk}/").content.decode()


def test_an_unreachable_host_is_said_plainly(client_in, user, free_tcp_port):
    host = LoadHost.objects.create(name="gone", kind="ssh", address="127.0.0.1",
                                   port=free_tcp_port, user="x", created_by=user)  # fmt: skip
    page = client_in.post(f"/load-hosts/{host.pk}/scan").content.decode()
    assert 'class="error-box"' in page and "127.0.0.1" in page


@pytest.fixture
def free_tcp_port() -> int:
    from tests import servers

    return servers.free_port()
