"""Every benchmark script under bench/ starts: its imports work outside Django's set-up
(they ran only when someone measured, so a broken import hid until then)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p for p in (ROOT / "bench").glob("*.py") if 'if __name__ == "__main__":' in p.read_text()
)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_bench_script_starts_and_explains_itself(script: Path):
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: "), done.stdout
