"""What changed: a flagged night's environment against its baseline nights'.

A regression is only useful with its cause. Every batch records what it ran in
(Batch.environment: the server's version and variables, the load host's and the server
host's facts, sysbench's version) and every run what the machines did (Run.host_summary,
Run.bottleneck). This module lists what differs between the flagged night and the nights
it was judged against:

- facts (server version, kernels, OS, CPU, memory, sysbench version, load host; on a
  night over several targets or installs, each target's version and address as its runs
  recorded them): a change when the flagged night's value is none of the baseline
  nights' values;
- server variables (a further target's named "<target>: <variable>", from its own
  snapshot): a change when the baseline nights all agreed on one value and the
  flagged night has another (a variable that moved between the baseline nights, such as
  a binary log position, is not a cause but a clock);
- the telemetry summary, where recorded: the median over the night's runs of each host
  role's CPU busy %, iowait %, IOPS, context switches per transaction, and the database
  process's CPU µs per transaction; a change when it moved by at least MIN_TELEMETRY_PCT
  from the baseline nights' median and beyond NOISE_SIGMAS times their noise (1.4826 x MAD);
- the bottleneck of each cell, when its kind is not the baseline nights' most common one.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runs.analysis.nightly.regressions import figure
from runs.analysis.noise import stats
from runs.analysis.percent import signed_pct
from runs.columns import BatchEnvironment, Bottleneck, HostSummary

MIN_TELEMETRY_PCT = 25.0
NOISE_SIGMAS = 3.0

FACT, VARIABLE, TELEMETRY, BOTTLENECK = "fact", "variable", "telemetry", "bottleneck"
DATABASE_CPU = "database CPU \u00b5s per transaction"

# (name shown, where in the environment, key)
_FACTS = (
    ("server version", "server", "version"),
    ("load host", "load_host", "host"),
    ("load host name", "load_host", "hostname"),
    ("load host kernel", "load_host", "kernel"),
    ("load host OS", "load_host", "os"),
    ("load host CPU", "load_host", "cpu_model"),
    ("load host cores", "load_host", "cpu_cores"),
    ("load host memory", "load_host", "memory_bytes"),
    ("load host CPU governor", "load_host", "cpu_governor"),
    ("sysbench version", "load_host", "sysbench_version"),
    ("server host kernel", "server_host", "kernel"),
    ("server host OS", "server_host", "os"),
    ("server host CPU", "server_host", "cpu_model"),
    ("server host cores", "server_host", "cpu_cores"),
    ("server host memory", "server_host", "memory_bytes"),
    ("server host CPU governor", "server_host", "cpu_governor"),
)


@dataclass(frozen=True)
class RunTelemetry:
    """What one run recorded of the machines: its cell's label, Run.host_summary and
    Run.bottleneck as stored."""

    label: str
    host_summary: Mapping[str, Any] = field(default_factory=dict)
    bottleneck: Mapping[str, Any] = field(default_factory=dict)
    # What the run read of its own target: {name, host, port, version} (environment.py)
    target: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NightFacts:
    """One night's environment, flattened for comparison."""

    facts: dict[str, str]
    variables: dict[str, str]
    telemetry: dict[str, float]
    bottlenecks: dict[str, str]  # cell label -> kind


def night_facts(environment: Mapping[str, Any], runs: Sequence[RunTelemetry]) -> NightFacts:
    """A night's facts from Batch.environment and its runs' telemetry."""
    env = BatchEnvironment.load(environment)
    parts = {"server": env.server, "load_host": env.load_host, "server_host": env.server_host}
    facts = {
        name: str(value)
        for name, part, key in _FACTS
        if (value := parts[part].get(key)) not in (None, "")
    }
    return NightFacts(
        facts={**facts, **_target_facts(env, runs)},
        variables={
            **{str(k): str(v) for k, v in env.server_variables.items()},
            **_further_variables(env),
        },
        telemetry=_telemetry(runs),
        bottlenecks=_bottlenecks(runs),
    )


def _target_facts(env: BatchEnvironment, runs: Sequence[RunTelemetry]) -> dict[str, str]:
    """Each target's version and address as its own runs read them: "server version on
    <target>" (several values on an installs axis), "server address of <target>". One
    target that ran the batch's own version says nothing the server version does not."""
    seen: dict[str, set[str]] = {}
    for run in runs:
        name = str(run.target.get("name") or "")
        if not name:
            continue
        seen.setdefault(f"server version on {name}", set()).add(str(run.target.get("version")))
        address = f"{run.target.get('host') or 'localhost'}:{run.target.get('port') or ''}"
        seen.setdefault(f"server address of {name}", set()).add(address)
    facts = {key: ", ".join(sorted(values)) for key, values in seen.items()}
    versions = [v for k, v in facts.items() if k.startswith("server version on")]
    if len(versions) == 1 and versions[0] == env.server_version:
        facts = {k: v for k, v in facts.items() if not k.startswith("server version on")}
    return facts


def _further_variables(env: BatchEnvironment) -> dict[str, str]:
    """A further target's variables, as the batch recorded them before its first change."""
    named = {}
    for recorded in env.targets.values():
        if isinstance(recorded, Mapping) and isinstance(recorded.get("variables"), Mapping):
            name = recorded.get("name", "")
            named.update({f"{name}: {k}": str(v) for k, v in recorded["variables"].items()})
    return named


def _telemetry(runs: Sequence[RunTelemetry]) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for run in runs:
        for host in HostSummary.load(run.host_summary).hosts:
            db = host.db
            figures = {
                "CPU busy %": host.busy_pct,
                "iowait %": host.iowait_pct,
                "IOPS": host.iops,
                "context switches per transaction": host.ctxt_per_tx,
            }
            named = {f"{host.role or 'host'} {name}": v for name, v in figures.items()}
            # The database process's own, named once (with its host's role before it, it
            # read "server server CPU µs").
            named[DATABASE_CPU] = db.cpu_us_per_tx if db else None
            for name, value in named.items():
                if value is not None:
                    values.setdefault(name, []).append(value)
    return {name: statistics.median(v) for name, v in values.items()}


def _bottlenecks(runs: Sequence[RunTelemetry]) -> dict[str, str]:
    kinds: dict[str, Counter[str]] = {}
    for run in runs:
        kind = Bottleneck.load(run.bottleneck).kind
        if kind:
            kinds.setdefault(run.label, Counter())[kind] += 1
    return {label: counts.most_common(1)[0][0] for label, counts in kinds.items()}


# --- the differences --------------------------------------------------------------------------


def night_changes(flagged: NightFacts, baseline: Sequence[NightFacts]) -> list[dict[str, Any]]:
    """What differs between the flagged night and its baseline nights, facts first, then
    variables, telemetry and bottlenecks; empty without a baseline night."""
    if not baseline:
        return []
    return [
        *_fact_changes(flagged, baseline),
        *_variable_changes(flagged, baseline),
        *_telemetry_changes(flagged, baseline),
        *_bottleneck_changes(flagged, baseline),
    ]


def _change(
    kind: str, name: str, before: Any, after: Any, nights: int, text: str
) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "before": before,
        "after": after,
        "nights": nights,
        "text": text,
    }


def _fact_changes(flagged: NightFacts, baseline: Sequence[NightFacts]) -> list[dict[str, Any]]:
    changes = []
    for name in flagged.facts:  # _FACTS' order, then each target's
        seen = [n.facts[name] for n in baseline if name in n.facts]
        after = flagged.facts.get(name)
        if not seen or after is None or after in seen:
            continue
        before = _most_common(seen)
        others = "" if len(set(seen)) == 1 else f" (and {len(set(seen)) - 1} other values)"
        text = f"{name}: {before}{others} \u2192 {after}"
        changes.append(_change(FACT, name, before, after, len(seen), text))
    return changes


def _variable_changes(flagged: NightFacts, baseline: Sequence[NightFacts]) -> list[dict[str, Any]]:
    recorded = [n.variables for n in baseline if n.variables]
    if not recorded or not flagged.variables:
        return []
    changes = []
    for name in sorted(set(flagged.variables).union(*recorded)):
        values = {v.get(name) for v in recorded}
        if len(values) != 1:
            continue  # moved between the baseline nights: a clock, not a cause
        (before,) = values
        after = flagged.variables.get(name)
        if after != before:
            text = f"{name}: {_shown(before)} \u2192 {_shown(after)}"
            changes.append(_change(VARIABLE, name, before, after, len(recorded), text))
    return changes


def _shown(value: str | None) -> str:
    return "(not set)" if value is None else value


def _telemetry_changes(flagged: NightFacts, baseline: Sequence[NightFacts]) -> list[dict[str, Any]]:
    changes = []
    for name, after in flagged.telemetry.items():
        seen = [n.telemetry[name] for n in baseline if name in n.telemetry]
        if not seen:
            continue
        before = statistics.median(seen)
        if before == 0:
            continue
        moved = (after - before) / abs(before) * 100
        noise = stats.robust_noise(seen) if len(seen) >= 3 else 0.0
        if abs(moved) >= MIN_TELEMETRY_PCT and abs(after - before) > NOISE_SIGMAS * noise:
            text = f"{name}: {figure(before)} \u2192 {figure(after)} ({signed_pct(moved)})"
            changes.append(_change(TELEMETRY, name, before, after, len(seen), text))
    return changes


def _bottleneck_changes(
    flagged: NightFacts, baseline: Sequence[NightFacts]
) -> list[dict[str, Any]]:
    changes = []
    for label, after in sorted(flagged.bottlenecks.items()):
        seen = [n.bottlenecks[label] for n in baseline if label in n.bottlenecks]
        if not seen:
            continue
        before = _most_common(seen)
        if after != before:
            text = f"{label} bottleneck: {before} \u2192 {after}"
            changes.append(_change(BOTTLENECK, label, before, after, len(seen), text))
    return changes


def _most_common(values: Sequence[str]) -> str:
    return Counter(values).most_common(1)[0][0]
