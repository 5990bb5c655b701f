"""Settings that hold a credential, told by their names and values. A restart's options
(a config snippet, a restart-only setting) are shown on the plan, kept in the batch and
written where the server reads it: one whose name says it holds a credential
(`report_password`, `wsrep_sst_auth`, `*_key`) or whose value reads as `user:password` is
refused, named without its value (runs/execution/restarts/spec.py). A server's own
variables recorded with a batch keep such a setting's name, never its value
(runs/targets). Pure: no Django, imported by every layer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# A name's words (split at "_") that say it holds a credential, wherever they stand.
SECRET_WORDS = frozenset(
    {
        "password", "passwords", "passwd", "pwd", "pass", "passphrase", "secret", "secrets",
        "token", "tokens", "credential", "credentials", "auth", "conninfo", "keyring",
        "keyfile", "filekey", "apikey", "privkey", "private",
    }
)  # fmt: skip
# Within a word: `mypassword`, `db_root_passwd2`.
SECRET_PARTS = ("password", "passwd", "secret", "token", "credential")
# A name that ends in the word "key" names a key (`ssl_key`, `file_key_management_
# encryption_key`); "key" elsewhere is MyISAM's key cache (`key_buffer_size`) or a key's
# id or age (`innodb_default_encryption_key_id`), settings like any other.
KEY_WORDS = ("key", "keys")
# Settings whose names read as a credential's and that hold none (a number, a switch, a
# hash's name): all those the words above catch among MariaDB 10.11's variables and
# options and PostgreSQL 15's pg_settings, but for those that do hold one or name where
# one is (report_password, wsrep_sst_auth, ssl_key, krb_server_keyfile, primary_conninfo,
# ssl_passphrase_command); and MySQL's ngram_token_size.
NOT_SECRETS = frozenset(
    {
        "max_seeks_for_key", "innodb_ft_min_token_size", "innodb_ft_max_token_size",
        "ngram_token_size", "innodb_force_primary_key", "have_rtree_keys", "max_index_keys",
        "password_encryption", "default_password_lifetime", "disconnect_on_expired_password",
        "max_password_errors", "old_passwords", "secure_auth", "show_slave_auth_info",
        "strict_password_validation", "pre_auth_delay", "post_auth_delay",
        "ssl_passphrase_command_supports_reload",
    }
)  # fmt: skip
# `root:hunter2` (MariaDB's wsrep_sst_auth), not a time zone's offset `+01:00` nor `12:30`.
USER_PASSWORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*:.+")
NAME_SHOWN = re.compile(r"[A-Za-z0-9_.-]{0,64}")
WHY = "settings, never secrets"


def secret_name(name: str) -> bool:
    """Whether a setting's name (lower case, MySQL's dashes as underscores) says it holds
    a credential."""
    text = name.strip().lower().replace("-", "_")
    if text in NOT_SECRETS:
        return False
    words = [word for word in re.split(r"[^a-z0-9]+", text) if word]
    return (
        any(word in SECRET_WORDS for word in words)
        or any(part in text for part in SECRET_PARTS)
        or bool(words and words[-1] in KEY_WORDS)
    )


def secret_value(value: str) -> bool:
    """Whether a value reads as a credential: `user:password`."""
    return bool(USER_PASSWORD.fullmatch(value.strip().strip("'\"")))


def secret_line(name: str, value: str) -> str:
    """Why an option is refused, said without its value; "" when it holds no credential."""
    # Its name's first word only: "password hunter2" (no "=") says no more than "password".
    shown = NAME_SHOWN.match(name.strip())[0] or "…"  # type: ignore[index]
    if secret_name(name):
        return f"{shown} = …: its name says it holds a credential"
    if secret_value(value):
        return f"{shown} = …: its value reads as user:password"
    return ""


HIDDEN = "********"  # as MariaDB shows wsrep_sst_auth


def variables_shown(variables: dict[str, str]) -> dict[str, str]:
    """A server's variables as a batch keeps them: a credential's value hidden (a server
    shows report_password, and primary_conninfo to a superuser, as they are set)."""
    return {
        name: HIDDEN if secret_name(name) and value else value for name, value in variables.items()
    }


def settings_hidden(axes: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as stored before the rule (a plan's axes, a run's settings): a credential's
    value hidden, its name and the axis's shape kept."""
    return {name: _hidden(name, value) for name, value in axes.items()}


def _hidden(name: str, value: Any) -> Any:
    if isinstance(value, list):
        return [_hidden(name, item) for item in value]
    if secret_name(name) or (isinstance(value, str) and secret_value(value)):
        return HIDDEN
    return value


def snippet_hidden(text: str) -> str:
    """A config snippet as stored before the rule: each line holding a credential is
    `name = ********`; every other line as it was."""
    lines = []
    for line in text.splitlines(keepends=True):
        name, eq, value = line.partition("=")
        if eq and not line.lstrip().startswith(("#", ";", "[", "!")) and secret_line(name, value):
            ending = "\n" if line.endswith("\n") else ""
            line = f"{name.strip()} = {HIDDEN}{ending}"
        lines.append(line)
    return "".join(lines)
