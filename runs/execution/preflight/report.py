"""Preflight's record: each check it made, on which host, and what it found; and the
subject it checked (what a plan or a batch would run).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from runs.models import LoadHost, Target

OK, WARNING, FAILED = "ok", "warning", "failed"


@dataclass(frozen=True)
class PreflightCheck:
    host: str
    check: str
    status: str  # ok, warning or failed
    message: str


@dataclass
class PreflightReport:
    checks: list[PreflightCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.status != FAILED for check in self.checks)

    @property
    def failures(self) -> list[str]:
        return [f"{c.check} on {c.host}: {c.message}" for c in self.checks if c.status == FAILED]

    def add(self, host: str, check: str, status: str, message: str) -> None:
        self.checks.append(PreflightCheck(host=host, check=check, status=status, message=message))

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(check) for check in self.checks]}


@dataclass(frozen=True)
class Subject:
    """What a plan or a batch would run, as far as preflight is concerned."""

    load_host: LoadHost
    target: Target | None
    test: str
    has_script: bool
    max_threads: int
    server_settings: dict[str, list[str]]
    fileio_bytes: int | None  # the largest file-total-size, for fileio
    extra_load_hosts: tuple[LoadHost, ...] = ()  # each cell from these too
    prepared_statements: int = 0  # the most any cell holds on the server at once
    server_targets: tuple[Target, ...] = ()  # a servers axis: each checked as `target` is
    servers: dict[str, Any] = field(default_factory=dict)  # installs, configs (restarts)
