"""What the server accounted for inside itself over a run, and what of it moved between
two cells: its waits per transaction and its statement digests.

A run's `counters["inside"]` (made by `inside_summary` from the sampler's snapshots,
runs/targets/inside.py):

- `waits`: MySQL/MariaDB, the deltas of performance_schema's wait summaries over the run,
  each as waits and milliseconds per transaction; PostgreSQL, the sampled profile of the
  waits in progress (ASH-style): a wait seen in n of S looks holds on average n/S backends,
  which over a run of D seconds and X transactions is n/S x D / X seconds per transaction.
  `source` says which. The sampled figure is an estimate: its error is about
  1/sqrt(n) of it, and waits shorter than the sampling interval are seen only in
  proportion to their share of the time.
- `digests`: per statement digest (performance_schema) or query id (pg_stat_statements),
  calls, total and mean latency, rows examined (MySQL) or shared blocks (PostgreSQL) and
  rows sent per call; benchdash's own statements are left out.
- `readable`: whether the server gave them, and when not, why and the fix.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runs.analysis.results import FINISHED_WELL, RunFigures, series_label

TOP = 15  # waits and digests kept per run
PS_PER_MS = 1e9
# benchdash's own statements on its sampling connection: not the benchmark's
OWN = (
    "performance_schema", "information_schema", "show ", "pg_stat", "pg_catalog",
    "pg_settings", "pg_extension", "pg_database", "@@", "current_user", "benchdash_dataset",
    "pg_backend_pid", "server_version_num", "current_setting",
)  # fmt: skip
# what a wait is, in words, by its name's beginning
LABELS = (
    ("wait/io/file/sql/binlog", "binary log file I/O (writes and syncs)"),
    ("wait/io/file/innodb/innodb_log_file", "redo log file I/O"),
    ("wait/io/file/innodb/innodb_data_file", "data file I/O"),
    ("wait/io/file/innodb/innodb_temp_file", "temporary file I/O"),
    ("wait/io/table/sql/handler", "table I/O (row reads and writes)"),
    ("wait/lock/table/sql/handler", "table locks"),
    ("wait/io/socket", "network socket"),
    ("IO:WALSync", "WAL sync"),
    ("IO:WALWrite", "WAL write"),
    ("IO:DataFileRead", "data file read"),
    ("LWLock:WALWrite", "waiting for another backend's WAL write"),
    ("LWLock:WALInsert", "WAL insertion lock"),
    ("Lock:transactionid", "row lock held by another transaction"),
    ("Lock:tuple", "row lock (tuple)"),
    ("Client:ClientRead", "reading the client's next statement"),
    ("CPU", "on CPU (no wait)"),
)
MOVED_MS = 0.02  # a wait moved when it changed by this much per transaction...
MOVED_SHARE = 0.2  # ...and by a fifth of the larger side
MOVED_SHOWN = 3


def label(event: str) -> str:
    return next((words for prefix, words in LABELS if event.startswith(prefix)), event)


def inside_summary(
    raw: Mapping[str, Any], *, transactions: float, duration_s: float = 0.0
) -> dict[str, Any]:
    """The run's waits and digests from the sampler's `raw` snapshots ("first", "last",
    "waits": the sampled profile), per transaction."""
    readable = dict(raw.get("readable") or {})
    summary: dict[str, Any] = {"readable": readable, "transactions": transactions}
    first, last = raw.get("first"), raw.get("last")
    if first and last:
        summary["duration_s"] = round(float(last.get("at", 0)) - float(first.get("at", 0)), 3)
        summary["digests"] = _digests(first.get("digests", {}), last.get("digests", {}))
        if "waits" in first and "waits" in last:
            summary["waits"] = _summary_waits(first["waits"], last["waits"], transactions)
            summary["waits_source"] = "performance_schema"
    profile = raw.get("waits")
    if profile:
        span = duration_s or float(summary.get("duration_s") or 0)
        summary["sampled"] = profile
        if "waits" not in summary:
            summary["waits"] = _sampled_waits(profile, transactions, span)
            summary["waits_source"] = f"sampled every {profile.get('interval_s')} s"
    return summary


def _summary_waits(
    first: Mapping[str, Sequence[float]], last: Mapping[str, Sequence[float]], tx: float
) -> list[dict[str, Any]]:
    waits = []
    for event, (count, ps) in last.items():
        before = first.get(event, (0.0, 0.0))
        calls, ms = count - before[0], (ps - before[1]) / PS_PER_MS
        if calls > 0 and ms > 0:
            waits.append(_wait(event, calls, ms, tx))
    return _top(waits)


def _sampled_waits(profile: Mapping[str, Any], tx: float, span_s: float) -> list[dict[str, Any]]:
    looks = int(profile.get("samples") or 0)
    if not looks:
        return []
    waits = []
    for event, seen in (profile.get("waits") or {}).items():
        sessions = seen / looks  # backends in this wait, on average
        waits.append(_wait(str(event), float(seen), sessions * span_s * 1000, tx, sessions))
    return _top(waits)


def _wait(
    event: str, count: float, ms: float, tx: float, sessions: float | None = None
) -> dict[str, Any]:
    wait = {"event": event, "label": label(event), "count": count, "ms": round(ms, 3)}
    wait["ms_per_tx"] = round(ms / tx, 4) if tx else None
    if sessions is None:
        wait["per_tx"] = round(count / tx, 4) if tx else None
    else:
        wait["sessions"] = round(sessions, 3)  # average active sessions in this wait
    return wait


def _top(waits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(waits, key=lambda w: -w["ms"])[:TOP]


def _digests(
    first: Mapping[str, Mapping[str, Any]], last: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    digests = []
    for key, now in last.items():
        text = str(now.get("text", ""))
        if any(own in text.lower() for own in OWN):
            continue
        before = first.get(key, {})
        calls = float(now.get("calls", 0)) - float(before.get("calls", 0))
        if calls <= 0:
            continue
        total_ms = (float(now.get("ps", 0)) - float(before.get("ps", 0))) / PS_PER_MS
        digest: dict[str, Any] = {
            "digest": key,
            "text": text,
            "calls": calls,
            "total_ms": round(total_ms, 3),
            "mean_ms": round(total_ms / calls, 4),
        }
        for name in ("rows_examined", "rows_sent", "blocks"):
            if name in now:
                delta = float(now[name]) - float(before.get(name, 0))
                digest[f"{name}_per_call"] = round(delta / calls, 3)
        digests.append(digest)
    return sorted(digests, key=lambda d: -d["total_ms"])[:TOP]


# --- a cell, and two cells ----------------------------------------------------------------


def cell_waits(runs: Iterable[Mapping[str, Any] | None]) -> dict[str, float]:
    """A cell's milliseconds per transaction in each wait: the median over its runs that
    have waits (a wait a run did not report counts as none there)."""
    per_run = [
        {w["event"]: float(w["ms_per_tx"]) for w in run.get("waits", []) if w.get("ms_per_tx")}
        for run in runs
        if run and run.get("waits")
    ]
    if not per_run:
        return {}
    events = {event for run in per_run for event in run}
    return {e: statistics.median(run.get(e, 0.0) for run in per_run) for e in events}


def moved(label_other: str, base: Mapping[str, float], other: Mapping[str, float]) -> str:
    """What moved in the server's waits from the baseline's cell to the other, per
    transaction, in a sentence: "+0.9 ms of binary log file I/O wait per transaction"."""
    if not base or not other:
        return ""
    changes = []
    for event in set(base) | set(other):
        before, after = base.get(event, 0.0), other.get(event, 0.0)
        change = after - before
        if abs(change) >= MOVED_MS and abs(change) >= MOVED_SHARE * max(before, after):
            changes.append((event, change, before, after))
    if not changes:
        return f"{label_other}: no wait moved per transaction (by {MOVED_MS} ms or more)"
    changes.sort(key=lambda c: -abs(c[1]))
    said = [
        f"{change:+.2f} ms of {label(event)} wait per transaction ({before:.3f} → {after:.3f})"
        for event, change, before, after in changes[:MOVED_SHOWN]
    ]
    return f"{label_other}: " + "; ".join(said)


def unreadable(inside: Mapping[str, Any] | None) -> str:
    """Why a run has no waits or digests, with the fix, when the server said."""
    readable = (inside or {}).get("readable") or {}
    if not readable or readable.get("readable"):
        return ""
    fix = f"; to read them: {readable['fix']}" if readable.get("fix") else ""
    return f"{readable.get('reason', '')}{fix}"


def cells_moved(
    base: Iterable[RunFigures], other: Iterable[RunFigures], side: str = "this side"
) -> list[dict[str, Any]]:
    """Between two sides' runs (RunFigures), cell by cell (series label and threads; by
    threads alone when each side has one series), what moved in the server's waits."""
    mine, theirs = _cells(base), _cells(other)
    single = len({label for label, _ in mine}) == 1 and len({label for label, _ in theirs}) == 1
    rows = []
    for (name, threads), waits in theirs.items():
        key = next((k for k in mine if k[1] == threads), None) if single else (name, threads)
        said = f"{side} {name}".strip() if name else side
        if key is None or key not in mine or not (sentence := moved(said, mine[key], waits)):
            continue
        rows.append({"label": name, "threads": threads, "moved": sentence})
    return rows


def _cells(runs: Iterable[RunFigures]) -> dict[tuple[str, int], dict[str, float]]:
    grouped: dict[tuple[str, int], list[Mapping[str, Any] | None]] = {}
    for run in runs:
        found = run.server_counters.inside
        if run.status in FINISHED_WELL and found:
            name = series_label(run.settings, run.axis_options, run.cell_axes)
            grouped.setdefault((name, run.threads), []).append(found)
    cells = {key: cell_waits(found) for key, found in grouped.items()}
    return {key: waits for key, waits in cells.items() if waits}
