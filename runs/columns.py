"""Typed readers of the JSON columns that code reads by key, besides a batch's params
(runs/frozen.py): a run's summary and counters, a batch's environment, its nightly check.

Each is parsed once where code reaches the row (`BatchEnvironment.load(batch.environment)`)
and read by attribute after, so a key's name and its default for older or partial rows
live in one place. Missing keys and nulls read as empty; the facts inside (a host's
facts, a server's variables) stay plain dicts: their keys are the host's and the server's.

Pure: no Django, no I/O, nothing of runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _dict(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def _number(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return list(value) if isinstance(value, list) else []


@dataclass(frozen=True)
class RunSummary:
    """`Run.summary` (and a load host's part of a cell): the figures of sysbench's steady
    report (runs/analysis/summary.py) as numbers, None where the test has none."""

    tps: float | None = None
    qps: float | None = None
    eps: float | None = None  # events/s: cpu, threads, mutex
    errors: float | None = None  # ignored errors
    latency_pct: float | None = None  # which percentile, e.g. 95
    latency_pct_ms: float | None = None
    latency_avg_ms: float | None = None
    mib_per_s: float | None = None  # memory
    read_mib_per_s: float | None = None  # fileio
    written_mib_per_s: float | None = None
    interval_batch_means: list[float] = field(default_factory=list)

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> RunSummary:
        data = data or {}
        numbers = {name: _number(data, name) for name in _FIGURES if data.get(name) is not None}
        means = [float(v) for v in _list(data, "interval_batch_means")]
        return cls(**numbers, interval_batch_means=means)

    @property
    def throughput(self) -> tuple[float | None, str]:
        """The headline rate and its unit: tps for SQL tests, events/s for cpu, threads
        and mutex, MiB/s for memory and fileio."""
        if self.tps is not None:
            return self.tps, "tps"
        if self.mib_per_s is not None:
            return self.mib_per_s, "MiB/s"
        if self.read_mib_per_s is not None or self.written_mib_per_s is not None:
            return (self.read_mib_per_s or 0) + (self.written_mib_per_s or 0), "MiB/s"
        if self.eps is not None:
            return self.eps, "events/s"
        return None, "tps"


# The summary's figures read as numbers, each a field of RunSummary.
_FIGURES = (
    "tps",
    "qps",
    "eps",
    "errors",
    "latency_pct",
    "latency_pct_ms",
    "latency_avg_ms",
    "mib_per_s",
    "read_mib_per_s",
    "written_mib_per_s",
)


@dataclass(frozen=True)
class BatchEnvironment:
    """`Batch.environment`: what a batch ran in, recorded before its first setting changed
    (runs/execution/environment.py), and the preflight it started with."""

    server_version: str = ""
    server_variables: dict[str, str] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)  # version, variables, engine details
    load_host: dict[str, Any] = field(default_factory=dict)  # the load host's facts
    server_host: dict[str, Any] = field(default_factory=dict)  # the database host's facts
    reference: dict[str, Any] = field(default_factory=dict)  # cores x 2 + disks
    preflight: dict[str, Any] = field(default_factory=dict)
    imported: dict[str, Any] = field(default_factory=dict)  # an imported log's header

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> BatchEnvironment:
        data = data or {}
        server = _dict(data, "server")
        return cls(
            server_version=str(server.get("version") or ""),
            server_variables=_dict(server, "variables"),
            server=server,
            load_host=_dict(data, "load_host"),
            server_host=_dict(data, "server_host"),
            reference=_dict(data, "reference"),
            preflight=_dict(data, "preflight"),
            imported=_dict(data, "imported"),
        )

    @property
    def sysbench_version(self) -> str:
        """The load host's sysbench version, "unknown" before it was recorded."""
        return str(self.load_host.get("sysbench_version") or "unknown")


@dataclass(frozen=True)
class RunCounters:
    """`Run.counters`: the server's counters over a run (runs/analysis/counters.py):
    cumulative counters as deltas, ratios derived from them, gauges as read."""

    deltas: dict[str, float] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict)
    gauges: dict[str, dict[str, float]] = field(default_factory=dict)  # name → avg, max

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> RunCounters:
        data = data or {}
        return cls(
            deltas=_dict(data, "deltas"),
            derived=_dict(data, "derived"),
            gauges=_dict(data, "gauges"),
        )

    @property
    def transactions(self) -> float:
        return float(self.derived.get("transactions") or 0)


@dataclass(frozen=True)
class NightCheck:
    """`Batch.analysis` of a nightly batch: its verdict against the past nights
    (runs/services/history.py); other batches have none (status None)."""

    status: str | None = None
    summary: str | None = None
    rule: dict[str, Any] | None = None  # the rule the verdict applied, said and in figures
    cells: list[dict[str, Any]] = field(default_factory=list)  # each cell's checks

    @classmethod
    def load(cls, data: Mapping[str, Any] | None) -> NightCheck:
        data = data or {}
        status, summary, rule = data.get("status"), data.get("summary"), data.get("rule")
        return cls(
            status=str(status) if status is not None else None,
            summary=str(summary) if summary is not None else None,
            rule=dict(rule) if isinstance(rule, Mapping) else None,
            cells=[dict(c) for c in _list(data, "cells") if isinstance(c, Mapping)],
        )
