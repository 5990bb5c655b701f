"""A batch's frozen plan: the parameters copied from its plan at launch, read as a typed object.

`Batch.params` is a JSON column. It is parsed here once, where code first reaches the batch
(`FrozenPlan.from_params(batch.params)`), and read by attribute after, so a key's name and
its default live in one place. `to_params()` gives back the dict that is stored:
`FrozenPlan.from_params(plan.to_params()) == plan`, and for a launched batch
`to_params()` returns exactly the dict `from_params` was given.

Not every batch was launched from a plan: an imported log stores its own record (version,
build, command, label...), a scheduled launch that did not happen only `fired_at`. Keys the
launch does not write are kept as they are in `extra`, and every launch key has the default
older or partial rows are read with.

Pure: no Django, no I/O, nothing of runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

OptionValue = int | float | bool | str

DEFAULT_LOAD_SPLIT = "divide"


@dataclass(frozen=True)
class FrozenScript:
    """A custom Lua script as it was at launch: what ran is recorded with the batch. A
    bundle adds its sibling files, its entry file's name and the version that ran;
    `interface` is what the script offered (runs/sysbench/script_options.py: its options
    and commands, discovered at launch) and `options` the plan's values for them. Rows
    frozen before bundles read with the defaults: one file, staged as script.lua."""

    name: str
    content: str
    files: dict[str, str] = field(default_factory=dict)
    entry: str = ""
    version: int = 0
    digests: dict[str, str] = field(default_factory=dict)
    interface: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: object) -> FrozenScript | None:
        if not isinstance(data, Mapping):
            return None
        interface = data.get("interface")
        return cls(
            name=str(data.get("name") or ""),
            content=str(data.get("content") or ""),
            files=dict(data.get("files") or {}),
            entry=str(data.get("entry") or ""),
            version=int(data.get("version") or 0),
            digests=dict(data.get("digests") or {}),
            interface=dict(interface) if isinstance(interface, Mapping) else None,
            options=dict(data.get("options") or {}),
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "content": self.content}
        if self.version:  # a row of before bundles keeps its two keys
            data.update(
                files=dict(self.files),
                entry=self.entry,
                version=self.version,
                digests=dict(self.digests),
                interface=self.interface,
                options=dict(self.options),
            )
        return data

    @property
    def staged_files(self) -> dict[str, str]:
        """The files as they are staged beside sysbench's config file, the entry first."""
        return {self.entry_name: self.content, **self.files}

    @property
    def entry_name(self) -> str:
        return self.entry or "script.lua"


@dataclass(frozen=True)
class FrozenPlan:
    """What a batch runs: its test, options, matrix, policies and hosts, frozen at launch."""

    test: str = ""
    options: dict[str, Any] = field(default_factory=dict)  # sysbench option → value
    threads: list[int] = field(default_factory=list)
    server_settings: dict[str, list[str]] = field(default_factory=dict)  # setting → its values
    option_axes: dict[str, list[OptionValue]] = field(default_factory=dict)
    repeats: int = 1
    auto: dict[str, Any] = field(default_factory=dict)
    warmup_s: float = 0
    order_policy: str | None = None
    dataset_policy: str | None = None
    cleanup: bool = True
    seed: int | None = None
    target: dict[str, Any] | None = None  # Target.describe(): everything but the password
    # The servers axis's targets: each target's describe() with its "id", the first the
    # baseline; empty when the plan has one target.
    targets: list[dict[str, Any]] = field(default_factory=list)
    # The tests axis: [{"test", "options", "family"}]; empty when the plan has one test.
    tests: list[dict[str, Any]] = field(default_factory=list)
    # The servers axis beyond its targets: installs, configs (with their text), the warm or
    # cold start after a restart (Plan.servers; params before migration 0016 named it
    # server_axes, and a params without it has none).
    servers: dict[str, Any] = field(default_factory=dict)
    load_host: str | None = None  # its name
    extra_load_hosts: list[int] = field(default_factory=list)  # their ids
    load_split: str = DEFAULT_LOAD_SPLIT
    quiet_wait_s: int = 0  # before each cell, wait up to this long for quiet hosts
    script: FrozenScript | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys a launch does not write

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None) -> FrozenPlan:
        """The frozen plan of a stored `Batch.params`; missing keys take their defaults."""
        params = params or {}
        known = {f.name for f in fields(cls)} - {"extra"}
        given = {k: v for k, v in params.items() if k in known and v is not None}
        script = FrozenScript.from_json(given.pop("script", None))
        return cls(
            **_copied(given),
            script=script,
            extra={k: v for k, v in params.items() if k not in known},
        )

    def to_params(self) -> dict[str, Any]:
        """The JSON-ready dict to store in `Batch.params`."""
        params = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        params["script"] = self.script.to_json() if self.script else None
        return {**_copied(params), **self.extra}

    @property
    def target_name(self) -> str | None:
        return (self.target or {}).get("name")

    @property
    def report_interval(self) -> object:
        """The plan's fixed --report-interval, when it set one."""
        return self.options.get("report-interval")


def _copied(values: dict[str, Any]) -> dict[str, Any]:
    """Lists and dicts copied one level down: a frozen plan shares nothing with its row."""
    return {
        k: dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v
        for k, v in values.items()
    }
