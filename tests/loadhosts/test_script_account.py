"""Uploaded code runs as nobody in particular (issue 46): option discovery and a local run
of a script whose top level tries to read benchdash's keys, a file of var/ that its mode
leaves open, and a file of the checkout, tries to write into the checkout, into var/ and
where every account may, and leaves children behind (one holding sysbench's output, one
that moved to a session of its own). It runs as the scripts' account, finds nothing,
writes nothing that stays, and no child of it is left; a probe that never ends is cut at
the limit with its whole group. Real sysbench, real files, the private MariaDB; as root,
as CI runs (the service switches accounts only as root)."""

from __future__ import annotations

import os
import pwd
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from runs.errors import ExecutorError
from runs.loadhosts import script_probe
from runs.loadhosts.local import LocalExecutor
from runs.loadhosts.script_probe import probe_script
from runs.sysbench.command import Connection, SysbenchCommand, build_command

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0,
        reason="only a service running as root switches to the scripts' account (CI runs as root)",
    ),
    pytest.mark.timeout(180),
]

CHECKOUT_FILE = Path(settings.BASE_DIR) / "README.md"  # 0644: the ACL alone keeps it
HOSTILE = """
local marker = [[MARKER]]
print("benchdash-uid: " .. io.popen("id -u"):read("*l"))
print("benchdash-home: " .. tostring(os.getenv("HOME")))
print("benchdash-secret: " .. tostring(os.getenv("BENCHDASH_SECRET_KEY")))
for _, path in ipairs({READS}) do
  local f = io.open(path, "r")
  if f then print("benchdash-read: " .. path .. " " .. #f:read("*a")); f:close()
  else print("benchdash-denied: " .. path) end
end
for _, path in ipairs({WRITES}) do
  local f = io.open(path, "w")
  if f then f:write(marker); f:close(); print("benchdash-wrote: " .. path)
  else print("benchdash-refused: " .. path) end
end
-- A child holding sysbench's stdout, one leaving for a session of its own, one there
-- with children of its own (orphaned in turn when it goes), and one whose pid is printed:
-- none may outlive the script.
os.execute("MARK=" .. marker .. " sleep 300 &")
local mark, quiet = "MARK=" .. marker, " >/dev/null 2>&1 &"
os.execute(mark .. " setsid sh -c 'echo $$ >alone.pid; exec sleep 300'" .. quiet)
os.execute(mark .. " setsid sh -c 'sleep 300 & echo $$ >chain.pid; sleep 300'" .. quiet)
-- Once they wrote their pid they left the group: the script ends only then.
for _, name in ipairs({"alone.pid", "chain.pid"}) do
  for _ = 1, 600 do
    local f = io.open(name) if f then f:close() print("benchdash-left-group: " .. name) break end
    os.execute("sleep 0.05")
  end
end
local child = io.popen("MARK=" .. marker .. " sleep 300 >/dev/null 2>&1 & echo $!")
print("benchdash-child: " .. child:read("*l"))
child:close()
function thread_init()
  con = sysbench.sql.driver():connect()
end
function event()
  con:query("SELECT 1")
end
"""


@pytest.fixture
def marker() -> Iterator[str]:
    mark = f"benchdash-test-{uuid.uuid4().hex}"
    yield mark
    for pid in marked_processes(mark):  # a failed test leaves nothing running either
        os.kill(pid, 9)


@pytest.fixture
def secrets_and_places(marker: str) -> Iterator[dict[str, list[Path]]]:
    """What the script tries to read (each readable by root) and where it tries to write."""
    var = Path(settings.VAR_DIR)
    open_in_var = var / f"{marker}-readable"
    open_in_var.write_text("an open file in a closed directory")
    open_in_var.chmod(0o644)
    reads = [var / "encryption_key", var / "secret_key", open_in_var, CHECKOUT_FILE]
    assert all(path.read_text() for path in reads)
    writes = [Path(settings.BASE_DIR) / f"{marker}-written", var / f"{marker}-written"]
    writes.append(Path("/tmp") / f"{marker}-written")
    yield {"reads": reads, "writes": writes}
    for path in (open_in_var, *writes):
        path.unlink(missing_ok=True)


def hostile(marker: str, places: dict[str, list[Path]]) -> str:
    return (
        HOSTILE.replace("MARKER", marker)
        .replace("{READS}", _lua_list(places["reads"]))
        .replace("{WRITES}", _lua_list(places["writes"]))
    )


def _lua_list(paths: list[Path]) -> str:
    return "{" + ", ".join(f"[[{path}]]" for path in paths) + "}"


def marked_processes(marker: str) -> list[int]:
    """Live processes whose environment carries the marker (a zombie has none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"MARK={marker}".encode() in environ:
            found.append(int(entry.name))
    return found


def none_left(marker: str) -> list[int]:
    """The marked processes still there once SIGKILL had the time to land (up to 10 s on
    a loaded machine): none, when the script's end took them all."""
    deadline = time.monotonic() + 10
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def assert_it_found_and_left_nothing(
    lines: list[str], marker: str, places: dict[str, list[Path]]
) -> None:
    account = pwd.getpwnam(settings.BENCHDASH_SCRIPT_ACCOUNT)
    assert f"benchdash-uid: {account.pw_uid}" in lines, lines
    assert "benchdash-secret: nil" in lines  # none of the service's environment
    assert not [line for line in lines if line.startswith("benchdash-read:")], lines
    for path in places["reads"]:
        assert f"benchdash-denied: {path}" in lines
    for path in places["writes"][:2]:  # the checkout and var/
        assert f"benchdash-refused: {path}" in lines
    for path in places["writes"]:  # and what it wrote in /tmp is gone with it
        assert not path.exists(), path
    assert "benchdash-left-group: alone.pid" in lines and "benchdash-left-group: chain.pid" in lines
    child = next(line.split(": ")[1] for line in lines if line.startswith("benchdash-child:"))
    assert int(child) > 0
    assert none_left(marker) == []


def test_discovery_runs_the_script_as_its_account_which_reads_and_leaves_nothing(
    marker, secrets_and_places
):
    lines = probe_script({"hostile.lua": hostile(marker, secrets_and_places)}, "hostile.lua")

    assert_it_found_and_left_nothing(lines, marker, secrets_and_places)
    home = next(line.split(": ")[1] for line in lines if line.startswith("benchdash-home:"))
    assert not Path(home).exists()  # its own directory, removed


def test_a_local_run_reads_its_own_password_and_nothing_else_and_leaves_nothing(
    marker, secrets_and_places, mariadb_server, mariadb_db
):
    connection = Connection(
        engine="mariadb",
        host="127.0.0.1",
        port=mariadb_server.port,
        socket="",
        database=mariadb_db,
        user=mariadb_server.user,
        password=mariadb_server.password,
    )

    def make(config_path: str) -> SysbenchCommand:
        return build_command(
            test="oltp_read_only",
            phase="run",
            options={"threads": 2, "time": 2},
            connection=connection,
            config_path=config_path,
            script_path=os.path.join(os.path.dirname(config_path), "hostile.lua"),
        )

    process = LocalExecutor().start(
        make, files={"hostile.lua": hostile(marker, secrets_and_places)}
    )
    workdir = Path(process.config_dir)
    account = pwd.getpwnam(settings.BENCHDASH_SCRIPT_ACCOUNT)
    assert (workdir.stat().st_uid, workdir.stat().st_mode & 0o777) == (account.pw_uid, 0o700)
    assert (workdir / "sysbench.cfg").stat().st_mode & 0o777 == 0o600
    lines = [line for line in process.lines(0.5) if line is not None]
    code = process.wait()

    assert code == 0, lines
    # It logged in with the password of its config file: its SELECTs were counted.
    total = next(line for line in lines if "total number of events:" in line)
    assert int(total.split(":")[1]) > 0
    # The top level ran in the main thread and in each of the 2 threads, the same each time.
    assert lines.count(f"benchdash-uid: {account.pw_uid}") == 3
    assert_it_found_and_left_nothing(lines, marker, secrets_and_places)
    assert not workdir.exists()


def test_a_probe_that_never_ends_is_cut_at_the_limit_with_its_whole_group(marker, monkeypatch):
    monkeypatch.setattr(script_probe, "PROBE_TIMEOUT_S", 2)
    script = (
        f'os.execute("MARK={marker} sleep 300 &")\n'
        f'os.execute("MARK={marker} setsid sleep 300 >/dev/null 2>&1 &")\n'
        f'os.execute("MARK={marker} sleep 300")  -- the top level waits for ever\n'
    )

    with pytest.raises(ExecutorError, match="longer than 2 s"):
        probe_script({"forever.lua": script}, "forever.lua")

    assert none_left(marker) == []


def test_a_var_directory_open_to_other_accounts_refuses_the_script(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    tmp_path.chmod(0o755)

    with pytest.raises(ExecutorError, match="open to other accounts"):
        probe_script({"fine.lua": "function event() end\n"}, "fine.lua")


def test_a_machine_without_the_account_refuses_the_script_naming_the_fix(settings):
    settings.BENCHDASH_SCRIPT_ACCOUNT = f"benchdash-absent-{uuid.uuid4().hex[:8]}"

    with pytest.raises(ExecutorError, match="run scripts/bootstrap"):
        probe_script({"fine.lua": "function event() end\n"}, "fine.lua")
