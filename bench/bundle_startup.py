"""What a Lua bundle costs at the start of each sysbench process over SSH: the same code
staged as one file, as the TPC-C-shaped test bundle's four files, and as a bundle of
sixteen, each loaded by sysbench (`help`, which loads the entry script and every module it
requires, and connects to nothing).

    .venv/bin/python bench/bundle_startup.py [--repeats 15]

Starts a private sshd on a loopback port (tests/servers.py), as the SSH tests do, and
runs the SSH executor itself: connect, make sysbench's private directory, upload the
config file and the script's files over SFTP (stage), then start sysbench and read it to
its end (go). The shapes run in a shuffled order each repeat. Prints min / median / max of
each step and writes bench/results/bundle_startup.json.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

import django  # noqa: E402

from bench._harness import load, spread, write_result  # noqa: E402
from tests.servers import PrivateSSHD, SSHKey  # noqa: E402

BUNDLE = ROOT / "tests" / "fixtures" / "lua" / "tpcc_like"
_REQUIRE = re.compile(r'^require\("[a-z_]+"\)\n', re.MULTILINE)


def shapes() -> dict[str, tuple[str, dict[str, str]]]:
    """name → (entry, files): the same code as one file, as four, and as sixteen."""
    files = {p.name: p.read_text() for p in sorted(BUNDLE.glob("*.lua"))}
    entry = files["tpcc_like.lua"]
    modules = [
        files[n] for n in ("tpcc_like_common.lua", "tpcc_like_run.lua", "tpcc_like_check.lua")
    ]
    one = "\n".join([*modules, _REQUIRE.sub("", entry)])
    padding = {f"extra_{i:02d}.lua": f"-- module {i}\nextra_{i} = {{}}\n" for i in range(12)}
    sixteen_entry = "".join(f'require("extra_{i:02d}")\n' for i in range(12)) + entry
    return {
        "one_file": ("tpcc_like.lua", {"tpcc_like.lua": one}),
        "bundle_4_files": ("tpcc_like.lua", files),
        "bundle_16_files": ("tpcc_like.lua", {**files, **padding, "tpcc_like.lua": sixteen_entry}),
    }


def once(executor: Any, entry: str, files: dict[str, str]) -> tuple[float, float, list[str]]:
    from runs.sysbench.command import SysbenchCommand

    def make(config_path: str) -> SysbenchCommand:
        return SysbenchCommand(
            argv=["sysbench", f"--config-file={config_path}", f"./{entry}", "help"],
            config_text="",
        )

    started = time.perf_counter()
    staged = executor.stage(make, files)
    staged_at = time.perf_counter()
    process = staged.go()
    lines: list[str] = []
    while (more := process.read(1.0)) is not None:
        lines += more
    process.wait()
    ended = time.perf_counter()
    return (staged_at - started) * 1000, (ended - started) * 1000, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    django.setup()
    from runs.loadhosts import SSHExecutor
    from runs.loadhosts.ssh import SSHHost

    sshd = PrivateSSHD().start()
    try:
        key = SSHKey.generate()
        sshd.authorize(key)
        host = SSHHost(
            name="bench", address=sshd.host, port=sshd.port, user=sshd.user,
            private_key=key.private, host_key=sshd.host_key.public, timeout=10,
        )  # fmt: skip
        executor = SSHExecutor(host)
        cases = shapes()
        stage: dict[str, list[float]] = {name: [] for name in cases}
        total: dict[str, list[float]] = {name: [] for name in cases}
        for name, (entry, files) in cases.items():  # a warm-up of each: not counted
            _, _, lines = once(executor, entry, files)
            if not any(" options:" in line for line in lines):
                raise SystemExit(f"{name}: sysbench did not load the script: {lines[-5:]}")
        for _ in range(args.repeats):
            for name in random.sample(list(cases), len(cases)):
                entry, files = cases[name]
                staged_ms, total_ms, _ = once(executor, entry, files)
                stage[name].append(round(staged_ms, 1))
                total[name].append(round(total_ms, 1))
    finally:
        sshd.stop()
    figures = {
        "repeats": args.repeats,
        "cpu_count": os.cpu_count(),
        "load_at_start": load(),
        "stage_ms": {name: spread(values) for name, values in stage.items()},
        "stage_and_load_ms": {name: spread(values) for name, values in total.items()},
        "files": {name: len(files) for name, (_, files) in cases.items()},
    }
    for name in cases:
        s, t = figures["stage_ms"][name], figures["stage_and_load_ms"][name]
        print(
            f"{name:16} stage {s['min']:.0f} / {s['median']:.0f} / {s['max']:.0f} ms   "
            f"stage+load {t['min']:.0f} / {t['median']:.0f} / {t['max']:.0f} ms"
        )
    write_result(ROOT / "bench" / "results" / "bundle_startup.json", figures)


if __name__ == "__main__":
    main()
