"""Links that leave benchdash: one base URL, which follows the port an instance is
started on (scripts/start's BENCHDASH_PORT) unless BENCHDASH_BASE_URL names another, and
which every outgoing link is built from."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from django.test import override_settings

from runs.services.links import absolute_reverse, absolute_url

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "benchdash" / "settings.py"


def settings_with(monkeypatch: pytest.MonkeyPatch, **environ: str) -> dict[str, object]:
    monkeypatch.delenv("BENCHDASH_BASE_URL", raising=False)
    monkeypatch.delenv("BENCHDASH_PORT", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))


def test_the_base_url_follows_the_port_an_instance_is_started_on(monkeypatch):
    moved = settings_with(monkeypatch, BENCHDASH_PORT="8123")
    assert moved["BENCHDASH_BASE_URL"] == "http://127.0.0.1:8123"
    assert settings_with(monkeypatch)["BENCHDASH_BASE_URL"] == "http://127.0.0.1:8000"


def test_a_base_url_given_wins_over_the_port(monkeypatch):
    given = settings_with(
        monkeypatch, BENCHDASH_PORT="8123", BENCHDASH_BASE_URL="https://bench.example.org/"
    )
    assert given["BENCHDASH_BASE_URL"] == "https://bench.example.org"


@override_settings(BENCHDASH_BASE_URL="http://127.0.0.1:8123/")
def test_an_outgoing_link_starts_with_the_base_url():
    assert absolute_url("/batches/3/results") == "http://127.0.0.1:8123/batches/3/results"
    assert absolute_reverse("run_live", 7) == "http://127.0.0.1:8123/runs/7/"
    with pytest.raises(ValueError, match="not a path from the site's root"):
        absolute_url("batches/3")


def test_every_outgoing_link_is_built_in_one_place():
    """Only runs/services/links.py reads the base URL, and no code or template writes an
    address of its own: a mail, a webhook or the report cannot point elsewhere."""
    readers, written = [], []
    for path in [*ROOT.joinpath("runs").rglob("*.py"), *ROOT.joinpath("templates").rglob("*")]:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if "settings.BENCHDASH_BASE_URL" in text:
            readers.append(path.relative_to(ROOT).as_posix())
        if re.search(r"https?://(127\.0\.0\.1|localhost)[:/]", text):
            written.append(path.relative_to(ROOT).as_posix())
    assert readers == ["runs/services/links.py"]
    assert written == []
