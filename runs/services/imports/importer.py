"""Importing a sysbench log written elsewhere: years of 0.4, 0.5 and 1.0 outputs.

A log becomes one run in a batch of its own (no plan, launched_by "import"), with the
parameters its header and its command line show, its samples, summary, reports,
histogram and raw log. A log that holds only errors imports as a failed run with its
error; lines the parser cannot place are kept in the raw log and counted, never fatal.

The log is read line by line and its samples stored as they are parsed (store.py),
in one transaction: memory stays flat however long the log, and a log refused halfway
(too large) leaves nothing behind. A dry run does the same and rolls back.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from runs.analysis import charts, run_facts
from runs.analysis.summary import summary_of
from runs.columns import RunSummary
from runs.errors import InvalidInput
from runs.frozen import FrozenPlan
from runs.models import Batch, LaunchedBy, Run, Status, Target
from runs.services import permissions, run_selectors
from runs.services.answers import stored_results, timeseries
from runs.services.imports.store import ImportStore, log_lines
from runs.sysbench.parser import IntervalSample, OutputParser, ParseResult, QueueSample

_TEST_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Which header or report figure tells a non-SQL test apart when the log does not say.
_TEST_CLUES = (
    ("cpu_max_prime", "cpu"),
    ("file_num", "fileio"),
    ("file_total_size", "fileio"),
    ("memory_block_size", "memory"),
)


@dataclass
class ImportResult:
    """What a log holds and, unless it was a dry run, where it was stored."""

    dry_run: bool
    test: str
    status: str
    params: dict[str, Any]
    summary: dict[str, Any]
    result: ParseResult = field(repr=False)  # without its samples: they went to the database
    sample_count: int = 0
    first_samples: list[IntervalSample] = field(default_factory=list)
    preview: dict[str, list[list[float]]] = field(default_factory=dict)  # tps, latency_ms
    # a dry run's facts, as the run page says them: the preview shows what the run would
    facts: run_facts.RunFacts | None = None
    error: str = ""
    batch: Batch | None = None
    run: Run | None = None

    @property
    def outcome_text(self) -> str:
        """sysbench's outcome, not the batch's status: a forced shutdown is "done" too."""
        unfinished = RunSummary.load(self.summary).unfinished_transactions
        return run_facts.outcome_text(self.result.outcome, unfinished)

    @property
    def unrecognised_lines(self) -> int:
        return self.result.unrecognised_lines

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: what `import_log --json` prints and the API returns. The samples
        themselves are not in it (a log may hold a million): the first few, and where
        the run is stored."""
        final = self.result.final
        return {
            "dry_run": self.dry_run,
            "batch_id": self.batch.pk if self.batch else None,
            "run_id": self.run.pk if self.run else None,
            "test": self.test,
            "status": self.status,
            "outcome": self.result.outcome,
            "outcome_text": self.outcome_text,
            "error": self.error,
            "params": self.params,
            "summary": self.summary,
            "sample_count": self.sample_count,
            "first_samples": [dataclasses.asdict(s) for s in self.first_samples],
            "reports": [r.to_dict() for r in self.result.reports],
            "histogram": [list(row) for row in final.histogram] if final else [],
            "warnings": list(self.result.warnings),
            "errors": [dataclasses.asdict(e) for e in self.result.errors],
            "unrecognised_lines": self.unrecognised_lines,
        }


def log_import(
    *,
    log: BinaryIO,
    target: Target | None,
    test: str | None = None,
    label: str = "",
    user: AbstractBaseUser | AnonymousUser | None = None,
    dry_run: bool = False,
) -> ImportResult:
    """Read a sysbench log (a binary file, read line by line) and, unless dry_run, store
    it as an imported batch of one run.

    Raises InvalidInput for input that cannot be a log at all (empty, too large) or a
    test name that is not a name; anything inside the log is the parser's business.
    """
    given_test = _check_test_name(test)
    if target is not None and user is not None:  # None: an operator's import_log command
        permissions.require_attach(user, target)
    with transaction.atomic():
        imported = _import(log, target, given_test, label, user)
        if dry_run:
            imported.preview = _preview(imported)
            imported.facts = _facts(imported)
            transaction.set_rollback(True)
    if dry_run:
        imported.dry_run, imported.batch, imported.run = True, None, None
    elif imported.batch is not None:
        stored_results.batch_results_store(batch=imported.batch)  # an import ends its batch
    return imported


def _import(
    log: BinaryIO,
    target: Target | None,
    given_test: str | None,
    label: str,
    user: AbstractBaseUser | AnonymousUser | None,
) -> ImportResult:
    now = timezone.now()
    batch = Batch.objects.create(
        label=label, target=target, params={}, seed=0, status=Status.RUNNING,
        launched_by=LaunchedBy.IMPORT, launched_by_user=user if isinstance(user, User) else None,
        started_at=now, finished_at=now,
    )  # fmt: skip
    run = Run.objects.create(
        batch=batch, position=0, round=0, cell_key="import", threads=1, status=Status.RUNNING,
        started_at=now, finished_at=now,
    )  # fmt: skip
    store = ImportStore(run, received_at=now)
    result = _read(log, store)
    return _finish(result, store, batch, given_test, label, target)


def _read(log: BinaryIO, store: ImportStore) -> ParseResult:
    parser = OutputParser(keep_samples=False)
    for line in log_lines(log):
        store.line(line)
        for event in parser.feed(line):
            if isinstance(event, IntervalSample):
                store.sample(event)
            elif isinstance(event, QueueSample):
                store.queue(event)
    store.close()
    store.raw_log()
    return parser.finish(None)


def _finish(
    result: ParseResult,
    store: ImportStore,
    batch: Batch,
    given_test: str | None,
    label: str,
    target: Target | None,
) -> ImportResult:
    threads = _threads(result, store.max_threads)
    if store.max_threads == 0 and store.samples:
        store.set_threads(threads)
    percentile = result.final.latency.get("percentile") if result.final else None
    if percentile is not None and store.samples:
        store.set_percentile(percentile)
    test = _test_name(given_test, result)
    params = _params(result, test, threads, label, target)
    summary = summary_of(
        result, warmup_s=0.0, interval_tps=store.interval_tps(0.0), samples=store.samples
    )
    summary["unrecognised_lines"] = result.unrecognised_lines
    status, error = _status(result)
    imported = ImportResult(
        dry_run=False, test=test, status=status, params=params, summary=summary,
        result=result, sample_count=store.samples, first_samples=store.first, error=error,
        batch=batch, run=store.run,
    )  # fmt: skip
    _store_batch(imported, batch)
    _store_run(imported, store.run, threads)
    # The raw log was joined in the database: read again only if asked for.
    imported.run = Run.objects.defer("raw_log").get(pk=store.run.pk)
    return imported


def _preview(imported: ImportResult) -> dict[str, list[list[float]]]:
    """The chart of a dry run, read before it is rolled back."""
    if imported.run is None or not imported.sample_count:
        return {}
    series = timeseries.sample_series(
        [imported.run.pk], buckets=charts.SERIES_BUCKETS, metrics=("tps", "latency_ms")
    )
    return series.get(imported.run.pk, {})


def _facts(imported: ImportResult) -> run_facts.RunFacts | None:
    """Everything sysbench printed, from the run a dry run stored, read before it is
    rolled back."""
    if imported.run is None:
        return None
    return run_selectors.run_facts_of(Run.objects.get(pk=imported.run.pk))


def _check_test_name(given: str | None) -> str | None:
    if given and not _TEST_NAME.fullmatch(given):
        raise InvalidInput("test", f"{given!r} is not a test name")
    return given or None


def _test_name(given: str | None, result: ParseResult) -> str:
    if given:
        return given
    command = result.header.get("command") or {}
    if command.get("test"):
        return str(command["test"])
    for key, name in _TEST_CLUES:
        if key in result.header:
            return name
    final = result.final
    if final is not None and final.sql:
        return "oltp"  # an OLTP test whose script the log does not name
    return "unknown"


def _threads(result: ParseResult, samples_max: int) -> int:
    """The thread count: the header's, else the command line's, else the samples'."""
    header = result.header.get("threads")
    if isinstance(header, int) and header > 0:
        return header
    options = (result.header.get("command") or {}).get("options", {})
    try:
        from_command = int(options.get("threads", 0))
    except (TypeError, ValueError):
        from_command = 0
    if from_command > 0:
        return from_command
    return max(samples_max, 1)


def _params(
    result: ParseResult, test: str, threads: int, label: str, target: Target | None
) -> dict[str, Any]:
    header = result.header
    command = header.get("command") or {}
    options = dict(command.get("options", {}))
    for key in ("report_interval", "percentile"):
        if key in header:
            options.setdefault(key.replace("_", "-"), header[key])
    return {
        "test": test,
        "threads": [threads],
        "options": options,
        "server_settings": {},
        "report_interval": header.get("report_interval"),
        "percentile": header.get("percentile"),
        "version": result.version,
        "build": header.get("build"),
        "command": command.get("text", ""),
        "label": label,
        "target": target.describe() if target else None,
        "source": "import",
    }


def _status(result: ParseResult) -> tuple[str, str]:
    if result.outcome != "error":
        return Status.DONE, ""
    if result.errors:
        return Status.FAILED, "\n".join(dict.fromkeys(e.message for e in result.errors))
    return Status.FAILED, "the log holds no complete sysbench report"


def _store_batch(imported: ImportResult, batch: Batch) -> None:
    result = imported.result
    batch.params = imported.params
    batch.status = imported.status
    batch.environment = {"imported": {"version": result.version, "header": result.header}}
    batch.warnings = [f"warning printed by sysbench: {w}" for w in dict.fromkeys(result.warnings)]
    batch.error = imported.error
    batch.save(update_fields=["params", "status", "environment", "warnings", "error"])


def _store_run(imported: ImportResult, run: Run, threads: int) -> None:
    result = imported.result
    primary = result.primary_error
    run.cell_key = f"import threads={threads}"
    run.threads = threads
    run.options = FrozenPlan.from_params(imported.params).options
    run.status = imported.status
    run.summary = imported.summary
    run.reports = [r.to_dict() for r in result.reports]
    run.histogram = [list(row) for row in (result.steady.histogram if result.steady else [])]
    run.outcome = result.outcome
    run.error = imported.error
    run.error_kind = (primary.kind if primary else "other") if imported.error else ""
    run.error_hint = primary.hint if primary and imported.error else ""
    run.save(
        update_fields=[
            "cell_key", "threads", "options", "status", "summary", "reports", "histogram",
            "outcome", "error", "error_kind", "error_hint",
        ]
    )  # fmt: skip
