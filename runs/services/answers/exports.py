"""A batch's runs and samples as CSV and JSON, and a run's samples as CSV, written piece by
piece as the rows are read (server-side cursors, `.iterator()`): memory stays flat
however many samples there are, and the first bytes leave before the last row is read.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from runs.analysis import run_facts
from runs.columns import Bottleneck, HostFigures, HostSummary
from runs.models import SAMPLE_FIGURES, Batch, Run
from runs.services import run_selectors, selectors
from runs.services.answers import tpcc

CHUNK_ROWS = 2000  # rows fetched per round trip
PIECE_ROWS = 250  # rows written per piece of the answer (~20-70 kB)

RUN_FIELDS = (
    "id",
    "position",
    "round",
    "threads",
    "status",
    "outcome",
    "exit_code",
    "error_kind",
    "error",
    "started_at",
    "finished_at",
)
# what else a cell ran beyond its target and settings: its test, and its server's install
# and config on a servers axis ("" where the plan has none)
CELL_FIELDS = ("test", "install", "config")
SUMMARY_FIELDS = (
    "tps",
    "qps",
    "latency_pct",
    "latency_pct_ms",
    "latency_min_ms",
    "latency_avg_ms",
    "latency_max_ms",
    "errors",
    "reconnects",
    "unfinished_transactions",
    "transactions",
    "queries",
    "eps",
    "mib_per_s",
    "total_time_s",
)
REPORT_FIELDS = run_facts.REPORT_FIGURES
# The host summary's headline figures (runs/analysis/host_metrics/host_summary.py), a column each.
HOST_FIELDS = (
    "server_busy_pct",
    "server_iowait_pct",
    "server_iops",
    "server_mbs",
    "server_ctxt_per_tx",
    "server_cpu_us_per_tx",
    "load_busy_pct",
    "bottleneck",
    "client_bound",
    "same_machine",
)
# A TPC-C batch's runs (runs/services/answers/tpcc.py): tpmC where the script prints its
# NewOrders, ignored errors per second, warehouses, and the mix's rates where printed.
TPCC_FIELDS = (
    "tpmc",
    "ignored_errors_per_s",
    "warehouses",
    "table_sets",
    "total_warehouses",
    *(key for key, _ in tpcc.MIX_KEYS),
)
# <, > and & escaped as \u003C...: still JSON, and inert if ever shown as HTML.
_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


# --- CSV ------------------------------------------------------------------------------------


def batch_runs_csv(batch: Batch) -> Iterator[str]:
    """One row a run: its parameters, summary, the final report's other figures, and what
    the machines did."""
    figures = tpcc.batch_tpcc_runs(batch)  # None: not TPC-C, and no columns of it
    runs = selectors.export_runs(batch).iterator(chunk_size=CHUNK_ROWS)
    rows = (
        _run_row(run) + ([] if figures is None else _tpcc_cells(figures.get(run.pk)))
        for run in runs
    )
    header = [
        *RUN_FIELDS,
        "target",
        *CELL_FIELDS,
        "settings",
        "options",
        *SUMMARY_FIELDS,
        *REPORT_FIELDS,
        *HOST_FIELDS,
        *(() if figures is None else TPCC_FIELDS),
    ]
    return _csv(header, rows)


def _tpcc_cells(run: tpcc.TpccRun | None) -> list[Any]:
    if run is None:  # a failed run: no figures
        return [None] * len(TPCC_FIELDS)
    mix = {m.name: m.per_s for m in run.mix}
    return [
        run.tpmc,
        run.errors_per_s,
        run.warehouses,
        run.table_sets,
        run.total_warehouses,
        *(mix.get(name) for _, name in tpcc.MIX_KEYS),
    ]


def _run_row(run: Run) -> list[Any]:
    report = run_facts.report_figures(run.reports)
    return [
        *(getattr(run, f) for f in RUN_FIELDS),
        _target_name(run),
        *(getattr(run, f) for f in CELL_FIELDS),
        json.dumps(run.settings, sort_keys=True),
        json.dumps(run.options, sort_keys=True),
        *(run.summary.get(f) for f in SUMMARY_FIELDS),
        *(report[f] for f in REPORT_FIELDS),
        *_host_figures(run),
    ]


def _target_name(run: Run) -> str | None:
    """The server the run measured: its own target (a servers axis), else the batch's."""
    target = run.target if run.target_id is not None else run.batch.target
    return target.name if target is not None else None


def _host_figures(run: Run) -> list[Any]:
    hosts = HostSummary.load(run.host_summary)
    server = hosts.first("server") or HostFigures()
    load = hosts.first("load") or HostFigures()
    verdict = Bottleneck.load(run.bottleneck)
    # a run not classified leaves the bottleneck's cells empty, not "False"
    guards = (verdict.kind, verdict.client_bound, verdict.same_machine) if run.bottleneck else ()
    return [
        server.busy_pct,
        server.iowait_pct,
        server.iops,
        server.mbs,
        server.ctxt_per_tx,
        server.cpu_us_per_tx,
        load.busy_pct,
        *(guards or ("", "", "")),
    ]


def batch_samples_csv(batch: Batch) -> Iterator[str]:
    """One row a sample, runs in their order."""
    rows = (
        selectors.export_samples(batch)
        .values_list("run_id", "run__position", *SAMPLE_FIGURES)
        .iterator(chunk_size=CHUNK_ROWS)
    )
    return _csv(["run_id", "run_position", *SAMPLE_FIGURES], rows)


def run_samples_csv(run: Run, *, after: int, limit: int) -> Iterator[str]:
    """A run's samples with seq > after, at most `limit`: the API's CSV answer."""
    rows = (
        (*row[:-1], _timestamp(row[-1]))
        for row in run_selectors.samples_after_query(run, after=after, limit=limit)
        .values_list(*SAMPLE_FIGURES, "received_at")
        .iterator(chunk_size=CHUNK_ROWS)
    )
    return _csv([*SAMPLE_FIGURES, "received_at"], rows)


def _timestamp(value: datetime) -> str:
    # As the API's JSON gives it (Django REST framework's DateTimeField).
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def csv_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """Any table as CSV, streamed (the relative table's export)."""
    return _csv(header, rows)


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for chunk in _chunks(rows):
        writer.writerows(chunk)
        yield _take(out)
    yield _take(out)


def _take(out: io.StringIO) -> str:
    text = out.getvalue()
    out.seek(0)
    out.truncate()
    return text


def _chunks(rows: Iterable[Any], size: int = PIECE_ROWS) -> Iterator[list[Any]]:
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


# --- JSON -----------------------------------------------------------------------------------


def batch_json(batch: Batch) -> Iterator[str]:
    """The batch, its runs and every sample: what the JSON export holds, as one document
    written run by run (two queries: the runs, and the samples in the runs' order)."""
    document = json.dumps({"batch": _batch_fields(batch)}, cls=DjangoJSONEncoder)
    yield document[:-1].translate(_ESCAPES) + ', "runs": ['
    samples = _samples_by_run(batch)
    pending = next(samples, None)
    for index, run in enumerate(selectors.export_runs(batch).iterator(chunk_size=CHUNK_ROWS)):
        head = json.dumps({**_run_fields(run), "samples": []}, cls=DjangoJSONEncoder)
        yield ("," if index else "") + "\n" + head[:-2].translate(_ESCAPES)  # "samples": [
        if pending is not None and pending[0] == run.pk:
            yield from _sample_objects(pending[1])
            pending = next(samples, None)
        yield "]}"
    yield "\n]}\n"


def _batch_fields(batch: Batch) -> dict[str, Any]:
    return {
        "id": batch.pk,
        "plan": batch.plan.name if batch.plan else None,
        "label": batch.label,
        "target": batch.target.name if batch.target else None,
        "status": batch.status,
        "created_at": batch.created_at,
        "started_at": batch.started_at,
        "finished_at": batch.finished_at,
        "params": batch.params,
        "environment": batch.environment,
        "warnings": batch.warnings,
    }


def _run_fields(run: Run) -> dict[str, Any]:
    return {
        **{f: getattr(run, f) for f in RUN_FIELDS},
        "target": _target_name(run),
        **{f: getattr(run, f) for f in CELL_FIELDS},
        "settings": run.settings,
        "verified_settings": run.verified_settings,
        "options": run.options,
        "summary": run.summary,
        "reports": run.reports,  # sysbench's final (and checkpoint) reports, as parsed
        "counters": run.counters,
        "host_summary": run.host_summary,
        "bottleneck": run.bottleneck,
    }


def _samples_by_run(batch: Batch) -> Iterator[tuple[int, Iterator[tuple[Any, ...]]]]:
    """(run id, its sample rows) in the runs' order, from one server-side cursor."""
    rows = (
        selectors.export_samples(batch)
        .values_list("run_id", *SAMPLE_FIGURES)
        .iterator(chunk_size=CHUNK_ROWS)
    )
    return itertools.groupby(rows, key=itemgetter(0))


def _sample_objects(rows: Iterator[tuple[Any, ...]]) -> Iterator[str]:
    for index, chunk in enumerate(_chunks(rows)):
        objects = [dict(zip(SAMPLE_FIGURES, row[1:], strict=True)) for row in chunk]
        try:
            text = json.dumps(objects, allow_nan=False, separators=(",", ":"))
        except ValueError:  # a non-finite figure, stored before the parser refused them
            objects = [{k: _finite(v) for k, v in o.items()} for o in objects]
            text = json.dumps(objects, separators=(",", ":"))
        yield ("," if index else "") + text[1:-1]


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value
