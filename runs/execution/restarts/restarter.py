"""A batch's restarts: before a cell whose install, config or restart-only settings differ
from what its server runs, the server is restarted with them, waited for (bounded, shown
on the batch), and every setting read back; a start that fails is rolled back to the
original and the cell fails with the server's own line. What benchdash changed is kept
in `Batch.put_back` before it changes it, so that the batch's end, or the sweeper after a
crash, puts the original back (`restarted_put_back`). Each restart and restore is a stage
of the batch's log, with its times.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from runs import targets
from runs.errors import InvalidInput
from runs.execution.restarts import processes
from runs.execution.restarts.hearing import Tick, beat_only, stoppable
from runs.execution.restarts.operator import include_write, target_restart_spec
from runs.execution.restarts.original import server_found, unlike_found
from runs.execution.restarts.processes import RestartFailed, StartedAs
from runs.execution.restarts.spec import (
    Install,
    Options,
    include_text,
    mismatches,
    restart_names,
    restart_options,
)
from runs.execution.restarts.stage_log import StageLog
from runs.execution.restarts.stages import restart_label
from runs.execution.stream.cancel import CancelListener
from runs.execution.stream.heartbeat import BatchStopped
from runs.frozen import FrozenPlan
from runs.loadhosts import ShellError
from runs.models import Batch, Run, Target

logger = logging.getLogger(__name__)
POLL_S = 0.5
Show = Callable[[str], None]  # what the batch waits for; "" once it does not


def dynamic_settings(target: Target | None, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings SET GLOBAL / ALTER SYSTEM change: all but a restart's."""
    names = _restart_names(target, list(settings))
    return {name: value for name, value in settings.items() if name not in names}


def _restart_names(target: Target | None, names: list[str]) -> frozenset[str]:
    if target is None or not target.restart_mode:
        return frozenset()
    return restart_names(target.engine, names, targets.allowed_settings(target.engine))


class Restarts:
    """The restarts of one of a batch's targets (none for a target that never restarts);
    its state is `Batch.put_back[str(target id)]` (runs/execution/restarts/batch_restarts.py
    keeps one per target)."""

    def __init__(
        self,
        batch: Batch,
        *,
        target: Target | None,
        tick: Tick,
        show: Show,
        save: Callable[[], None],
    ) -> None:
        self.batch = batch
        self.target = target
        self.plan = FrozenPlan.from_params(batch.params)
        self.tick, self.show, self.save = tick, show, save
        target = self.target
        self.broken = ""  # a restart config stored before its checks: no restart with it
        try:
            self.spec = target_restart_spec(target) if target is not None else None
        except InvalidInput as e:
            self.spec, self.broken = None, f"the target's restart config: {e}"
        if self.spec is not None and target is not None:
            self.broken = processes.shell_refused(target)
        # The server's machine: its server host over SSH (connected while a restart goes
        # on, closed after it), else the worker's own.
        self.shell = processes.target_shell(target)
        self.names = _restart_names(target, list(self.plan.server_settings))
        axes = self.plan.servers
        self.configs = {str(c["label"]): str(c["text"]) for c in axes.get("configs") or []}
        self.active = bool(self.names or axes.get("installs") or self.configs) and (
            self.spec is not None or bool(self.broken)
        )
        self.warm_s = int(axes.get("warm_s") or 10)
        self.verified: dict[str, str] = {}  # the restart's settings as the server shows them
        self.warm = axes.get("after_restart", "warm") != "cold"
        self.failed: dict[str, str] = {}  # a restart key that did not start: its error
        self.restarted = False  # since the last cell: the next cell is the first after it
        self.warm_due = False
        self.log = StageLog(batch, target, named=bool(self.plan.targets), save=save)

    # --- before a cell ---------------------------------------------------------------------

    def want(self, run: Run) -> dict[str, Any]:
        state = self._state()
        settings = {n: str(v) for n, v in sorted(run.settings.items()) if n in self.names}
        return {
            "install": run.install or state.get("original", {}).get("install", ""),
            "config": run.config,
            "settings": settings,
        }

    def before_cell(self, run: Run, *, note: bool = True) -> str:
        """Restart the server for `run` when it runs something else; "" when the cell may
        run, else why it may not (the cell fails with it). `note`: the run is about to be
        measured (not a prepare): it says what ran."""
        if not self.active:
            return ""
        if self.broken:
            return self.broken
        try:
            self._remember_original()
            want = self.want(run)
            key = json.dumps(want, sort_keys=True)
            if key in self.failed:
                return self.failed[key]
            if want != self._running():
                error = self._restart(want, f"before run {run.position + 1}", run.position)
                if error:
                    self.failed[key] = error
                    return error
        except ShellError as e:
            return f"the server's machine could not be used: {e}"
        finally:
            self.shell.close()
        if note:
            self.warm_due = self.warm and self.restarted
            self._note(run, want)
        return ""

    def _note(self, run: Run, want: dict[str, Any]) -> None:
        """The run says which binary ran, with what, and whether it was measured cold."""
        state = self._state()
        after = "warm" if self.warm or not self.restarted else "cold"
        run.environment = {
            **run.environment,
            "restart": {
                **want,
                "basedir": state.get("basedir", ""),
                "binary": state.get("binary", ""),
                "machine": state.get("machine", ""),
                "version": state.get("version", ""),
                "after_restart": after,
                "first_after_restart": self.restarted,
            },
        }
        self.restarted = False

    def needs_warmup(self) -> bool:
        """Whether the cell just noted is the first after a restart, to be warmed up."""
        due, self.warm_due = self.warm_due, False
        return due

    # --- the state kept on the batch ------------------------------------------------------

    def _state(self) -> dict[str, Any]:
        assert self.target is not None
        state = self.batch.put_back.get(str(self.target.pk)) if self.batch.put_back else None
        return dict(state or {})

    def _set_state(self, **values: Any) -> None:
        assert self.target is not None
        put_back = dict(self.batch.put_back or {})
        put_back[str(self.target.pk)] = {**self._state(), **values}
        self.batch.put_back = put_back
        self.save()

    def _running(self) -> dict[str, Any]:
        state = self._state()
        running = state.get("running")
        original = {"install": state["original"].get("install", ""), "config": "", "settings": {}}
        return dict(running) if running else original

    def _remember_original(self) -> None:
        """What runs before benchdash changes anything, kept before the first change."""
        if "original" in self._state():
            return
        assert self.spec is not None and self.target is not None
        self._set_state(**server_found(self.shell, self.spec, self.target))

    # --- a restart ----------------------------------------------------------------------------

    def _restart(self, want: dict[str, Any], reason: str, position: int) -> str:
        assert self.spec is not None and self.target is not None
        config_text = self.configs.get(want["config"], "")
        try:  # checked again: a plan saved before a check was added may hold what it refuses
            options = restart_options(
                self.target.engine, config_text=config_text, settings=want["settings"]
            )
        except InvalidInput as e:
            return f"this cell's config or settings: {e}"
        label = restart_label(want)
        started = timezone.now()
        self._set_state(running=want)  # from now on, a crash leaves it to be put back
        self.log.open("restart", position, started, f"{reason}: {label}", want=want)
        try:
            version = self._start_or_cancel(want["install"], options, f"restarting with {label}")
        except RestartFailed as e:
            line = str(e)
            self.log.finish(
                "restart", position, started, f"{reason}: {label}", error=line, want=want
            )
            self._back_to_original(position, f"{label} did not start")
            return f"the server did not start with {label}: {line} (rolled back to the original)"
        except BatchStopped as e:  # cancelled while it waited: the batch's end puts it back
            self.log.finish("restart", position, started, f"{reason}: {label}", want=want,
                      error=f"stopped while the server started: {e.reason}")  # fmt: skip
            raise
        with targets.connect_to(self.target) as db:
            facts = db.restart_facts(options.names)
        wrong = mismatches(options, facts.values)
        self.verified = {name: facts.values.get(name, "") for name in options.names}
        self.log.finish("restart", position, started, f"{reason}: {label}", output=version,
                  error="; ".join(wrong), want=want, version=version)  # fmt: skip
        self.restarted = True
        return "; ".join(wrong)

    def _start_or_cancel(self, install_label: str, options: Options, what: str) -> str:
        """_start, a cancel heard at once while it waits (BatchStopped): the batch's end
        puts the original back."""
        with CancelListener(self.batch.pk, on_cancel=lambda: None) as listener:
            tick, self.tick = self.tick, stoppable(self.tick, self.batch.pk, listener.heard)
            try:
                return self._start(install_label, options, what)
            finally:
                self.tick = tick

    def _start(
        self, install_label: str, options: Options, what: str, *, found: StartedAs | None = None
    ) -> str:
        """Stop what runs, start with `options` (or as it was `found`: the original's own
        command line), wait until it answers: its version."""
        assert self.spec is not None and self.target is not None
        timeout = self.spec.timeout_s
        self.show(f"{what} (waiting up to {timeout} s for the server)")
        try:
            if self.spec.mode == "managed":
                install = self.spec.install(install_label)
                self._stop_running(timeout)
                if found is not None and found.argv:
                    pid = processes.server_relaunch(self.shell, self.target.engine, install, found)
                    binary = found.argv[0]
                else:
                    pid, binary = processes.server_launch(
                        self.shell,
                        self.target.engine,
                        install,
                        port=self.target.port,
                        socket=self.target.socket,
                        options=options,
                    )
                self._set_state(pid=pid, basedir=install.basedir, binary=binary)
                version = self._wait(timeout, pid=pid, install=install)
            else:
                include_write(self.shell, self.spec, include_text(self.target.engine, options))
                version = self._service_restart(timeout)
            self._set_state(version=version)
            return version
        except ShellError as e:
            raise RestartFailed(str(e)) from None
        finally:
            self.show("")

    def _service_restart(self, timeout: int) -> str:
        """The restart command run, the server waited for; RestartFailed with the first
        error line its own log got since the command began (the command's output else)."""
        assert self.spec is not None
        log = str(self._state().get("error_log") or "")
        since = processes.log_size(self.shell, log)
        code, output = self.shell.run(self.spec.command, timeout)
        if code != 0:
            line = processes.errors_since(self.shell, log, since)
            raise RestartFailed(line or processes.error_line(output))
        try:
            return self._wait(timeout)
        except RestartFailed as e:
            line = processes.errors_since(self.shell, log, since)
            raise RestartFailed(f"{e}: {line}" if line else str(e)) from None

    def _stop_running(self, timeout: int) -> None:
        """The server running now stopped: its pid file, else the one benchdash started."""
        assert self.target is not None
        pid = self._state().get("pid")
        try:
            with targets.connect_to(self.target) as db:
                pid = processes.pid_in(self.shell, db.pid_file()) or pid
        except targets.TargetError:
            pass  # not answering: the process benchdash started, if it is still there
        if pid:  # gone already: nothing to wait for
            processes.server_stop(self.shell, int(pid), self.target.engine, timeout)

    def _wait(self, timeout: int, *, pid: int | None = None, install: Install | None = None) -> str:
        """Until the server answers: its version; RestartFailed with its own line when it
        exits or does not answer within the timeout."""
        assert self.target is not None
        deadline = time.monotonic() + timeout
        while True:
            try:
                with targets.connect_to(self.target) as db:
                    return db.restart_facts([]).version
            except targets.TargetError:
                pass
            if pid is not None and not self.shell.alive(pid):
                log = processes.server_log(self.shell, install)  # type: ignore[arg-type]
                raise RestartFailed(processes.error_line(log))
            if time.monotonic() >= deadline:
                if pid is not None:
                    processes.server_stop(self.shell, pid, self.target.engine, 30)
                log = processes.server_log(self.shell, install) if install else ""
                raise RestartFailed(
                    f"no answer within {timeout} s"
                    + (f": {processes.error_line(log)}" if log else "")
                )
            self.tick()
            time.sleep(POLL_S)

    # --- putting the original back ----------------------------------------------------------

    def _back_to_original(self, position: int, reason: str) -> None:
        started = timezone.now()
        state = self._state()
        original = state["original"]
        back = {"install": original.get("install", ""), "config": "", "settings": {}}
        self.log.open("restore", position, started, reason, want=back)
        tick, self.tick = self.tick, beat_only(self.tick)
        try:
            if self.spec is not None and self.spec.mode == "service":
                include_write(self.shell, self.spec, original.get("include"))
                version = self._show_and(lambda: self._service_restart(self.spec.timeout_s))  # type: ignore[union-attr]
            else:
                found = StartedAs(tuple(original.get("argv") or ()), original.get("cwd", ""))
                version = self._start(back["install"], Options(), "putting the original back",
                                      found=found)  # fmt: skip
        except (RestartFailed, ShellError) as e:
            self.log.finish("restore", position, started, reason, error=str(e), want=back)
            raise RestartFailed(str(e)) from None
        finally:
            self.tick = tick
        self._set_state(running=None, restored_at=timezone.now().isoformat())
        self.log.finish("restore", position, started, reason, want=back, version=version,
                  unlike=self._unlike_found(original))  # fmt: skip
        self.restarted = True

    def _unlike_found(self, original: dict[str, Any]) -> list[str]:
        """Each setting read back after the put-back against the server as found: those
        that are not as they were (the restore stage's `unlike_found`, and a warning of
        the batch's). A service's start is the operator's: it may differ, said."""
        assert self.target is not None
        unlike = unlike_found(self.target, original)
        if unlike:
            where = f"{self.target.name} " if self.plan.targets else ""
            self.batch.warnings = [*self.batch.warnings, f"{where}came back unlike it was "
                                   f"found: {'; '.join(unlike)}"]  # fmt: skip
        return unlike

    def _show_and(self, action: Callable[[], str]) -> str:
        self.show("putting the original config back")
        try:
            return action()
        finally:
            self.show("")

    def put_back(self, reason: str) -> str:
        """The original config and install back, restarted, when benchdash changed them;
        "" or why it could not (said on the batch)."""
        if self.spec is None or not self._state().get("running"):
            return ""
        if self.broken:
            return f"could not put the server's original config back: {self.broken}"
        try:
            self._back_to_original(-1, reason)
        except (RestartFailed, targets.TargetError) as e:
            return f"could not put the server's original config back: {e}"
        finally:
            self.shell.close()
        return ""
