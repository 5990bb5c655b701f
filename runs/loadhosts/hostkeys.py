"""Pinning an SSH load host's key, the SSH side.

A host key is trusted only once a user has compared its fingerprint with the host's own
and confirmed it: `host_key_scan` returns what the host presents, and
`host_key_confirmed` the key to pin if the user typed its fingerprint. Both return plain
values; the service keeps them on the load host (runs/services/loadhosts.py).
"""

from __future__ import annotations

from django.conf import settings

from runs.errors import ExecutorError, InvalidInput
from runs.loadhosts import ssh
from runs.models import LoadHost


def host_key_scan(*, load_host: LoadHost) -> str:
    """Connect without logging in and return the key the host presents, as
    "<type> <base64>". Raises ExecutorError when the host cannot be reached."""
    _require_ssh(load_host)
    host = ssh.SSHHost.from_load_host(load_host, timeout=settings.BENCHDASH_SSH_TIMEOUT)
    host.check()  # a stored address no connection can use: InvalidInput, naming it
    try:
        return ssh.scan(host)
    except ssh.SSHError as e:
        raise ExecutorError(str(e)) from None


def host_key_confirmed(*, load_host: LoadHost, fingerprint: str) -> str:
    """The key last seen by a scan, if `fingerprint` is its fingerprint: the key to pin."""
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
    return load_host.seen_host_key


def _require_ssh(load_host: LoadHost) -> None:
    if load_host.kind != LoadHost.Kind.SSH:
        raise InvalidInput("kind", f"{load_host.name} is not an SSH host: it has no host key")
