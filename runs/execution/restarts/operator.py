"""The operator's restart settings read from the instance's configuration (the commands,
include folders and install roots of allowed.py), a target's restart config checked
against them, and a service's include read and written only where they allow, its
symbolic links resolved on the server's machine at the time of each read and write."""

from __future__ import annotations

import posixpath

from django.conf import settings

from runs.errors import InvalidInput
from runs.execution.restarts.allowed import Allowed, OperatorSettingError, allowed_parse, inside
from runs.execution.restarts.spec import RestartSpec, restart_spec
from runs.loadhosts import ServerShell, ShellError
from runs.models import Target


def operator_allowed() -> Allowed:
    """BENCHDASH_RESTART_COMMANDS, _INCLUDE_DIRS and _INSTALL_ROOTS, checked; a mistake of
    the operator's is refused on restart_config, naming the setting."""
    try:
        return allowed_parse(
            settings.BENCHDASH_RESTART_COMMANDS,
            settings.BENCHDASH_RESTART_INCLUDE_DIRS,
            settings.BENCHDASH_RESTART_INSTALL_ROOTS,
        )
    except OperatorSettingError as e:
        raise InvalidInput(
            "restart_config", f"this installation's restart settings are wrong: {e}"
        ) from None


def target_restart_spec(target: Target) -> RestartSpec | None:
    """`target`'s restart config checked against the operator's settings of now."""
    return restart_spec(
        target.engine, target.restart_mode, target.restart_config, allowed=operator_allowed()
    )


def include_problem(shell: ServerShell, spec: RestartSpec) -> str:
    """Why the include may not be read or written now ("" when it may): its folder, links
    resolved there, must be inside one of the operator's include folders, and the include
    must be a file of its own, not a link to another."""
    folder, name = posixpath.split(spec.include)
    real = shell.realpath(folder)
    if not inside([shell.realpath(d) for d in spec.include_dirs], real):
        return (
            f"{spec.include} is in {real} on {shell.where}, outside the include folders the "
            f"operator allowed ({', '.join(spec.include_dirs)})"
        )
    if shell.test(spec.include, "e") and shell.realpath(spec.include) != posixpath.join(real, name):
        return f"{spec.include} is a link to another file on {shell.where}: never followed"
    return ""


def include_read(shell: ServerShell, spec: RestartSpec) -> str | None:
    """What the include holds (None: there is none), from where the operator allows."""
    if problem := include_problem(shell, spec):
        raise ShellError(problem)
    return shell.read(spec.include)


def include_write(shell: ServerShell, spec: RestartSpec, text: str | None) -> None:
    """The include written whole (None: removed), where the operator allows only."""
    if problem := include_problem(shell, spec):
        raise ShellError(problem)
    shell.write_whole(spec.include, text)
