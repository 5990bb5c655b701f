"""What a batch's runs say, one run at a time, for the results and compare pages.

Each run is read once as a RunFigures: its settings, option-axis values and cell axes,
its status and what it measured, with the key and the label of the series it belongs to
(series_key, series_label) and which variables differ between runs. The runs grouped
into series, their points and peaks, are series.py's; each series' ratio to a baseline is
the report table's (report_table.py), the geometric mean's ratio stats.py's; the chart
shapes are in charts.py, the comparison of two batches or runs in comparison.py.

Pure: no Django, no I/O. Runs come in as RunFigures, made from any object with the
fields of a Run (see RunFigures.of).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import cached_property
from typing import Any

from runs.analysis.axes import (
    CELL_AXES,
    TARGET,
    axis_options,
    cell_axes,
    run_axes,
    target_on_axis,
)
from runs.columns import Bottleneck, HostSummary, RunCounters, RunSummary

__all__ = ["TARGET", "axis_options", "cell_axes", "run_axes", "target_on_axis"]  # read here too

# Long server variable names, shortened in labels: `flush=1 sync_binlog=0` reads at a look.
SHORT_NAMES = {
    "innodb_flush_log_at_trx_commit": "flush",
    "innodb_adaptive_hash_index": "ahi",
    "innodb_thread_concurrency": "thread_concurrency",
}


# --- runs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFigures:
    """One run as the results pages need it."""

    id: int
    position: int
    round: int
    threads: int
    settings: dict[str, str]
    axis_options: dict[str, str]
    status: str
    summary: dict[str, Any]
    counters: dict[str, Any] = field(default_factory=dict)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str = ""
    # what the machines did, and what limited the run (runs/analysis/host_metrics/)
    host_summary: dict[str, Any] = field(default_factory=dict)
    bottleneck: dict[str, Any] = field(default_factory=dict)
    outcome: str = ""  # ok, forced_shutdown, error; "" while the run has no result
    # sysbench's final report without its histogram, and the raw log's error lines: the
    # results' per-run facts (runs/analysis/run_facts.py), read by the runs query itself
    # (runs/services/answers/results.py results_runs), empty where it does not read them
    final_report: dict[str, Any] = field(default_factory=dict)
    error_lines: str = ""
    # the cell's test, install and config where the plan varies them (axes.cell_axes): a
    # cell of its own as much as a setting's value is
    cell_axes: dict[str, str] = field(default_factory=dict)
    # the cell's key (runs/sysbench/cells.py Cell.key): an auto mode's new runs extend it
    cell_key: str = ""

    @classmethod
    def of(cls, run: Any) -> RunFigures:
        """From a Run (or anything with its fields)."""
        return cls(
            id=run.pk,
            position=run.position,
            round=run.round,
            threads=run.threads,
            settings=dict(run.settings or {}),
            axis_options=run_axes(run),
            status=run.status,
            summary=dict(run.summary or {}),
            counters=dict(run.counters or {}),
            started_at=run.started_at,
            finished_at=run.finished_at,
            error=run.error,
            host_summary=dict(run.host_summary or {}),
            bottleneck=dict(run.bottleneck or {}),
            outcome=getattr(run, "outcome", ""),
            final_report=dict(getattr(run, "final_report", None) or {}),
            error_lines=getattr(run, "error_lines", None) or "",
            cell_axes=cell_axes(run.cell_key),
            cell_key=run.cell_key,
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON (times in ISO 8601): a finished batch's figures are stored with its
        answer, for the compare page to read without its runs."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("started_at", "finished_at"):
            data[name] = data[name].isoformat() if data[name] else None
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunFigures:
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        for name in ("started_at", "finished_at"):
            if values.get(name):
                values[name] = datetime.fromisoformat(values[name])
        return cls(**values)

    @cached_property
    def series_key(self) -> str:
        return series_key(self.settings, self.axis_options, self.cell_axes)

    @cached_property
    def throughput(self) -> float | None:
        """The headline rate (read once: a batch's results ask each run 80 times)."""
        return self.figures.throughput[0]

    @cached_property
    def figures(self) -> RunSummary:
        """The summary's figures, as numbers (read once: a comparison asked 3,200 times)."""
        return RunSummary.load(self.summary)

    # Each JSON column read once into its typed (frozen) object: a page asks many times.
    @cached_property
    def server_counters(self) -> RunCounters:
        return RunCounters.load(self.counters)

    @cached_property
    def host_figures(self) -> HostSummary:
        return HostSummary.load(self.host_summary)

    @cached_property
    def limit(self) -> Bottleneck:
        """What limited the run (`Run.bottleneck`)."""
        return Bottleneck.load(self.bottleneck)

    @property
    def latency_ms(self) -> float | None:
        return self.figures.latency_pct_ms

    @cached_property
    def label(self) -> str:
        if not self.settings and not self.axis_options and not self.cell_axes:
            return f"threads={self.threads}"
        named = series_label(self.settings, self.axis_options, self.cell_axes)
        return f"threads={self.threads} {named}"


def throughput(summary: Mapping[str, Any]) -> tuple[float | None, str]:
    """The headline rate of a run and its unit: tps for SQL tests, events/s for cpu,
    threads and mutex, MiB/s for memory and fileio."""
    return RunSummary.load(summary).throughput


def throughput_unit(runs: Iterable[RunFigures]) -> str:
    for run in runs:
        value, unit = throughput(run.summary)
        if value is not None:
            return unit
    return "tps"


# --- a series' key and label ---------------------------------------------------------------


def series_key(
    settings: Mapping[str, str], options: Mapping[str, str], axes: Mapping[str, str] | None = None
) -> str:
    # "axes" only where a test, install or config varies: other plans keep their keys
    key = {"settings": dict(settings), "options": dict(options)}
    return _KEY_JSON.encode({**key, "axes": dict(axes)} if axes else key)


_KEY_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # json.dumps's, made once


def series_label(
    settings: Mapping[str, str], options: Mapping[str, str], axes: Mapping[str, str] | None = None
) -> str:
    # The test and the server first: "test=oltp_read_write target=db-b config=b0e1 flush=2"
    # reads as what ran where, then how set.
    axes = axes or {}
    parts = [f"test={axes['test']}"] if "test" in axes else []
    parts += [f"{TARGET}={options[TARGET]}"] if TARGET in options else []
    parts += [f"{name}={axes[name]}" for name in CELL_AXES if name in axes and name != "test"]
    parts += [f"{SHORT_NAMES.get(k, k)}={settings[k]}" for k in sorted(settings)]
    parts += [f"{k}={options[k]}" for k in sorted(options) if k != TARGET]
    return " ".join(parts) or "all runs"


# A run's statuses: the ones whose figures count, and the ones not run (yet).
FINISHED_WELL = frozenset({"done"})
NOT_RUN = frozenset({"queued", "skipped", "waiting", "preparing", "running"})


# --- differences between runs ----------------------------------------------------------------


def differing_keys(mappings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Names whose value is not the same in every mapping (absent counts as a value)."""
    if len(mappings) < 2:
        return []
    names = {k for m in mappings for k in m}
    missing = object()
    return sorted(
        name
        for name in names
        if len({json.dumps(m.get(name, missing), default=str) for m in mappings}) > 1
    )
