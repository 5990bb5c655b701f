"""What a restart says of itself: its label (what it starts the server with) and its
stage of the batch's log (`Batch.stages`, kind "restart" or "restore", with its times,
and which target it started with which install and config, and the version it answered
with)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone


def restart_label(want: dict[str, Any]) -> str:
    parts = [f"install={want['install']}"] if want["install"] else []
    parts += [f"config={want['config']}"] if want["config"] else []
    parts += [f"{n}={v}" for n, v in want["settings"].items()]
    return " ".join(parts) or "the original config"


def restart_stage(
    kind: str,
    position: int,
    started: datetime,
    reason: str,
    *,
    output: str,
    error: str,
    server: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`server`: {target, install, config, settings, version} of the start (version ""
    when the server did not answer)."""
    now = timezone.now()
    return {
        **(server or {}),
        "kind": kind,
        "group": position,
        "dataset": [],
        "reason": reason,
        "started_at": started.isoformat(),
        "finished_at": now.isoformat(),
        "seconds": round((now - started).total_seconds(), 1),
        "exit_code": None,
        "ok": not error,
        "error": error,
        "output": output,
    }
