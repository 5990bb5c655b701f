"""What a target that opted in to restarts says of itself (`Target.restart_config`), and
the options a restart sets: restart-only settings and config snippets, checked, then
given to the server as start arguments (a managed instance) or as the include benchdash
owns (a service). No Django, no I/O: the services check with it, the worker starts with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from runs import credentials
from runs.errors import InvalidInput
from runs.execution.restarts.allowed import (
    Allowed,
    include_checked,
    install_path_checked,
    service_argv,
)
from runs.execution.restarts.readback import same_value

DEFAULT_TIMEOUT_S = 120
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
# A value is one word: no space, quote, slash or newline, so never a path, never a second
# option, never anything a config file or a command line would read as more than a value.
VALUE = re.compile(r"[A-Za-z0-9_.,:+-]{1,100}")
MYSQL_SECTIONS = frozenset({"mysqld", "mariadbd", "server", "mariadb"})
# Options a restart must never set: where the server keeps its files, what it loads, who it
# runs as, where it listens (benchdash keeps those of the install), and includes.
NEVER = frozenset(
    {
        "datadir", "basedir", "socket", "port", "bind_address", "user", "pid_file",
        "log_error", "log_bin", "log_bin_index", "relay_log", "init_file", "init_connect",
        "secure_file_priv", "tmpdir", "skip_grant_tables", "lower_case_table_names",
        "innodb_page_size", "innodb_data_file_path", "data_directory", "config_file",
        "hba_file", "ident_file", "listen_addresses", "unix_socket_group",
        "unix_socket_permissions", "include", "include_dir", "include_if_exists",
        "logging_collector", "event_scheduler",
    }
)  # fmt: skip
NEVER_ENDS = ("_dir", "_file", "_path", "_command", "_directory", "_directories", "_files")
NEVER_PARTS = ("librar", "plugin", "ssl", "home")
SECRET_WORDS = ("password", "passwd", "secret", "token")
# The rule that keeps file paths out of a restart ("a file stays in the data directory"):
# an option whose value names a file is set only where the server makes the file name
# itself from a plain basename, inside the instance's own data directory: the binary log
# (log_bin, bare or `log_bin = <basename>`: <basename>.000001 and <basename>.index). No
# '/', no '..', so never a path. Every other option that names a file (datadir, socket,
# log_error, log_bin_index, *_file, *_dir, ...) is never set: its value is the whole name,
# which could be a file the server keeps (ibdata1).
FILE_RULE = (
    "a file stays in the data directory: an option that names a file is set only as "
    "log_bin, bare or with a plain basename (letters, digits, _ and -; no '/', no '..'), "
    "whose files land in the instance's own data directory"
)
BASENAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
# MySQL/MariaDB's switches of the binary log, and what log_bin shows after each.
BINLOG_SWITCHES = {"log_bin": "ON", "skip_log_bin": "OFF", "disable_log_bin": "OFF"}
OPTIONS_NAME = "benchdash-options"  # .cnf / .conf, in a managed instance's data directory
MAX_SNIPPET_BYTES = 16 * 1024
# Each option of a restart is read back from the server after it: a long list is a
# pasted config, not a question.
MAX_SNIPPET_OPTIONS = 200
NO_SECRETS = f"a restart sets {credentials.WHY}"


@dataclass(frozen=True)
class Install:
    """One server install of a managed target: its binaries, its data, its base config."""

    label: str
    basedir: str
    datadir: str
    config: str = ""  # read by the server, never written by benchdash; "" for none


@dataclass(frozen=True)
class RestartSpec:
    mode: str  # "managed" or "service"
    installs: tuple[Install, ...] = ()
    command: tuple[str, ...] = ()  # service: the operator's restart command, its argv
    include: str = ""  # service: the one file benchdash writes
    include_dirs: tuple[str, ...] = ()  # service: the operator's folders it must be in
    log: str = ""  # service: its error log, when the server does not say where it is
    timeout_s: int = DEFAULT_TIMEOUT_S

    def install(self, label: str) -> Install:
        for install in self.installs:
            if install.label == label:
                return install
        raise InvalidInput("installs", f"{label!r} is not an install of this target")


@dataclass(frozen=True)
class Options:
    """What one restart sets, in order (a setting after a snippet's line wins)."""

    pairs: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def names(self) -> list[str]:
        """The server's variables that show what the options set (read back after it)."""
        return sorted(self.wanted())

    def wanted(self) -> dict[str, str]:
        """Each variable as the server must show it: a binary log's switch as log_bin."""
        return dict(_shown_as(name, value) for name, value in self.pairs)


def _shown_as(name: str, value: str) -> tuple[str, str]:
    if name in BINLOG_SWITCHES:
        return "log_bin", BINLOG_SWITCHES[name]
    return name, value


def restart_spec(engine: str, mode: str, config: object, *, allowed: Allowed) -> RestartSpec | None:
    """The restart config of a target checked against what the operator `allowed`
    (InvalidInput naming restart_config); None for a target that never restarts (and then
    the config must be empty)."""
    if not mode:
        if config:
            raise InvalidInput("restart_config", "give a restart mode, or leave this empty")
        return None
    if not isinstance(config, Mapping):
        raise InvalidInput("restart_config", "must be an object")
    _no_secrets(config)
    timeout = config.get("timeout_s", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, int) or not 5 <= timeout <= 3600:
        raise InvalidInput("restart_config", "timeout_s must be 5 to 3600 seconds")
    if mode == "managed":
        _only(config, {"installs", "timeout_s"})
        installs = _installs(config.get("installs"))
        for install in installs:
            for what in ("basedir", "datadir", "config"):
                if path := getattr(install, what):
                    install_path_checked(allowed, path, f"install {install.label}: {what}")
        return RestartSpec(mode, installs=installs, timeout_s=timeout)
    if mode == "service":
        _only(config, {"command", "values", "include", "log", "timeout_s"})
        argv = service_argv(allowed, config.get("command"), config.get("values"))
        suffix = ".conf" if engine == "postgresql" else ".cnf"
        include = include_checked(allowed, config.get("include"), suffix)
        log = _path(config["log"], "log") if config.get("log") else ""
        return RestartSpec(mode, command=argv, include=include, log=log, timeout_s=timeout,
                           include_dirs=allowed.include_dirs)  # fmt: skip
    raise InvalidInput("restart_mode", f"{mode!r} is not managed or service")


def _installs(value: object) -> tuple[Install, ...]:
    if not isinstance(value, list) or not value:
        raise InvalidInput("restart_config", "installs must list at least one install")
    installs: list[Install] = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, Mapping):
            raise InvalidInput("restart_config", f"install {i} must be an object")
        _only(item, {"label", "basedir", "datadir", "config"})
        label = str(item.get("label", ""))
        if not LABEL.fullmatch(label):
            raise InvalidInput("restart_config", f"install {i}: give a short label, e.g. 10.11")
        if any(x.label == label for x in installs):
            raise InvalidInput("restart_config", f"two installs are labelled {label}")
        config = item.get("config") or ""
        installs.append(
            Install(
                label=label,
                basedir=_path(item.get("basedir"), f"install {label}: basedir"),
                datadir=_path(item.get("datadir"), f"install {label}: datadir"),
                config=_path(config, f"install {label}: config") if config else "",
            )
        )
    datadirs = [x.datadir for x in installs]
    if len(set(datadirs)) != len(datadirs):
        raise InvalidInput("restart_config", "each install needs its own data directory")
    return tuple(installs)


def _only(config: Mapping[str, object], keys: set[str]) -> None:
    unknown = sorted(set(config) - keys)
    if unknown:
        raise InvalidInput(
            "restart_config", f"unknown keys {', '.join(unknown)}; known: {', '.join(sorted(keys))}"
        )


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or any(c in value for c in "\0\n\r"):
        raise InvalidInput("restart_config", f"{what}: each item must be one line of text")
    return value


def _path(value: object, what: str) -> str:
    text = _text(value, what)
    if not text.startswith("/") or "/../" in text + "/":
        raise InvalidInput("restart_config", f"{what} must be an absolute path without '..'")
    return text


def _no_secrets(config: Mapping[str, object]) -> None:
    words = str(config).lower()
    if any(word in words for word in SECRET_WORDS):
        raise InvalidInput(
            "restart_config",
            "holds no secrets (it is shown on the target's page): give the restart command "
            "its credentials in a file it reads itself",
        )


def option_name(engine: str, name: str, field_name: str) -> str:
    """A setting's name checked: one the restart may set, MySQL's dashes as underscores."""
    text = str(name).strip().lower()
    if engine != "postgresql":
        text = text.replace("-", "_")
    if not NAME.fullmatch(text):
        raise InvalidInput(field_name, f"{name!r} is not a setting name")
    if engine != "postgresql" and text in BINLOG_SWITCHES:
        return text  # its value keeps to FILE_RULE (option_value)
    if text in NEVER or text.endswith(NEVER_ENDS) or any(p in text for p in NEVER_PARTS):
        raise InvalidInput(
            field_name,
            f"{text} is never changed by a restart: it names files, libraries, plugins or "
            f"addresses the install keeps ({FILE_RULE})",
        )
    return text


def option_value(name: str, value: object, field_name: str) -> str:
    """A value checked: one word. The error never says the value (it may be a secret
    typed in the wrong place)."""
    text = str(value).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if name.rpartition(" ")[2] in BINLOG_SWITCHES:
        return _switch_value(name, text, field_name)
    if not VALUE.fullmatch(text):
        raise InvalidInput(field_name, f"{name}: a value is one word (letters, digits, _.,:+-)")
    return text


def _switch_value(name: str, text: str, field_name: str) -> str:
    """A binary log's switch: skip_log_bin / disable_log_bin alone (ON), log_bin alone (ON)
    or with a basename by FILE_RULE; log_bin = OFF would name its files OFF: refused."""
    option = name.rpartition(" ")[2]
    if text.lower() in {"on", "1", "true", "yes"}:
        return "ON"
    if option != "log_bin":
        raise InvalidInput(field_name, f"{name}: write {option} alone to turn the binary log off")
    if text.lower() in {"off", "0", "false", "no"}:
        raise InvalidInput(
            field_name,
            f"{name}: log_bin = {text} would turn the binary log on, its files named {text}: "
            "write skip_log_bin to turn it off",
        )
    if not BASENAME.fullmatch(text):
        raise InvalidInput(field_name, f"{name}: {FILE_RULE}")
    return text


def restart_settings_check(
    engine: str, axes: Mapping[str, Iterable[object]]
) -> dict[str, list[str]]:
    """Restart-only settings axes of an opted-in target: names and values checked, none
    a credential."""
    checked: dict[str, list[str]] = {}
    for name, values in axes.items():
        listed = list(values)
        for value in listed:
            if why := credentials.secret_line(str(name), str(value)):
                raise InvalidInput("server_settings", f"{NO_SECRETS}: {why}")
        checked_name = option_name(engine, name, "server_settings")
        checked[checked_name] = [option_value(checked_name, v, "server_settings") for v in listed]
    return checked


def config_options(engine: str, text: str, label: str = "") -> list[tuple[str, str]]:
    """A config snippet's option lines, checked: 16 kB and 200 options at most, no
    includes, no sections but the server's, no option that names files, no credential;
    InvalidInput names the line, never a value."""
    where = f"configs {label}".strip()
    size = len(str(text).encode())
    if size > MAX_SNIPPET_BYTES:
        raise InvalidInput(
            where, f"{size:,} bytes: a snippet holds {MAX_SNIPPET_BYTES // 1024} kB at most"
        )
    pairs: list[tuple[str, str]] = []
    for number, raw in enumerate(str(text).splitlines(), 1):
        pair = _config_line(engine, raw.strip(), f"line {number}", where)
        if pair is not None:
            pairs.append(pair)
        if len(pairs) > MAX_SNIPPET_OPTIONS:
            raise InvalidInput(
                where, f"line {number}: a snippet sets {MAX_SNIPPET_OPTIONS} options at most"
            )
    return pairs


def _config_line(engine: str, line: str, at: str, where: str) -> tuple[str, str] | None:
    """One line of a snippet: its option, or None for a comment, a blank or the server's
    section."""
    if not line or line[0] in "#;":
        return None
    if line.startswith("!"):
        raise InvalidInput(where, f"{at}: a snippet holds option lines only, no !include")
    if line.startswith("["):
        section = line.strip("[]").strip().lower()
        if engine == "postgresql" or section not in MYSQL_SECTIONS:
            raise InvalidInput(where, f"{at}: no section but the server's ([mysqld])")
        return None
    name, eq, value = line.partition("=")
    if why := credentials.secret_line(name, value):
        raise InvalidInput(where, f"config snippets hold {credentials.WHY}: {at}: {why}")
    if not eq and engine == "postgresql":
        raise InvalidInput(where, f"{at}: write name = value")
    if not NAME.fullmatch(name.strip().lower().replace("-", "_")):
        raise InvalidInput(where, f"{at}: not a setting's name: write name = value")
    name = option_name(engine, name, where)
    return name, option_value(f"{at}: {name}", value, where) if eq else "ON"


def restart_options(engine: str, *, config_text: str, settings: Mapping[str, str]) -> Options:
    pairs = config_options(engine, config_text) if config_text else []
    checked = restart_settings_check(engine, {n: [v] for n, v in sorted(settings.items())})
    pairs += [(name, values[0]) for name, values in checked.items()]
    return Options(tuple(pairs))


def options_file(engine: str, install: Install) -> str:
    """Where a managed instance's restart options are written: beside its data, readable
    by its owner only, never on its command line (which every account sees in ps)."""
    suffix = "conf" if engine == "postgresql" else "cnf"
    return f"{install.datadir.rstrip('/')}/{OPTIONS_NAME}.{suffix}"


def options_file_text(engine: str, install: Install, options: Options) -> str:
    """The config a managed instance starts with (its only one: MariaDB reads
    --defaults-extra-file only beside the default files, never beside --defaults-file):
    the install's own config included first, then the options, which win over it."""
    head = "# written by benchdash for a benchmark; removed when the original is put back\n"
    if engine == "postgresql":
        # postgres -c config_file=<this>: the data directory's postgresql.conf unless the
        # install names another; postgresql.auto.conf (ALTER SYSTEM) is read after both.
        base = install.config or f"{install.datadir.rstrip('/')}/postgresql.conf"
        quoted = base.replace("\\", "\\\\").replace("'", "''")
        lines = "".join(f"{name} = '{value}'\n" for name, value in options.pairs)
        return f"{head}include '{quoted}'\n{lines}"
    include = f"!include {install.config}\n" if install.config else ""
    return head + include + "[mysqld]\n" + "".join(_mysql_line(n, v) for n, v in options.pairs)


def include_text(engine: str, options: Options) -> str:
    """The include benchdash owns, for a service: its whole content."""
    head = "# written by benchdash for a benchmark; put back at the batch's end\n"
    if engine == "postgresql":
        return head + "".join(f"{name} = '{value}'\n" for name, value in options.pairs)
    return head + "[mysqld]\n" + "".join(_mysql_line(n, v) for n, v in options.pairs)


def _mysql_line(name: str, value: str) -> str:
    """An option's line; a binary log's switch that is on alone (`log_bin = ON` would
    name its files ON)."""
    if name in BINLOG_SWITCHES and value == "ON":
        return f"{name}\n"
    return f"{name} = {value}\n"


def mismatches(options: Options, shown: Mapping[str, str]) -> list[str]:
    """What the server does not show as asked, said for the cell's error."""
    return [
        f"{name}={value} did not take: the server shows {shown.get(name, 'no such setting')}"
        for name, value in options.wanted().items()
        if not same_value(value, shown.get(name, ""))
    ]


def restart_names(engine: str, names: Sequence[str], dynamic: Iterable[str]) -> frozenset[str]:
    """The names of a plan's settings that a restart sets: those off the dynamic list."""
    allowed = set(dynamic)
    return frozenset(n for n in names if n not in allowed)
