"""A custom script's own interface, discovered rather than declared: its options, as
`sysbench <script>.lua help` prints them, and its commands (prepare, cleanup, check...),
as the probe (runs/loadhosts/script_probe.py) prints them on `benchdash-command: NAME`
lines. A plan's values for the script's options are checked by the option's kind the way
built-in options are (values.py), so nothing undiscovered reaches argv.

sysbench prints one option a line, `  --name=N   description [default]`: `=N` is a number
(a whole number when its default is one), `[=on|off]` a boolean, `=STRING` a string,
`=SIZE` a size, `=[LIST,...]` a list.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runs.errors import InvalidInput
from runs.sysbench.options import INT_MAX, Kind, OptionSpec, OptionValue, show_value
from runs.sysbench.values import CLEANERS

COMMAND_MARK = "benchdash-command: "
# sysbench's own commands; a script may add others, which benchdash does not run.
KNOWN_COMMANDS = ("prepare", "run", "cleanup", "check", "prewarm")
# A script's string options reach sysbench's argv as one word each, never through a
# shell's parsing (on an SSH host as a shlex-quoted argument of a constant script). So a
# value may hold what its SQL needs (`COLLATE latin1_bin`, `ENGINE=InnoDB ROW_FORMAT=...`,
# `PARTITION BY HASH(id)`), though no line break, tab, nor a shell's special character:
# a value is checked as its text, wherever it goes.
TEXT_PATTERN = r"[A-Za-z0-9_.,:/+=@%()' -]{0,200}"
TEXT_EXPECTED = "letters, digits, spaces and _ . , : / + = @ % ( ) ' -, up to 200"
_QUOTES = ('"', "'")
_OPTION_LINE = re.compile(
    r"^\s+--(?P<name>[A-Za-z0-9_-]{1,64})(?P<kind>=N|\[=on\|off\]|=STRING|=SIZE|=\[LIST,\.\.\.\]"
    r"|=FILENAME)?\s+(?P<help>.*?)(?:\s*\[(?P<default>[^\[\]]*)\])?$"
)
_KINDS = {
    "=N": Kind.INT,
    "[=on|off]": Kind.BOOL,
    "=STRING": Kind.TEXT,
    "=FILENAME": Kind.TEXT,
    "=SIZE": Kind.SIZE,
    "=[LIST,...]": Kind.TEXT,
}
_WHOLE = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class ScriptInterface:
    """What a script offers: its options by name, and its commands."""

    options: dict[str, OptionSpec]
    commands: frozenset[str]

    def has(self, command: str) -> bool:
        # "run" is sysbench's own: every script with an event() has it.
        return command == "run" or command in self.commands

    def to_json(self) -> dict[str, object]:
        return {
            "options": [spec_to_json(spec) for spec in self.options.values()],
            "commands": sorted(self.commands),
        }

    @classmethod
    def from_json(cls, data: object) -> ScriptInterface:
        data = data if isinstance(data, Mapping) else {}
        specs = [spec_from_json(item) for item in data.get("options") or []]
        return cls({s.name: s for s in specs}, frozenset(data.get("commands") or ()))


def parse_probe(output: Iterable[str]) -> ScriptInterface:
    """The interface printed by the probe: option lines after the `<name> options:`
    header, and the command marks."""
    options: dict[str, OptionSpec] = {}
    commands: set[str] = set()
    in_options = False
    for line in output:
        if line.startswith(COMMAND_MARK):
            name = line[len(COMMAND_MARK) :].strip()
            if name in KNOWN_COMMANDS:
                commands.add(name)
        elif line.rstrip().endswith(" options:") and not line.startswith(" "):
            in_options = True
        elif in_options and (m := _OPTION_LINE.match(line.rstrip())):
            spec = _spec(m)
            options[spec.name] = spec
    return ScriptInterface(dict(sorted(options.items())), frozenset(commands))


def _spec(m: re.Match[str]) -> OptionSpec:
    kind = _KINDS.get(m["kind"] or "", Kind.BOOL)
    default_text = m["default"]
    default: OptionValue | None = default_text
    if kind is Kind.INT and default_text and not _WHOLE.fullmatch(default_text):
        kind = Kind.FLOAT
    if kind is Kind.INT:
        default = int(default_text) if default_text else None
    elif kind is Kind.FLOAT:
        default = float(default_text) if default_text else None
    elif kind is Kind.BOOL:
        default = default_text == "on"
    return OptionSpec(
        name=m["name"],
        kind=kind,
        tests=frozenset(),
        help=m["help"].strip(),
        default=default,
        minimum=-INT_MAX if kind in (Kind.INT, Kind.FLOAT) else None,
        maximum=INT_MAX if kind in (Kind.INT, Kind.FLOAT) else None,
        pattern=TEXT_PATTERN if kind is Kind.TEXT else "",
        expected=TEXT_EXPECTED,
    )


def spec_to_json(spec: OptionSpec) -> dict[str, object]:
    return {"name": spec.name, "kind": str(spec.kind), "help": spec.help, "default": spec.default}


def spec_from_json(data: object) -> OptionSpec:
    data = data if isinstance(data, Mapping) else {}
    kind = Kind(str(data.get("kind", "text")))
    number = kind in (Kind.INT, Kind.FLOAT)
    return OptionSpec(
        name=str(data.get("name", "")),
        kind=kind,
        tests=frozenset(),
        help=str(data.get("help", "")),
        default=data.get("default"),
        minimum=-INT_MAX if number else None,
        maximum=INT_MAX if number else None,
        pattern=TEXT_PATTERN if kind is Kind.TEXT else "",
        expected=TEXT_EXPECTED,
    )


def clean_script_options(
    interface: ScriptInterface, values: Mapping[str, object]
) -> dict[str, OptionValue]:
    """A plan's values for the script's options, each checked by its kind; an option the
    script did not declare is refused, naming it (dashes and underscores are one to
    sysbench: `table-size` is `table_size`)."""
    if not isinstance(values, Mapping):
        raise InvalidInput("script_options", "give the script's options as name → value")
    cleaned: dict[str, OptionValue] = {}
    by_key = {_key(name): spec for name, spec in interface.options.items()}
    for name, value in values.items():
        spec = by_key.get(_key(str(name)))
        if spec is None:
            known = ", ".join(interface.options) or "none"
            raise InvalidInput(
                f"script_options.{name}",
                f"the script has no option {show_value(name)}; its options: {known}",
            )
        try:
            cleaned[spec.name] = CLEANERS[spec.kind](spec, unquoted(value))
        except InvalidInput as e:
            raise InvalidInput(f"script_options.{spec.name}", e.message) from None
    return {name: cleaned[name] for name in interface.options if name in cleaned}


def unquoted(value: object) -> object:
    """A value without the one pair of quotes around it that a shell would take off: a
    script's help writes `--mysql_table_options="COLLATE latin1_bin"`, and the value is
    what is inside."""
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] in _QUOTES:
        return value[1:-1]
    return value


def is_declared(interface: ScriptInterface, name: str) -> bool:
    return _key(name) in {_key(n) for n in interface.options}


def _key(name: str) -> str:
    return name.replace("-", "_")
