"""Load hosts as separate machines on this one: network namespaces on a bridge of their
own, each with an sshd inside.

Every namespace sees only its loopback and its veth leg on the test's bridge, whose
addresses come from 198.18.0.0/15, the range set aside for benchmarking network devices
(RFC 2544): nothing outside the machine can be reached or confused with it. The bridge's
own address is how the namespaces reach servers of the root namespace (a private MariaDB
listening there too). Creating namespaces needs CAP_NET_ADMIN: `TestNetwork.available()`
says why not where it cannot.
"""

from __future__ import annotations

import secrets
import subprocess
from dataclasses import dataclass

from tests.servers import PrivateSSHD, ServerError, _wait, find_program


def _ip(*argv: str) -> None:
    done = subprocess.run(["ip", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ServerError(f"ip {' '.join(argv)}: {done.stderr.strip()}")


def _used_subnets() -> set[int]:
    """The third octets of 198.18.x.0/24 already on this machine (another test run)."""
    shown = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    return {int(word.split(".")[2]) for word in shown.split() if word.startswith("198.18.")}


class NamespaceSSHD(PrivateSSHD):
    """sshd inside a network namespace, on the namespace's address."""

    def __init__(self, namespace: str, address: str) -> None:
        super().__init__()
        self.namespace = namespace
        self.host = address

    def _start_server(self) -> None:
        self.port = 22
        config = self.dir / "sshd_config"
        config.write_text(self._config())
        sshd = find_program("sshd", "/usr/sbin/sshd")
        self._process = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, sshd, "-D", "-e", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("ab"),
            start_new_session=True,
        )
        _wait("sshd in a namespace", self._answers, self._process, self.log)


@dataclass
class NamespaceHost:
    """One load host: a namespace, its address on the bridge, its sshd."""

    namespace: str
    address: str
    sshd: NamespaceSSHD

    def run(self, *argv: str, timeout: float = 30) -> str:
        """A command inside the namespace, as the host itself would run it."""
        done = subprocess.run(
            ["ip", "netns", "exec", self.namespace, *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise ServerError(f"{argv} in {self.namespace}: {done.stderr.strip()}")
        return done.stdout


class TestNetwork:
    """A bridge in the root namespace and load hosts as namespaces attached to it."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self) -> None:
        self.tag = secrets.token_hex(3)  # interface names hold 15 characters
        free = sorted(set(range(1, 255)) - _used_subnets())
        if not free:
            raise ServerError("no free 198.18.x.0/24 subnet for a test network")
        self.subnet = free[secrets.randbelow(len(free))]
        self.bridge = f"bd{self.tag}br"
        self.address = f"198.18.{self.subnet}.1"  # the root namespace's, on the bridge
        self.hosts: list[NamespaceHost] = []

    @staticmethod
    def available() -> str:
        """Empty when namespaces can be made here, else why not."""
        probe = f"bdprobe{secrets.token_hex(2)}"
        try:
            _ip("netns", "add", probe)
        except (ServerError, FileNotFoundError) as e:
            return f"network namespaces cannot be created here ({e})"
        _ip("netns", "del", probe)
        return ""

    def start(self) -> TestNetwork:
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.address}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        return self

    def add_host(self) -> NamespaceHost:
        index = len(self.hosts) + 1
        namespace = f"bd{self.tag}h{index}"
        outside, inside = f"bd{self.tag}v{index}", f"bd{self.tag}n{index}"
        address = f"198.18.{self.subnet}.{10 + index}"
        _ip("netns", "add", namespace)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", namespace)
        _ip("link", "set", outside, "master", self.bridge, "up")
        _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", inside)
        _ip("-n", namespace, "link", "set", inside, "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        sshd = NamespaceSSHD(namespace, address)
        sshd.start()
        host = NamespaceHost(namespace=namespace, address=address, sshd=sshd)
        self.hosts.append(host)
        return host

    def stop(self) -> None:
        for host in self.hosts:
            host.sshd.stop()
            # Whatever still runs in the namespace (a sysbench a test left) goes with it.
            pids = subprocess.run(
                ["ip", "netns", "pids", host.namespace], capture_output=True, text=True
            ).stdout.split()
            for pid in pids:
                subprocess.run(["kill", "-9", pid], check=False)
            subprocess.run(["ip", "netns", "del", host.namespace], check=False)
        subprocess.run(["ip", "link", "del", self.bridge], check=False, capture_output=True)
