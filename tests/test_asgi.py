"""A web worker's start-up (benchdash/asgi.py): every view imported before the first
request, and what is loaded by then left out of the garbage collector's full collections,
which walked it for 120 ms about every other results page of a large batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_web_worker_starts_with_its_views_imported_and_what_it_loaded_frozen():
    code = (
        "import gc, sys, benchdash.asgi; "
        "print(gc.get_freeze_count(), 'runs.web.views.results' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchdash.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    frozen, views_imported = done.stdout.split()
    assert int(frozen) > 50_000, frozen  # Django, the REST framework, benchdash
    assert views_imported == "True"
