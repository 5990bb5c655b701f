"""The database server's machine as restarts use it, the same on the worker's own machine
and over a real sshd: files written whole and read from an offset, paths tested, a server
started detached that outlives the connection, stopped (and killed when it will not
stop), a command whose words no shell reads."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.loadhosts import ServerShell, server_shell, ssh
from runs.loadhosts.server_ssh import SSHShell

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(params=["local", "ssh"])
def shell(request) -> Iterator[ServerShell]:
    if request.param == "local":
        machine = server_shell(None)
    else:
        sshd, key = request.getfixturevalue("sshd_server"), request.getfixturevalue("ssh_key")
        machine = SSHShell(
            ssh.SSHHost(
                name="db-host",
                address=sshd.host,
                port=sshd.port,
                user=sshd.user,
                private_key=key.private,
                host_key=sshd.host_key.public,
            )
        )
    try:
        yield machine
    finally:
        machine.close()


def eventually(check, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_file_is_written_whole_read_from_an_offset_and_removed(shell, tmp_path: Path):
    include = str(tmp_path / "99-benchdash.cnf")
    shell.write_whole(include, "[mysqld]\n")
    shell.write_whole(include, "[mysqld]\nx = 1\n")

    assert shell.read(include) == "[mysqld]\nx = 1\n"
    assert shell.read(include, offset=9) == "x = 1\n"
    assert shell.size(include) == 15
    assert os.stat(include).st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["99-benchdash.cnf"]  # no temporary

    shell.write_whole(include, None)
    shell.write_whole(include, None)  # none there: nothing to remove
    assert shell.read(include) is None and shell.size(include) is None
    assert not tmp_path.joinpath("99-benchdash.cnf").exists()


def test_a_private_file_is_its_owners_alone_even_over_a_stale_temporary(shell, tmp_path: Path):
    options = tmp_path / "benchdash-options.cnf"
    stale = tmp_path / ".benchdash-options.cnf.benchdash"  # a crash's, readable by all
    stale.write_text("old")
    stale.chmod(0o666)
    owner = (65534, 65534) if os.getuid() == 0 else None  # nobody, when root may give it

    shell.write_whole(str(options), "[mysqld]\nkey_buffer_size = 8M\n", mode=0o600, owner=owner)

    stat = options.stat()
    assert stat.st_mode & 0o777 == 0o600
    assert (stat.st_uid, stat.st_gid) == (owner or (os.getuid(), os.getgid()))
    assert options.read_text() == "[mysqld]\nkey_buffer_size = 8M\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchdash-options.cnf"]


def test_paths_are_tested_and_the_first_program_found(shell, tmp_path: Path):
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    (tmp_path / "data").symlink_to(tmp_path)

    assert shell.test(str(tmp_path), "d") and not shell.test(str(script), "d")
    assert shell.test(str(script), "r") and not shell.test(str(script), "x")
    assert not shell.test(str(tmp_path / "missing"), "e")
    assert shell.first_program([str(tmp_path / "missing"), str(script), "/bin/sh"]) == "/bin/sh"
    assert shell.first_program([str(script)]) == ""
    assert shell.realpath(str(tmp_path / "data")) == str(tmp_path)
    assert shell.owner(str(tmp_path)) == (os.getuid(), os.getgid())
    assert shell.owner(str(tmp_path / "missing")) is None
    assert shell.uid() == os.getuid()


def test_a_server_started_detached_outlives_the_connection_then_stops(shell, tmp_path: Path):
    log = tmp_path / "server.log"
    pid = shell.start(
        ["sh", "-c", "echo listening; exec sleep 60"], cwd=str(tmp_path), log=str(log), owner=None
    )
    shell.close()  # over SSH: the channel and the connection that started it are gone

    assert shell.alive(pid)
    assert os.getsid(pid) == pid  # a session of its own
    eventually(lambda: (shell.read(str(log)) or "").strip() == "listening", "its output")
    shell.stop(pid, "TERM", 10)
    assert not shell.alive(pid)


def test_a_server_that_ignores_its_shutdown_is_killed_past_the_timeout(shell, tmp_path: Path):
    log = str(tmp_path / "server.log")
    pid = shell.start(
        ["sh", "-c", "trap '' TERM; echo deaf; exec sleep 60"],
        cwd=str(tmp_path),
        log=log,
        owner=None,
    )
    eventually(lambda: shell.read(log) == "deaf\n", "TERM ignored")  # not before: TERM kills
    started = time.monotonic()
    shell.stop(pid, "TERM", 1)
    assert not shell.alive(pid)
    assert time.monotonic() - started >= 1  # TERM was given its time first


def test_a_commands_words_are_never_read_by_a_shell(shell, tmp_path: Path):
    words = ["a b", "$(touch pwned)", "'q'", "`x`;y", "*"]

    code, output = shell.run(["printf", "%s|", *words], 10)

    assert (code, output) == (0, "a b|$(touch pwned)|'q'|`x`;y|*|")
    assert not Path("pwned").exists() and not (tmp_path / "pwned").exists()
    assert shell.run([str(tmp_path / "no-such-program")], 10)[0] != 0
    code, output = shell.run(["sleep", "5"], 0.5)
    assert code == -1 and "did not finish within 0.5 s" in output
