"""Starting sysbench for a batch on its load host: the command of each phase with the
target's connection in its config file, the plan's custom Lua script beside that file,
and fileio's working directory, which lives from prepare through the runs to cleanup."""

from __future__ import annotations

import os
from typing import Any

from runs import targets
from runs.frozen import FrozenPlan
from runs.loadhosts import Executor, ExecutorError, SysbenchProcess
from runs.models import Batch, Status
from runs.sysbench.command import build_command
from runs.sysbench.options import is_sql_test

SCRIPT_NAME = "script.lua"  # a plan's custom Lua script, in sysbench's private directory


class BatchAborted(Exception):
    """Nothing more of this batch can run (e.g. sysbench is missing); says why."""


class Starter:
    """How one batch starts sysbench on its load host."""

    def __init__(self, batch: Batch, executor: Executor) -> None:
        self.batch = batch
        self.executor = executor
        self.plan = FrozenPlan.from_params(batch.params)
        self.test = self.plan.test
        self.sql = is_sql_test(self.test)

    def start(self, phase: str, options: dict[str, Any]) -> SysbenchProcess:
        """sysbench started for `phase` with these options; BatchAborted when it cannot."""
        connection = (
            targets.connection_of(self.batch.target) if self.sql and self.batch.target else None
        )
        script = self.plan.script  # a custom Lua script, frozen at launch

        def make(config_path: str) -> Any:
            return build_command(
                test=self.test,
                phase=phase,
                # build_command keeps only the data-set options for prepare and cleanup
                options=options,
                connection=connection,
                config_path=config_path,
                executable=self.executor.sysbench,
                script_path=_next_to(config_path, SCRIPT_NAME) if script else None,
            )

        try:
            files = {SCRIPT_NAME: script.content} if script else None
            workspace = self.workspace()
            if workspace:
                return self.executor.start(make, files=files, cwd=workspace)  # type: ignore[call-arg]
            return self.executor.start(make, files=files)
        except ExecutorError as e:
            raise BatchAborted(str(e)) from None

    def workspace(self) -> str | None:
        """fileio's files live in a directory of the batch on the load host, from prepare
        through the runs to cleanup; other tests run in sysbench's private directory."""
        if self.test != "fileio":
            return None
        workspace = getattr(self.executor, "workspace", None)
        if workspace is None:
            raise BatchAborted(
                f"fileio needs a working directory on load host '{self.executor.host_name}', "
                "which this kind of load host does not offer yet"
            )
        return str(workspace(f"batch-{self.batch.pk}"))

    def remove_workspace(self) -> None:
        # A batch handed back to the queue keeps its files for when it resumes.
        if self.test != "fileio" or self.batch.status == Status.QUEUED:
            return
        remove = getattr(self.executor, "remove_workspace", None)
        if remove is not None:
            remove(self.workspace())


def _next_to(config_path: str, name: str) -> str:
    """A file of the executor's private directory: next to the config file."""
    return os.path.join(os.path.dirname(config_path), name)
