"""A load host's key and facts as its page and the API ask for them, against a real
OpenSSH sshd: the SSH work returns plain values (runs/loadhosts/) and the service keeps
them on the host. The fingerprints are checked with OpenSSH's own ssh-keygen."""

from __future__ import annotations

from typing import Any

import pytest

from runs.errors import InvalidInput
from runs.loadhosts import executor_for, ssh
from runs.services import loadhosts
from tests.loadhosts.test_ssh import fingerprint_by_openssh
from tests.servers import SSHKey

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_a_scan_shows_the_fingerprint_openssh_prints(make_ssh_host, sshd_server, tmp_path):
    host = make_ssh_host("loadhost-new", host_key="")

    shown = loadhosts.load_host_scan(load_host=host)

    assert shown == fingerprint_by_openssh(sshd_server.host_key.public, tmp_path)
    host.refresh_from_db()
    assert host.seen_host_key == sshd_server.host_key.public
    assert host.host_key == "", "a scan alone trusts nothing"


def test_confirming_the_scanned_fingerprint_pins_the_key(make_ssh_host, sshd_server):
    host = make_ssh_host("loadhost-new", host_key="")
    shown = loadhosts.load_host_scan(load_host=host)

    loadhosts.load_host_pin_key(load_host=host, fingerprint=shown)

    host.refresh_from_db()
    assert host.host_key == sshd_server.host_key.public
    assert (executor_for(host).sysbench_version() or "").startswith("sysbench 1.0")


def test_a_fingerprint_that_was_not_shown_is_not_confirmed(make_ssh_host):
    host = make_ssh_host("loadhost-new", host_key="")
    loadhosts.load_host_scan(load_host=host)
    other = SSHKey.generate().public

    with pytest.raises(InvalidInput) as refused:
        loadhosts.load_host_pin_key(load_host=host, fingerprint=ssh.fingerprint(other))

    assert refused.value.field == "fingerprint"
    host.refresh_from_db()
    assert host.host_key == ""


def test_confirming_before_any_scan_is_refused(make_ssh_host):
    host = make_ssh_host("loadhost-new", host_key="")

    with pytest.raises(InvalidInput, match="scan loadhost-new first"):
        loadhosts.load_host_pin_key(load_host=host, fingerprint="SHA256:abc")


def test_refreshed_facts_are_kept_on_the_host(ssh_host):
    facts: dict[str, Any] = loadhosts.load_host_refresh_facts(load_host=ssh_host)

    assert facts["host"] == "loadhost-1" and facts["sysbench_version"]
    ssh_host.refresh_from_db()
    assert ssh_host.facts == facts and ssh_host.facts_at is not None
