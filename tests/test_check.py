"""The whole check (scripts/test, which CI runs) checks all it says it checks: ruff, the
format, mypy and the page scripts' lint (scripts/lint-js) beside the tests; and the page
scripts pass that lint as they are."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint_steps() -> str:
    """The body of scripts/test's lint function: what runs beside pytest."""
    text = (ROOT / "scripts/test").read_text()
    found = re.search(r"^lint\(\) \{\n(.*?)^\}", text, flags=re.S | re.M)
    assert found, "scripts/test has no lint() function"
    return found.group(1)


def test_the_check_runs_every_linter_it_names():
    steps = _lint_steps()
    for step in ('"$BIN/ruff" check', '"$BIN/ruff" format --check', '"$BIN/mypy" .'):
        assert step in steps
    assert '"$ROOT/scripts/lint-js"' in steps
    assert "lint >" in (ROOT / "scripts/test").read_text()  # and the function is called


def test_the_page_scripts_pass_eslint_and_the_type_check():
    done = subprocess.run(
        [str(ROOT / "scripts/lint-js")], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
