"""A load host's key and facts, asked for from its page and the API: the SSH work happens
in runs/loadhosts/, which returns plain values, and what it found is kept here.

A host key is trusted only once a user has compared its fingerprint with the host's own
and confirmed it: `load_host_scan` keeps the key the host presents as seen and returns its
fingerprint, `load_host_pin_key` pins that key if the user typed the same fingerprint.
"""

from __future__ import annotations

from runs.execution.environment import load_host_read_facts
from runs.loadhosts import hostkeys, ssh
from runs.models import LoadHost


def load_host_scan(*, load_host: LoadHost) -> str:
    """Keep the key the host presents as seen; return its fingerprint as OpenSSH prints
    it (SHA256:...). Raises ExecutorError when the host cannot be reached, InvalidInput
    when it is not an SSH host or its stored address cannot be used."""
    load_host.seen_host_key = hostkeys.host_key_scan(load_host=load_host)
    load_host.save(update_fields=["seen_host_key"])
    return ssh.fingerprint(load_host.seen_host_key)


def load_host_pin_key(*, load_host: LoadHost, fingerprint: str) -> LoadHost:
    """Pin the key last seen by a scan, if `fingerprint` is its fingerprint (InvalidInput
    if not)."""
    load_host.host_key = hostkeys.host_key_confirmed(load_host=load_host, fingerprint=fingerprint)
    load_host.save(update_fields=["host_key"])
    return load_host


def load_host_refresh_facts(*, load_host: LoadHost) -> dict[str, object]:
    """Read the host's facts again and keep them on it; raises ExecutorError when it
    cannot be reached."""
    return load_host_read_facts(load_host=load_host)


def host_key_fingerprint(host_key: str) -> str:
    """The SHA256 fingerprint of a "<type> <base64>" key, as `ssh-keygen -l` prints it."""
    return ssh.fingerprint(host_key)
