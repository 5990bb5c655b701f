"""Posting to a plan's webhook, to public addresses only.

A webhook URL is typed by any user, and what it answered is stored and shown: pointed at
loopback, the cloud's metadata service (169.254.169.254) or the office network, it would
make benchdash a port scanner with a read-out. So the host is resolved, every address it
resolves to must be public, and the POST goes to the very address that was checked (a
second lookup could answer differently). Redirects are not followed: they could lead
anywhere. The same check runs when a plan is saved, and again at each send.

An administrator may allow non-public addresses with BENCHDASH_WEBHOOK_ALLOW_PRIVATE
(a chat server on the office network).
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.parse
from dataclasses import dataclass

from django.conf import settings

from runs.errors import InvalidInput

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebhookError(Exception):
    """Why a webhook was not sent, in words for the user."""


@dataclass(frozen=True)
class Destination:
    scheme: str
    host: str
    port: int
    path: str
    address: str  # the checked IP address the POST goes to


def webhook_check(url: str) -> None:
    """At save: an InvalidInput on notify_webhook when the URL could not be sent to."""
    try:
        destination(url)
    except WebhookError as e:
        raise InvalidInput("notify_webhook", str(e)) from e


def webhook_post(url: str, body: bytes, *, timeout: float) -> tuple[int, str]:
    """POST a JSON body; returns the HTTP status and reason. Raises WebhookError when the
    URL is refused, OSError when the host cannot be reached."""
    to = destination(url)
    connection = _connection(to, timeout)
    try:
        connection.request(
            "POST",
            to.path,
            body=body,
            headers={"Content-Type": "application/json", "User-Agent": "benchdash"},
        )
        response = connection.getresponse()
        return response.status, response.reason
    finally:
        connection.close()


def destination(url: str) -> Destination:
    parts = urllib.parse.urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise WebhookError(f"{scheme or 'no'} scheme: http(s) only")
    try:
        host, port = parts.hostname, parts.port or (443 if scheme == "https" else 80)
    except ValueError as e:
        raise WebhookError(f"the URL has no valid port: {e}") from e
    if not host:
        raise WebhookError("the URL has no host")
    address = _public_address(host, port)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(scheme=scheme, host=host, port=port, path=path, address=address)


def _public_address(host: str, port: int) -> str:
    """The first address `host` resolves to, once all of them were found public."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise WebhookError(f"{host} does not resolve: {e}") from e
    addresses = [str(info[4][0]) for info in found]
    if not settings.BENCHDASH_WEBHOOK_ALLOW_PRIVATE:
        for address in addresses:
            kind = _not_public(ipaddress.ip_address(address.split("%")[0]))
            if kind:
                shown = host if host == address else f"{host} ({address})"
                article = "an" if kind[0] in "aeiou" else "a"
                raise WebhookError(
                    f"{shown} is {article} {kind} address: webhooks go to public addresses only "
                    "(an administrator may allow others with BENCHDASH_WEBHOOK_ALLOW_PRIVATE)"
                )
    return addresses[0]


# NAT64's well-known prefix: the IPv4 address is the last 32 bits (RFC 6052).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _not_public(ip: IPAddress) -> str:
    """What kind of non-public address `ip` is; empty when it is public. An IPv6 address
    that carries an IPv4 one (IPv4-mapped, 6to4, Teredo, NAT64) is judged by the IPv4
    addresses it leads to as well: 2002:7f00:1:: is 127.0.0.1."""
    if isinstance(ip, ipaddress.IPv6Address):
        for embedded in _embedded_ipv4(ip):
            kind = _not_public(embedded)
            if kind:
                return kind
    for kind in ("loopback", "unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return "" if ip.is_global else "non-public"


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    embedded = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
    if ip in _NAT64:
        embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return [address for address in embedded if address is not None]


def _connection(to: Destination, timeout: float) -> http.client.HTTPConnection:
    if to.scheme == "https":
        return _PinnedHTTPSConnection(to.host, to.port, to.address, timeout=timeout)
    return _PinnedHTTPConnection(to.host, to.port, to.address, timeout=timeout)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the checked address; the Host header still names the host."""

    def __init__(self, host: str, port: int, address: str, *, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to the checked address; TLS checks the certificate against the host name."""

    def __init__(self, host: str, port: int, address: str, *, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)  # type: ignore[attr-defined]
