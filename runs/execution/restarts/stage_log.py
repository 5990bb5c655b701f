"""The stages of one target's restarts in the batch's log (`Batch.stages`): each one from
the moment it starts (status "running", no end yet: the live page says a restart is in
progress), finished in its place (status "finished"), saying which target started what
and the version it answered with (stages.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from runs.execution.restarts.stages import restart_stage
from runs.models import Batch, Target

logger = logging.getLogger(__name__)


class StageLog:
    def __init__(
        self, batch: Batch, target: Target | None, *, named: bool, save: Callable[[], None]
    ) -> None:
        self.batch, self.target, self.save = batch, target, save
        self.named = named  # a servers axis: each reason names its server
        self.opened: int | None = None  # the index of the stage running now

    def open(self, kind: str, position: int, started: Any, reason: str, *,
             want: dict[str, Any]) -> None:  # fmt: skip
        """The stage shown while it goes on; `finish` ends it in its place."""
        entry = self._entry(kind, position, started, reason, want=want)
        running = {**entry, "status": "running", "finished_at": None, "seconds": None, "ok": None}
        self.batch.stages = [*self.batch.stages, running]
        self.opened = len(self.batch.stages) - 1
        self.save()

    def finish(self, kind: str, position: int, started: Any, reason: str, *, output: str = "",
               error: str = "", want: dict[str, Any] | None = None, version: str = "",
               unlike: list[str] | None = None) -> None:  # fmt: skip
        """The stage finished, in place of its running one; a restore's `unlike`: the
        settings that did not come back as found."""
        entry = self._entry(kind, position, started, reason, output=output, error=error,
                            want=want, version=version)  # fmt: skip
        if unlike is not None:
            entry["unlike_found"] = unlike
        stages = list(self.batch.stages)
        at, self.opened = self.opened, None
        if at is not None and at < len(stages) and stages[at].get("status") == "running":
            stages[at] = entry
        else:
            stages.append(entry)
        self.batch.stages = stages
        self.save()
        logger.info("batch %s: %s %s (%s)", self.batch.pk, kind, reason, error or "ok")

    def _entry(self, kind: str, position: int, started: Any, reason: str, *, output: str = "",
               error: str = "", want: dict[str, Any] | None = None,
               version: str = "") -> dict[str, Any]:  # fmt: skip
        """The stage, with which target started what (`want`) and the version it answered
        with ("" when it did not)."""
        if self.named and self.target is not None:
            reason = f"{self.target.name}, {reason}"
        server = {"target": self.target.pk if self.target is not None else None,
                  "install": "", "config": "", "settings": {}, **(want or {}),
                  "version": version}  # fmt: skip
        entry = restart_stage(kind, position, started, reason, output=output, error=error,
                              server=server)  # fmt: skip
        return {**entry, "status": "finished"}
