"""Private servers for the tests: databases, each on a free loopback port with its own data
directory in a temporary folder, removed when stopped; and an OpenSSH server as a remote
load host (PrivateSSHD).

The shared servers of the machine are never touched: tests change global settings
(innodb_flush_log_at_trx_commit, sync_binlog), exhaust connections, and need binary
logging on, which the shared MariaDB does not have."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import MySQLdb
import psycopg
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

START_TIMEOUT = 60.0


class ServerError(RuntimeError):
    pass


def free_port() -> int:
    """A port nobody listens on right now: the kernel picks it when binding to port 0."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_on_a_free_port(
    start: Callable[[], None], log: Path, *, on_taken: Callable[[], None] | None = None
) -> None:
    """Start a server on the free port it picks, again (at most 3 times) when another
    program took that port between free_port() and the server's bind: the log says so.
    `on_taken` runs before each new try (a server that keeps its port forgets it there)."""
    for attempt in range(3):
        try:
            start()
            return
        except ServerError:
            if attempt == 2 or "already in use" not in _tail(log):
                raise
            if on_taken is not None:
                on_taken()


def find_program(name: str, *patterns: str) -> str:
    """`name` on PATH, else the first match of `patterns` (Debian keeps mariadbd in
    /usr/sbin and initdb in /usr/lib/postgresql/NN/bin, off a normal PATH)."""
    found = shutil.which(name)
    if found:
        return found
    for pattern in patterns:
        matches = sorted(glob.glob(pattern), reverse=True)
        if matches:
            return matches[0]
    raise ServerError(f"{name} not found: run scripts/bootstrap")


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no {path})"


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _private_dir(prefix: str, server_pidfile: str, stop_signal: signal.Signals) -> Path:
    """A new temporary directory for a server, after stopping the servers that a killed
    test session left behind (their owner.pid names a process that is gone). The servers
    run in sessions of their own, so that Ctrl-C reaches pytest and not them, and so
    outlive a pytest that is killed before its teardown."""
    for old in Path(tempfile.gettempdir()).glob(prefix + "*"):
        owner = _read_pid(old / "owner.pid")
        if owner is None or _pid_alive(owner):
            continue
        server = _read_pid(old / server_pidfile)
        if server is not None and str(old) in _cmdline(server):
            os.kill(server, stop_signal)
            deadline = time.monotonic() + 30
            while _pid_alive(server) and time.monotonic() < deadline:
                time.sleep(0.2)
        shutil.rmtree(old, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=prefix))
    (path / "owner.pid").write_text(f"{os.getpid()}\n")
    return path


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _wait(what: str, ready: Any, process: subprocess.Popen[bytes] | None, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if ready():
            return
        if process is not None and process.poll() is not None:
            raise ServerError(f"{what} exited with {process.returncode}:\n{_tail(log)}")
        time.sleep(0.2)
    raise ServerError(f"{what} did not answer within {START_TIMEOUT}s:\n{_tail(log)}")


class PrivateMariaDB:
    """mariadbd with binary logging on and few connections, so that tests can exceed
    max_connections cheaply. `bench` / `bench-secret-<random>` may do what sysbench and benchdash's
    SET GLOBAL need; root has no password, over the Unix socket."""

    user = "bench"
    host = "127.0.0.1"

    def __init__(
        self,
        *,
        log_bin: bool = True,
        max_connections: int = 20,
        performance_schema: bool = False,
        also_on: str = "",
    ) -> None:
        self.log_bin = log_bin
        self.max_connections = max_connections
        self.performance_schema = performance_schema
        self.also_on = also_on  # a second address to listen on (a test network's)
        # Its own: tests that look for the password in every process of the machine must
        # not find another server's, of a test running beside them.
        self.password = f"bench-secret-{secrets.token_hex(4)}"
        self.port = 0
        self.dir = _private_dir("benchdash-mariadb-", "mariadb.pid", signal.SIGTERM)
        self.datadir = self.dir / "data"
        self.socket = str(self.dir / "mariadb.sock")
        self.error_log = self.dir / "error.log"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> PrivateMariaDB:
        os_user = pwd.getpwuid(os.getuid()).pw_name
        self._install(os_user)
        start_on_a_free_port(lambda: self._start_server(os_user), self.error_log)
        self._create_user()
        return self

    def _start_server(self, os_user: str, port: int = 0) -> None:
        self.port = port or free_port()
        argv = [
            find_program("mariadbd", "/usr/sbin/mariadbd"),
            "--no-defaults",
            f"--user={os_user}",  # mariadbd refuses to run as root unless told to
            f"--datadir={self.datadir}",
            f"--port={self.port}",
            "--bind-address=" + ",".join(filter(None, ["127.0.0.1", self.also_on])),
            f"--socket={self.socket}",
            f"--pid-file={self.dir / 'mariadb.pid'}",
            f"--log-error={self.error_log}",
            f"--max-connections={self.max_connections}",
            "--skip-name-resolve",
        ]
        if self.log_bin:
            argv += ["--log-bin=binlog", "--server-id=1"]
        if self.performance_schema:  # off by default in MariaDB; times every file I/O
            argv += ["--performance-schema=ON"]
        self._process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        _wait("mariadbd", self._answers, self._process, self.error_log)

    def _install(self, os_user: str) -> None:
        """mariadb-install-db, once more on a fresh data directory if it fails (it failed
        once, on a 2-core machine running four test processes and more beside them)."""
        try:
            self._install_once(os_user)
        except ServerError:
            shutil.rmtree(self.datadir, ignore_errors=True)
            self._install_once(os_user)

    def _install_once(self, os_user: str) -> None:
        install_log = self.dir / "install.log"
        with install_log.open("ab") as log:
            done = subprocess.run(
                [
                    find_program("mariadb-install-db"),
                    "--no-defaults",
                    f"--datadir={self.datadir}",
                    f"--user={os_user}",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
                timeout=120,
            )
        if done.returncode != 0:
            errors = [line for line in _tail(install_log, 400).splitlines() if "ERROR" in line]
            raise ServerError(
                "mariadb-install-db failed:\n" + "\n".join([*errors[-10:], _tail(install_log)])
            )

    def _answers(self) -> bool:
        try:
            self.root_connect().close()
        except MySQLdb.OperationalError:
            return False
        return True

    def root_connect(self, database: str | None = None) -> Any:
        """A MySQLdb connection as root over the Unix socket, autocommit on."""
        kwargs: dict[str, Any] = {"unix_socket": self.socket, "user": "root", "connect_timeout": 5}
        if database:
            kwargs["database"] = database
        db = MySQLdb.connect(**kwargs)
        db.autocommit(True)
        return db

    def connect(self, database: str | None = None) -> Any:
        """A MySQLdb connection as the bench user over TCP, as sysbench connects."""
        kwargs: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "connect_timeout": 5,
        }
        if database:
            kwargs["database"] = database
        return MySQLdb.connect(**kwargs)

    def execute(self, *statements: str) -> None:
        db = self.root_connect()
        try:
            cursor = db.cursor()
            for statement in statements:
                cursor.execute(statement)
        finally:
            db.close()

    def _create_user(self) -> None:
        # ALL on *.* holds what sysbench needs on any test database, and SUPER and
        # BINLOG ADMIN, which SET GLOBAL of innodb_flush_log_at_trx_commit and sync_binlog
        # need. Tests that want a weaker user create their own.
        statements = []
        for host in ("localhost", "127.0.0.1", "%"):
            account = f"'{self.user}'@'{host}'"
            statements += [
                f"CREATE USER IF NOT EXISTS {account} IDENTIFIED BY '{self.password}'",
                f"GRANT ALL PRIVILEGES ON *.* TO {account}",
            ]
        self.execute(*statements)

    def create_database(self, name: str) -> str:
        self.execute(f"CREATE DATABASE `{name}`")
        return name

    def drop_database(self, name: str) -> None:
        self.execute(f"DROP DATABASE IF EXISTS `{name}`")

    def stop_server(self) -> None:
        """Stop mariadbd (a clean shutdown), keeping its data for `start_again`."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def start_again(self) -> None:
        """Start the stopped server again, on the same port: a restart as clients see it."""
        self._start_server(pwd.getpwuid(os.getuid()).pw_name, port=self.port)

    def stop(self) -> None:
        self.stop_server()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivatePostgres:
    """initdb + pg_ctl on a free port, trust authentication, superuser `postgres`.

    PostgreSQL refuses to run as root: as root, the data directory belongs to the
    `postgres` OS user and the server runs as that user."""

    user = "postgres"
    host = "127.0.0.1"

    def __init__(self, bindir: Path | None = None) -> None:
        """`bindir`: another install's initdb, pg_ctl and postgres (a second version)."""
        self.port = 0
        # SIGQUIT: PostgreSQL's immediate shutdown.
        self.dir = _private_dir("benchdash-postgres-", "data/postmaster.pid", signal.SIGQUIT)
        self.datadir = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self._bindir = bindir or (
            Path(
                find_program(
                    "initdb", "/usr/lib/postgresql/*/bin/initdb", "/usr/local/pgsql/bin/initdb"
                )
            )
            .resolve()
            .parent
        )
        self._as: list[str] = []
        if os.getuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    @property
    def basedir(self) -> Path:
        """The install: bin/ holds its postgres."""
        return self._bindir.parent

    def _run(self, *argv: str, timeout: float = 120) -> None:
        done = subprocess.run(
            [*self._as, *argv],
            cwd=self.dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
            timeout=timeout,
        )
        if done.returncode != 0:
            output = done.stdout.decode(errors="replace")
            raise ServerError(f"{argv[0]} failed:\n{output}\n{_tail(self.log)}")

    def start(self) -> PrivatePostgres:
        self._run(
            str(self._bindir / "initdb"),
            "-D",
            str(self.datadir),
            "-U",
            self.user,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-locale",
            "--no-sync",
        )
        start_on_a_free_port(self._start_server, self.log)
        return self

    def _start_server(self, port: int = 0) -> None:
        self.port = port or free_port()
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir}"
        self._run(
            str(self._bindir / "pg_ctl"),
            "-D",
            str(self.datadir),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            str(int(START_TIMEOUT)),
            "start",
        )

    def connect(self, dbname: str = "postgres") -> psycopg.Connection[Any]:
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            dbname=dbname,
            connect_timeout=5,
            autocommit=True,
        )

    def stop_server(self) -> None:
        """`pg_ctl stop -m fast`, keeping the data for `start_again`."""
        if (self.datadir / "postmaster.pid").exists():
            with contextlib.suppress(ServerError, subprocess.TimeoutExpired):
                self._run(
                    str(self._bindir / "pg_ctl"),
                    "-D",
                    str(self.datadir),
                    "-m",
                    "fast",
                    "-w",
                    "stop",
                    timeout=60,
                )

    def start_again(self) -> None:
        """Start the stopped server again, on the same port: a restart as clients see it."""
        self._start_server(port=self.port)

    def benchdash_env(self, dbname: str) -> dict[str, str]:
        """A database of benchdash's own on this server, migrated, and the environment
        that points a benchdash process at it."""
        with self.connect() as db:
            db.execute(f'CREATE DATABASE "{dbname}"')  # a constant of the tests
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BENCHDASH_DB_HOST": self.host,
            "BENCHDASH_DB_PORT": str(self.port),
            "BENCHDASH_DB_NAME": dbname,
            "BENCHDASH_DB_USER": self.user,
            "BENCHDASH_DB_PASSWORD": "",
        }
        root = Path(__file__).resolve().parents[1]
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True
        )
        return env

    def stop(self) -> None:
        self.stop_server()
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateRedis:
    """redis-server on a free loopback port, without persistence: a restart loses every
    message and key, as a Redis without AOF or snapshots does. For the tests that stop or
    restart the broker; the shared Redis is never touched."""

    host = "127.0.0.1"

    def __init__(self, port: int = 0) -> None:
        """`port`: the port to start on, known before the start (0: a free one then)."""
        self.port = port
        self.dir = _private_dir("benchdash-redis-", "redis.pid", signal.SIGTERM)
        self.log = self.dir / "redis.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> PrivateRedis:
        """Start it, on the port it had if it ran before (clients keep their URL)."""
        start_on_a_free_port(self._start_server, self.log, on_taken=self._forget_port)
        return self

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _forget_port(self) -> None:
        self.port = 0  # another program took it: the next start picks another one

    def _start_server(self) -> None:
        self.port = self.port or free_port()
        argv = [
            find_program("redis-server", "/usr/bin/redis-server"),
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", str(self.dir),
            "--pidfile", str(self.dir / "redis.pid"),
            "--logfile", str(self.log),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
        ]  # fmt: skip
        self._process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        _wait("redis-server", self._answers, self._process, self.log)

    def _answers(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=2) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def command(self, *args: str) -> bytes:
        """One command in Redis's inline protocol; its raw answer."""
        with socket.create_connection((self.host, self.port), timeout=5) as s:
            s.sendall(" ".join(args).encode() + b"\r\n")
            return s.recv(65536)

    def kill(self) -> None:
        """Gone at once, with everything it held."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=10)

    def restart(self) -> None:
        """A restart without persistence: every queued message is lost."""
        self.kill()
        self.start()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# --- a private OpenSSH server: the remote load host of the SSH tests ----------------------


@dataclass(frozen=True)
class SSHKey:
    """An Ed25519 key pair: the private key as OpenSSH writes it, the public one as
    authorized_keys and known_hosts hold it."""

    private: str = field(repr=False)
    public: str

    @classmethod
    def generate(cls) -> SSHKey:
        key = ed25519.Ed25519PrivateKey.generate()
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        ).decode()
        public = (
            key.public_key()
            .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
            .decode()
        )
        return cls(private=private, public=public)

    def write(self, path: Path) -> Path:
        """The private key in a file of mode 0600, as ssh and sshd insist."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.private)
        Path(f"{path}.pub").write_text(self.public + "\n")
        return path


class PrivateSSHD:
    """/usr/sbin/sshd in the foreground on a free loopback port, with a temporary host key
    and an authorized_keys file of its own; logins as the user running the tests.

    As root (CI), sshd needs its privilege separation directory /run/sshd and
    `PermitRootLogin prohibit-password`; StrictModes is off because the key files live in
    a temporary directory. Each authorized key may carry a forced `command=`, which is how
    the tests make a load host without sysbench or with a low open-file limit."""

    host = "127.0.0.1"

    def __init__(self) -> None:
        self.port = 0
        self.dir = _private_dir("benchdash-sshd-", "sshd.pid", signal.SIGTERM)
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.host_key = SSHKey.generate()
        self.host_key_file = self.host_key.write(self.dir / "host_ed25519_key")
        self.authorized_keys = self.dir / "authorized_keys"
        self.authorized_keys.touch(mode=0o600)
        self.log = self.dir / "sshd.log"
        self._process: subprocess.Popen[bytes] | None = None

    def authorize(self, key: SSHKey, *, command: str = "") -> None:
        """Let `key` log in; with `command`, sshd runs it instead of what the client asks
        (the original request is in $SSH_ORIGINAL_COMMAND). sshd reads the file anew at
        every login, so keys can be added while it runs."""
        quoted = command.replace('"', '\\"')  # the only escape authorized_keys knows
        options = f'command="{quoted}" ' if command else ""
        with self.authorized_keys.open("a") as f:
            f.write(f"{options}{key.public}\n")

    def start(self) -> PrivateSSHD:
        if os.getuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        start_on_a_free_port(self._start_server, self.log)
        return self

    def _start_server(self) -> None:
        self.port = free_port()
        config = self.dir / "sshd_config"
        config.write_text(self._config())
        sshd = find_program("sshd", "/usr/sbin/sshd")  # sshd re-executes itself: absolute path
        self._process = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("ab"),
            start_new_session=True,
        )
        _wait("sshd", self._answers, self._process, self.log)

    def _config(self) -> str:
        return "\n".join(
            [
                f"ListenAddress {self.host}:{self.port}",
                f"HostKey {self.host_key_file}",
                f"PidFile {self.dir / 'sshd.pid'}",
                f"AuthorizedKeysFile {self.authorized_keys}",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "PermitUserEnvironment no",
                "AllowTcpForwarding no",
                "X11Forwarding no",
                "PrintMotd no",
                "MaxStartups 100",
                "MaxSessions 50",
                # Not internal-sftp: sshd refuses it to keys with a forced command.
                f"Subsystem sftp {self._sftp_server()}",
                "LogLevel VERBOSE",
                "",
            ]
        )

    def path_without(self, program: str) -> str:
        """A directory holding every program on this PATH but `program`, as links: a PATH
        for a login on which `program` is not installed."""
        bindir = self.dir / f"bin-without-{program}"
        if not bindir.exists():
            bindir.mkdir()
            for directory in os.environ.get("PATH", "").split(os.pathsep):
                for entry in Path(directory).glob("*") if directory else []:
                    link = bindir / entry.name
                    if entry.name != program and not link.exists() and os.access(entry, os.X_OK):
                        link.symlink_to(entry)
        return str(bindir)

    @staticmethod
    def _sftp_server() -> str:
        return find_program(
            "sftp-server",
            "/usr/lib/openssh/sftp-server",
            "/usr/libexec/openssh/sftp-server",
            "/usr/libexec/sftp-server",
        )

    def _answers(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=2) as s:
                return s.recv(64).startswith(b"SSH-2.0-")
        except OSError:
            return False

    def ssh(self, key_file: Path, command: str, timeout: float = 30) -> str:
        """Run `command` with the OpenSSH client, independently of benchdash's SSH code;
        returns its stdout and raises ServerError when it fails."""
        done = subprocess.run(
            [
                "ssh",
                "-i", str(key_file),
                "-p", str(self.port),
                "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null",
                "-o", "LogLevel=ERROR",
                f"{self.user}@{self.host}",
                command,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ServerError(f"ssh {command!r} exited with {done.returncode}: {done.stderr}")
        return done.stdout

    def restart(self) -> None:
        """A new sshd on the SAME port, same host key and keys: the load host back after
        its sshd was killed (the old one must be gone; sshd reuses the address)."""
        if self._process is not None and self._process.poll() is None:
            raise ServerError("sshd is still running: kill it before restarting it")
        sshd = find_program("sshd", "/usr/sbin/sshd")
        self._process = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(self.dir / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("ab"),
            start_new_session=True,
        )
        _wait("sshd", self._answers, self._process, self.log)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
