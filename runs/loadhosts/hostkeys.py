"""Pinning an SSH load host's key.

A host key is trusted only once a user has compared its fingerprint with the host's own
and confirmed it: `loadhost_scan` shows what the host presents, and
`loadhost_confirm_host_key` pins that key if the user typed the same fingerprint.
"""

from __future__ import annotations

from django.conf import settings

from runs.errors import InvalidInput
from runs.loadhosts import ExecutorError, ssh
from runs.models import LoadHost


def loadhost_scan(*, load_host: LoadHost) -> str:
    """Connect without logging in, keep the presented key as seen, return its fingerprint
    as OpenSSH prints it (SHA256:...). Raises ExecutorError when the host cannot be reached.
    """
    _require_ssh(load_host)
    host = _ssh_host(load_host)
    host.check()  # a stored address no connection can use: InvalidInput, naming it
    try:
        presented = ssh.scan(host)
    except ssh.SSHError as e:
        raise ExecutorError(str(e)) from None
    load_host.seen_host_key = presented
    load_host.save(update_fields=["seen_host_key"])
    return ssh.fingerprint(presented)


def loadhost_confirm_host_key(*, load_host: LoadHost, fingerprint: str) -> LoadHost:
    """Pin the key last seen by a scan, if `fingerprint` is its fingerprint."""
    _require_ssh(load_host)
    if not load_host.seen_host_key:
        raise InvalidInput("fingerprint", f"scan {load_host.name} first: no key seen yet")
    seen = ssh.fingerprint(load_host.seen_host_key)
    given = fingerprint.strip()
    if not given.startswith("SHA256:"):
        given = f"SHA256:{given}"
    if given != seen:
        raise InvalidInput(
            "fingerprint",
            f"{fingerprint.strip()!r} is not the fingerprint of the key {load_host.name} "
            f"presented ({seen}); scan again, and compare with `ssh-keygen -lf` of the "
            "host's key file on the host itself",
        )
    load_host.host_key = load_host.seen_host_key
    load_host.save(update_fields=["host_key"])
    return load_host


def _require_ssh(load_host: LoadHost) -> None:
    if load_host.kind != LoadHost.Kind.SSH:
        raise InvalidInput("kind", f"{load_host.name} is not an SSH host: it has no host key")


def _ssh_host(load_host: LoadHost) -> ssh.SSHHost:
    return ssh.SSHHost.from_load_host(load_host, timeout=settings.BENCHDASH_SSH_TIMEOUT)
