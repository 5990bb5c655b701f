"""What the operator allowed restarts to run and write on a server's machine, and a
target's choices checked against it (pure: no Django, no I/O; `operator.py` reads the
instance's settings into an `Allowed`).

A target never gives an argv: it names one of the operator's restart commands (argv
templates, BENCHDASH_RESTART_COMMANDS) and the values of its placeholders, each one word
that can be neither a path nor an option. Its include is a file inside one of the
operator's include folders (BENCHDASH_RESTART_INCLUDE_DIRS); a managed instance's
directories are inside the operator's install roots when there are some
(BENCHDASH_RESTART_INSTALL_ROOTS).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runs.errors import InvalidInput

PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]{0,31})\}")
# A placeholder's value: one word that starts with a letter, a digit or _ (never an option),
# without '/' (never a path) or '..': a unit, a version, a cluster's or an instance's name.
WORD = re.compile(r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,63}")
COMMAND_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
INCLUDE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
COMMANDS_SETTING = "BENCHDASH_RESTART_COMMANDS"
INCLUDES_SETTING = "BENCHDASH_RESTART_INCLUDE_DIRS"
ROOTS_SETTING = "BENCHDASH_RESTART_INSTALL_ROOTS"


class OperatorSettingError(ValueError):
    """The operator's restart settings cannot be read; the message names the setting."""


@dataclass(frozen=True)
class Allowed:
    """The operator's restart settings, checked."""

    commands: Mapping[str, tuple[str, ...]]  # a name: its argv template
    include_dirs: tuple[str, ...] = ()
    install_roots: tuple[str, ...] = ()  # none: any absolute path

    def command_names(self) -> str:
        return ", ".join(sorted(self.commands)) or "none"


def allowed_parse(
    commands: object, include_dirs: Sequence[str], install_roots: Sequence[str]
) -> Allowed:
    """The operator's settings as given (a JSON object of argv templates, lists of
    folders), checked: OperatorSettingError naming the setting."""
    if not isinstance(commands, Mapping):
        raise OperatorSettingError(f"{COMMANDS_SETTING} must be a JSON object: name -> argv")
    return Allowed(
        commands={str(name): _template(str(name), argv) for name, argv in commands.items()},
        include_dirs=tuple(_folder(INCLUDES_SETTING, d) for d in include_dirs if d.strip()),
        install_roots=tuple(_folder(ROOTS_SETTING, d) for d in install_roots if d.strip()),
    )


def _template(name: str, argv: object) -> tuple[str, ...]:
    where = f"{COMMANDS_SETTING}[{name!r}]"
    if not COMMAND_NAME.fullmatch(name):
        raise OperatorSettingError(f"{where}: a name is one short word")
    if not isinstance(argv, list) or not argv or not all(isinstance(x, str) for x in argv):
        raise OperatorSettingError(f"{where}: an argv, a list of strings")
    if not argv[0].startswith("/") or PLACEHOLDER.search(argv[0]):
        raise OperatorSettingError(f"{where}: the program is an absolute path of the operator's")
    for word in argv:
        if "{" in PLACEHOLDER.sub("", word) or "}" in PLACEHOLDER.sub("", word):
            raise OperatorSettingError(f"{where}: {word!r}: placeholders are {{name}}, lowercase")
    return tuple(argv)


def _folder(setting: str, path: str) -> str:
    folder = path.strip().rstrip("/") or "/"
    if not folder.startswith("/") or posixpath.normpath(folder) != folder:
        raise OperatorSettingError(f"{setting}: {path!r} is not an absolute, normal path")
    return folder


def placeholders(template: Sequence[str]) -> list[str]:
    """The names a template's words hold, in order, each once."""
    found: list[str] = []
    for word in template:
        found += [name for name in PLACEHOLDER.findall(word) if name not in found]
    return found


def service_argv(allowed: Allowed, command: object, values: object) -> tuple[str, ...]:
    """The argv of the operator's command `command`, its placeholders given `values`:
    InvalidInput naming restart_config (never a command of the user's)."""
    if isinstance(command, list):
        raise InvalidInput(
            "restart_config",
            "command names one of the restart commands the operator allowed "
            f"({allowed.command_names()}), never an argv: an operator adds one to "
            f"{COMMANDS_SETTING}",
        )
    template = allowed.commands.get(str(command)) if isinstance(command, str) else None
    if template is None:
        raise InvalidInput(
            "restart_config",
            f"command {command!r} is not one of the restart commands the operator allowed "
            f"({allowed.command_names()}); an operator adds one to {COMMANDS_SETTING}",
        )
    given = values if values is not None else {}
    if not isinstance(given, Mapping):
        raise InvalidInput("restart_config", "values must be an object: placeholder -> word")
    wanted = placeholders(template)
    if sorted(given) != sorted(wanted):
        raise InvalidInput(
            "restart_config",
            f"command {command} takes the values {', '.join(wanted) or 'none'}",
        )
    for name, value in given.items():
        if not isinstance(value, str) or not WORD.fullmatch(value):
            raise InvalidInput(
                "restart_config",
                f"values.{name}: one word of letters, digits and _.@+- (no '/', no space, "
                "no leading '-', no '..')",
            )
    return tuple(PLACEHOLDER.sub(lambda m: str(given[m[1]]), word) for word in template)


def template_values(template: Sequence[str], argv: Sequence[object]) -> dict[str, str] | None:
    """The placeholders' values that make `template` the argv `argv`, each one word; None
    when no values do: how an argv stored before the operator's commands is named again."""
    if len(template) != len(argv):
        return None
    values: dict[str, str] = {}
    for word, given in zip(template, argv, strict=True):
        parts = PLACEHOLDER.split(word)  # literal, name, literal, name, ..., literal
        pattern = "".join(
            re.escape(part) if i % 2 == 0 else "([A-Za-z0-9_][A-Za-z0-9_.@+-]*)"
            for i, part in enumerate(parts)
        )
        found = re.fullmatch(pattern, given) if isinstance(given, str) else None
        if found is None:
            return None
        for name, value in zip(parts[1::2], found.groups(), strict=True):
            if not WORD.fullmatch(value) or values.setdefault(name, value) != value:
                return None
    return values


def include_checked(allowed: Allowed, path: object, suffix: str) -> str:
    """A service's include: an absolute path to a file of its own name inside one of the
    operator's include folders, written as it is (no '..', no '//')."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise InvalidInput("restart_config", "include must be an absolute path")
    folder, name = posixpath.split(path)
    if posixpath.normpath(path) != path or not INCLUDE_NAME.fullmatch(name):
        raise InvalidInput("restart_config", "include must be a plain path, without '..'")
    if not name.endswith(suffix):
        raise InvalidInput("restart_config", f"the include must be a {suffix} file of its own")
    if not allowed.include_dirs:
        raise InvalidInput(
            "restart_config",
            "no include folder is allowed on this installation: an operator sets "
            + INCLUDES_SETTING,
        )
    if not inside(allowed.include_dirs, folder):
        raise InvalidInput(
            "restart_config",
            f"include {path} is outside the include folders the operator allowed "
            f"({', '.join(allowed.include_dirs)})",
        )
    return path


def install_path_checked(allowed: Allowed, path: str, what: str) -> str:
    """A managed instance's directory or config, inside the operator's install roots
    when there are some."""
    if allowed.install_roots and not inside(allowed.install_roots, path):
        raise InvalidInput(
            "restart_config",
            f"{what} {path} is outside the install roots the operator allowed "
            f"({', '.join(allowed.install_roots)})",
        )
    return path


def inside(folders: Sequence[str], path: str) -> bool:
    """Whether `path` (absolute, normal) is one of `folders` or below one."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)
