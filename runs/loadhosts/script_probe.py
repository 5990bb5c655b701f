"""What a custom Lua script offers, asked of sysbench itself: the script's files are
written to a private temporary directory (0700, removed after), and sysbench runs a
probe there that loads the entry script (its `require`s find their siblings in the
working directory), prints the commands it defines, and then sysbench's `help` prints
the options the script declared. The output is read by runs/sysbench/script_options.py.

Loading a script runs its top-level code: the probe gets a bounded time, an environment
with nothing of the worker's (no passwords, no keys), and no standard input. Uploading a
script needs a permission for that reason (runs/services/scripts/luascripts.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from runs.loadhosts.executor import ExecutorError

PROBE_NAME = "benchdash-probe.lua"
PROBE_TIMEOUT_S = 20
_PROBE = """\
dofile({entry})
for name, _ in pairs(sysbench.cmdline.commands or {{}}) do
  print("benchdash-command: " .. name)
end
for _, name in ipairs({{"prepare", "cleanup", "check", "prewarm"}}) do
  if type(_G[name]) == "function" then print("benchdash-command: " .. name) end
end
"""


def script_env(workdir: str) -> dict[str, str]:
    """The environment a custom script runs in on the worker's machine: none of the
    worker's variables (its secrets live there), C messages, and Lua looking for modules
    in the script's own directory first."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "HOME": workdir,
        "LUA_PATH": f"{workdir}/?.lua;;",
    }


def write_files(directory: Path, files: Mapping[str, str]) -> None:
    """The script's files, flat, each created new (a name is never followed as a link)."""
    for name, text in files.items():
        if "/" in name or name.startswith("."):
            raise ExecutorError(f"{name!r} is not a plain file name")
        fd = os.open(directory / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)


def probe_script(files: Mapping[str, str], entry: str, sysbench: str = "sysbench") -> list[str]:
    """The probe's output lines (stdout, then stderr); ExecutorError when sysbench is
    missing or the probe overran its time."""
    workdir = Path(tempfile.mkdtemp(prefix="benchdash-probe-"))
    try:
        write_files(workdir, {**files, PROBE_NAME: _PROBE.format(entry=_lua_string(entry))})
        done = subprocess.run(
            [sysbench, PROBE_NAME, "help"],
            cwd=workdir,
            env=script_env(str(workdir)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=PROBE_TIMEOUT_S,
            check=False,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise ExecutorError(f"sysbench is not installed here ({sysbench} not found)") from None
    except subprocess.TimeoutExpired:
        raise ExecutorError(
            f"loading the script took longer than {PROBE_TIMEOUT_S} s: does its top level "
            "wait for something?"
        ) from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return done.stdout.splitlines() + done.stderr.splitlines()


def _lua_string(text: str) -> str:
    # The entry's name was checked (letters, digits, _ and -, .lua): quoting is a formality.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
