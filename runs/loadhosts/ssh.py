"""SSH to load hosts: connections with a pinned host key, short commands, file uploads.

Every connection checks the key the host presents against the one a user confirmed
(`LoadHost.host_key`): a host without a confirmed key, or with a different one, is
refused before anything is sent, so neither the private key's signature nor a
database password goes to an impostor. Every step has an explicit timeout.

No Django: the caller passes an `SSHHost`, built from a LoadHost.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import select
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import paramiko

from runs.errors import InvalidInput
from runs.sysbench.command import checked_host, checked_port

if TYPE_CHECKING:
    from runs.models import LoadHost

KEEPALIVE_S = 15  # keeps NAT and firewalls from dropping a quiet benchmark's connection
# An RSA-8192 key in OpenSSH format is about 6.5 kB: anything past 16 kB is not one key.
MAX_KEY_CHARS = 16_384


class SSHError(Exception):
    """Connecting or running a command failed; the message names the host and the cause."""


class HostKeyError(SSHError):
    """The host presented a key that is not the pinned one (or nothing is pinned yet)."""

    def __init__(self, message: str, presented: str) -> None:
        super().__init__(message)
        self.presented = presented  # "<type> <base64>"


@dataclass(frozen=True)
class SSHHost:
    name: str
    address: str
    port: int
    user: str
    private_key: str = dataclasses.field(repr=False)  # the key's text, or ""
    host_key: str  # the pinned "<type> <base64>", "" when none was confirmed
    timeout: float = 10.0  # for each of connect, banner, handshake, auth and a short command

    @classmethod
    def from_load_host(cls, load_host: LoadHost, timeout: float = 10.0) -> SSHHost:
        return cls(
            name=load_host.name,
            address=load_host.address,
            port=load_host.port,
            user=load_host.user,
            private_key=load_host.private_key,
            host_key=load_host.host_key,
            timeout=timeout,
        )

    @property
    def where(self) -> str:
        return f"{self.user}@{self.address}:{self.port}"

    def check(self) -> None:
        """Refuse an address or port no connection can use (a row stored before these
        checks existed may hold one), naming the field."""
        checked_host("address", self.address)
        checked_port("port", self.port)
        if self.private_key:
            try:
                private_key_parse(self.private_key)
            except KeyRefused as e:
                raise InvalidInput("private_key", str(e)) from None


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    stdout: str
    stderr: str


def fingerprint(host_key: str) -> str:
    """The SHA256 fingerprint of a "<type> <base64>" key, as `ssh-keygen -l` prints it."""
    try:
        blob = base64.b64decode(host_key.split()[1], validate=True)
    except (IndexError, ValueError):
        return "(not a valid key)"
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


def scan(host: SSHHost) -> str:
    """The key the host presents, as "<type> <base64>", without logging in."""
    transport = _handshake(host)
    try:
        return _key_line(transport.get_remote_server_key())
    finally:
        transport.close()


def connect(host: SSHHost) -> paramiko.Transport:
    """An authenticated connection to a host whose key matches the pinned one."""
    transport = _handshake(host)
    try:
        _check_host_key(host, _key_line(transport.get_remote_server_key()))
        transport.auth_timeout = host.timeout
        transport.auth_publickey(host.user, _private_key(host))
        transport.set_keepalive(KEEPALIVE_S)
        return transport
    except paramiko.AuthenticationException:
        transport.close()
        raise SSHError(
            f"{host.name} refused the key for {host.where}: add its public key to "
            f"~{host.user}/.ssh/authorized_keys there"
        ) from None
    except paramiko.SSHException as e:
        transport.close()
        raise SSHError(f"SSH to {host.name} ({host.where}) failed while logging in: {e}") from None
    except BaseException:
        transport.close()
        raise


def _handshake(host: SSHHost) -> paramiko.Transport:
    sock = _open_socket(host)
    transport = paramiko.Transport(sock)
    transport.banner_timeout = host.timeout
    transport.handshake_timeout = host.timeout
    if host.host_key:
        _prefer_key_type(transport, host.host_key.split()[0])
    try:
        transport.start_client(timeout=host.timeout)
        transport.get_remote_server_key()  # raises if the handshake did not finish in time
    except (paramiko.SSHException, OSError, EOFError) as e:
        transport.close()
        raise SSHError(
            f"no SSH handshake with {host.name} at {host.address}:{host.port} within "
            f"{host.timeout:g} s ({e or type(e).__name__}): is it an SSH server?"
        ) from None
    return transport


def _open_socket(host: SSHHost) -> socket.socket:
    where = f"{host.address}:{host.port}"
    try:
        host.check()
    except InvalidInput as e:
        raise SSHError(f"cannot reach {host.name}: {e}") from None
    try:
        return socket.create_connection((host.address, host.port), timeout=host.timeout)
    except ConnectionRefusedError:
        raise SSHError(
            f"cannot reach {host.name} at {where}: connection refused; is sshd running there "
            "and is the port right?"
        ) from None
    except TimeoutError:
        raise SSHError(
            f"cannot reach {host.name} at {where}: no answer within {host.timeout:g} s; "
            "check the address and the firewalls in between"
        ) from None
    except OSError as e:
        raise SSHError(f"cannot reach {host.name} at {where}: {e.strerror or e}") from None


def _prefer_key_type(transport: paramiko.Transport, key_type: str) -> None:
    # A host usually has several keys (ed25519, ecdsa, rsa): ask for the pinned one first,
    # so a host that did not change is not refused because another key was negotiated.
    wanted = ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa") if key_type == "ssh-rsa" else (key_type,)
    options = transport.get_security_options()
    available = list(options.key_types)
    options.key_types = [k for k in wanted if k in available] + [
        k for k in available if k not in wanted
    ]


def _check_host_key(host: SSHHost, presented: str) -> None:
    if not host.host_key:
        raise HostKeyError(
            f"the host key of {host.name} is not confirmed yet: it presents "
            f"{fingerprint(presented)}; compare it with the host's own "
            "(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) and confirm it",
            presented,
        )
    if presented.split()[:2] != host.host_key.split()[:2]:
        raise HostKeyError(
            f"the host key of {host.name} changed: expected {fingerprint(host.host_key)}, "
            f"got {fingerprint(presented)}; if the host was reinstalled, confirm the new key",
            presented,
        )


def _key_line(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.get_base64()}"


def _private_key(host: SSHHost) -> paramiko.PKey:
    if host.private_key:
        return _key_from_text(host)
    # Never a key file on the worker: any user could name a colleague's (issue 26).
    raise SSHError(f"{host.name} has no private key: paste one on its page")


def _key_from_text(host: SSHHost) -> paramiko.PKey:
    try:
        return private_key_parse(host.private_key)
    except KeyRefused as e:
        raise SSHError(f"the private key of {host.name}: {e}") from None


class KeyRefused(ValueError):
    """A pasted private key benchdash cannot log in with; the message says why in words
    and never repeats the key's text (it is a secret)."""


def private_key_parse(text: str) -> paramiko.PKey:
    """The key of `text`, or KeyRefused saying what is wrong with it: checked when a load
    host is saved, so a bad key is refused then and not at the first batch."""
    if len(text) > MAX_KEY_CHARS:
        raise KeyRefused(f"the key is {len(text):,} characters: a private key is a few kB")
    stripped = text.strip()
    if _looks_public(stripped):
        raise KeyRefused("this is a public key: paste the private key (the file without .pub)")
    key_classes: tuple[Any, ...] = (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey)
    for key_class in key_classes:
        try:
            return key_class.from_private_key(io.StringIO(stripped + "\n"))
        except paramiko.PasswordRequiredException:
            raise KeyRefused(_ENCRYPTED_KEY) from None
        except (paramiko.SSHException, ValueError, TypeError, IndexError):
            continue
    if "ENCRYPTED" in stripped.split("\n", 2)[0] or "Proc-Type: 4,ENCRYPTED" in stripped:
        raise KeyRefused(_ENCRYPTED_KEY)
    raise KeyRefused("it is not an unencrypted Ed25519, ECDSA or RSA key in OpenSSH or PEM format")


_ENCRYPTED_KEY = (
    "this key is protected by a passphrase: benchdash needs an unencrypted key "
    "(remove the passphrase of a copy with ssh-keygen -p -N '' -f COPY)"
)


def _looks_public(text: str) -> bool:
    """An authorized_keys line, or a PEM/RFC 4716 public key block."""
    first = text.split("\n", 1)[0]
    return first.startswith(("ssh-", "ecdsa-", "sk-")) or "PUBLIC KEY" in first


# --- commands and files ------------------------------------------------------------------


class ChannelReader:
    """Reads a channel's stdout and stderr as they arrive, split into lines."""

    def __init__(self, channel: paramiko.Channel) -> None:
        self.channel = channel
        self._out = b""
        self._err = b""

    @property
    def done(self) -> bool:
        """The remote end closed its output and everything was read."""
        channel = self.channel
        ended = channel.eof_received or channel.closed
        return bool(ended) and not channel.recv_ready() and not channel.recv_stderr_ready()

    def pump(self, timeout: float) -> bool:
        """Wait up to `timeout` for output and take all there is; whether any came."""
        # Not for a timeout of 0: select would give the channel a pipe that paramiko's
        # thread then writes to at every packet, to say nothing more than recv_ready.
        if timeout > 0 and not (self.channel.recv_ready() or self.channel.recv_stderr_ready()):
            select.select([self.channel], [], [], timeout)
        got = False
        while self.channel.recv_ready():
            self._out += self.channel.recv(65536)
            got = True
        while self.channel.recv_stderr_ready():
            self._err += self.channel.recv_stderr(65536)
            got = True
        return got

    def stdout_bytes(self) -> bytes:
        """What came on stdout since the last call, as it came."""
        out, self._out = self._out, b""
        return out

    def stdout_lines(self, final: bool = False) -> list[str]:
        lines, self._out = _split(self._out, final)
        return lines

    def stderr_lines(self, final: bool = False) -> list[str]:
        lines, self._err = _split(self._err, final)
        return lines

    def exit_code(self, timeout: float) -> int:
        """The remote command's exit status; -1 when the connection ended without one."""
        if not self.channel.status_event.wait(timeout):
            return -1
        return int(self.channel.exit_status)


def _split(buffer: bytes, final: bool) -> tuple[list[str], bytes]:
    *complete, rest = buffer.split(b"\n")
    if final and rest:
        complete, rest = [*complete, rest], b""
    return [raw.decode("utf-8", errors="replace").rstrip("\r") for raw in complete], rest


def open_command(transport: paramiko.Transport, command: str, timeout: float) -> ChannelReader:
    """Start `command` (a shell string made only of constants and shlex-quoted values)."""
    try:
        channel = transport.open_session(timeout=timeout)
        channel.exec_command(command)
    except (paramiko.SSHException, OSError, EOFError) as e:
        raise SSHError(f"cannot start a command over SSH: {e}") from None
    return ChannelReader(channel)


def run(
    host: SSHHost, transport: paramiko.Transport, command: str, timeout: float | None = None
) -> CommandResult:
    """Run a command to its end, within `timeout` (the host's, for a short command)."""
    reader = open_command(transport, command, host.timeout)
    reader.channel.shutdown_write()
    limit = host.timeout if timeout is None else timeout
    deadline = time.monotonic() + limit
    out: list[str] = []
    err: list[str] = []
    while not reader.done:
        if time.monotonic() > deadline:
            reader.channel.close()
            raise SSHError(f"a command on {host.name} did not finish within {limit:g} s")
        reader.pump(0.2)
        out += reader.stdout_lines()
        err += reader.stderr_lines()
    out += reader.stdout_lines(final=True)
    err += reader.stderr_lines(final=True)
    code = reader.exit_code(max(0.1, deadline - time.monotonic()))
    reader.channel.close()
    return CommandResult(exit_code=code, stdout="\n".join(out), stderr="\n".join(err))


def upload(host: SSHHost, transport: paramiko.Transport, path: str, content: str) -> None:
    """Create `path` with mode 0600 before a byte of `content` is written; never overwrite."""
    upload_all(host, transport, {path: content})


def upload_all(host: SSHHost, transport: paramiko.Transport, files: Mapping[str, str]) -> None:
    """`upload` for several files through one SFTP session: a bundle's files cost one
    session's round trips, not one each (docs/performance/bundles.md)."""
    try:
        sftp = transport.open_sftp_client()
        if sftp is None:
            raise SSHError(f"{host.name} offers no SFTP")
        try:
            sftp.get_channel().settimeout(host.timeout)
            for path, content in files.items():
                with sftp.open(path, "wx") as f:
                    f.chmod(0o600)
                    f.write(content.encode())
        finally:
            sftp.close()
    except (paramiko.SSHException, OSError, EOFError) as e:
        raise SSHError(f"cannot upload a file to {host.name} over SFTP: {e}") from None
