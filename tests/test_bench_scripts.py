"""Every benchmark script under bench/ starts: its imports work outside Django's set-up
(they ran only when someone measured, so a broken import hid until then). bench/results/
is a record, not a pile: one file a benchmark (or a configuration the docs compare), each
in PERFORMANCE.md's figures, each saying when, at which commit and under what load it ran."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
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


def test_each_result_file_is_in_the_figures_and_each_file_they_name_is_kept():
    named = set(re.findall(r"`([a-z0-9_]+\.json)`", (ROOT / "docs" / "PERFORMANCE.md").read_text()))
    kept = {p.name for p in RESULTS.glob("*.json")}
    assert kept
    assert sorted(kept - named) == []  # a result PERFORMANCE.md does not quote
    assert sorted(named - kept) == []  # a figure whose file is gone


def test_a_result_file_says_when_at_which_commit_and_under_what_load(tmp_path: Path):
    from bench._harness import write_result

    out = tmp_path / "store_rate.json"
    out.write_text("{}")  # the last result, overwritten
    write_result(out, {"per_s": 38_057.0})
    record = json.loads(out.read_text())
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    assert record["commit"].removesuffix("+changes") == head
    assert datetime.fromisoformat(record["when"]) <= datetime.now()
    assert len(record["load_at_end"]) == 3
    assert record["per_s"] == 38_057.0
