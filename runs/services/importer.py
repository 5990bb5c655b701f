"""Importing a sysbench log written elsewhere: years of 0.4, 0.5 and 1.0 outputs.

A log becomes one run in a batch of its own (no plan, launched_by "import"), with the
parameters its header and its command line show, its samples, summary, reports,
histogram and raw log. A log that holds only errors imports as a failed run with its
error; lines the parser cannot place are kept in the raw log and counted, never fatal.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from runs.analysis.summary import summarise
from runs.models import Batch, LaunchedBy, Run, Sample, Status, Target
from runs.sysbench.options import ValidationError
from runs.sysbench.parser import IntervalSample, ParseResult, parse_text, redact_secrets

MAX_LOG_CHARS = 50_000_000  # a 10-hour run at one line a second is ~2 MB
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
    result: ParseResult = field(repr=False)
    error: str = ""
    batch: Batch | None = None
    run: Run | None = None

    @property
    def unrecognised_lines(self) -> int:
        return self.result.unrecognised_lines

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: what `import_log --json` prints and the API returns."""
        final = self.result.final
        return {
            "dry_run": self.dry_run,
            "batch_id": self.batch.pk if self.batch else None,
            "run_id": self.run.pk if self.run else None,
            "test": self.test,
            "status": self.status,
            "error": self.error,
            "params": self.params,
            "summary": self.summary,
            "samples": [dataclasses.asdict(s) for s in self.result.samples],
            "reports": [r.to_dict() for r in self.result.reports],
            "histogram": [list(row) for row in final.histogram] if final else [],
            "warnings": list(self.result.warnings),
            "errors": [dataclasses.asdict(e) for e in self.result.errors],
            "unrecognised_lines": self.unrecognised_lines,
        }


def log_import(
    *,
    text: str,
    target: Target | None,
    test: str | None = None,
    label: str = "",
    user: AbstractBaseUser | AnonymousUser | None = None,
    dry_run: bool = False,
) -> ImportResult:
    """Parse a sysbench log and, unless dry_run, store it as an imported batch of one run.

    Raises ValidationError for input that cannot be a log at all (empty, too large) or a
    test name that is not a name; anything inside the log is the parser's business.
    """
    clean = _clean_text(text)
    result = parse_text(clean)
    test_name = _test_name(test, result)
    threads = _threads(result)
    params = _params(result, test_name, threads, label, target)
    summary = summarise(result, warmup_s=0.0)
    summary["unrecognised_lines"] = result.unrecognised_lines
    status, error = _status(result)
    imported = ImportResult(
        dry_run=dry_run,
        test=test_name,
        status=status,
        params=params,
        summary=summary,
        result=result,
        error=error,
    )
    if not dry_run:
        _store(
            imported, target=target, raw_log=redact_secrets_in(clean), threads=threads, user=user
        )
    return imported


def redact_secrets_in(text: str) -> str:
    """The log with every --*password value masked, line by line."""
    return "\n".join(redact_secrets(line) for line in text.split("\n"))


def _clean_text(text: str) -> str:
    if len(text) > MAX_LOG_CHARS:
        raise ValidationError("file", f"the log is larger than {MAX_LOG_CHARS} characters")
    if not text.strip():
        raise ValidationError("file", "the log is empty")
    # PostgreSQL stores no NUL in text or JSON: a binary splinter must not fail the import.
    return text.replace("\x00", "\ufffd")


def _test_name(given: str | None, result: ParseResult) -> str:
    if given:
        if not _TEST_NAME.fullmatch(given):
            raise ValidationError("test", f"{given!r} is not a test name")
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


def _threads(result: ParseResult) -> int:
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
    return max([s.threads for s in result.samples] + [1])


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


@transaction.atomic
def _store(
    imported: ImportResult,
    *,
    target: Target | None,
    raw_log: str,
    threads: int,
    user: AbstractBaseUser | AnonymousUser | None,
) -> None:
    now = timezone.now()
    result = imported.result
    batch = Batch.objects.create(
        plan=None,
        label=imported.params["label"],
        target=target,
        load_host=None,
        params=imported.params,
        seed=0,
        status=imported.status,
        launched_by=LaunchedBy.IMPORT,
        launched_by_user=user if isinstance(user, User) else None,
        started_at=now,
        finished_at=now,
        environment={"imported": {"version": result.version, "header": result.header}},
        warnings=[f"warning printed by sysbench: {w}" for w in result.warnings],
        error=imported.error,
    )
    imported.batch = batch
    imported.run = _store_run(imported, batch, raw_log=raw_log, threads=threads, now=now)


def _store_run(
    imported: ImportResult, batch: Batch, *, raw_log: str, threads: int, now: Any
) -> Run:
    result = imported.result
    primary = result.primary_error
    run = Run.objects.create(
        batch=batch,
        position=0,
        round=0,
        cell_key=f"import threads={threads}",
        threads=threads,
        options=imported.params["options"],
        status=imported.status,
        summary=imported.summary,
        reports=[r.to_dict() for r in result.reports],
        histogram=[list(row) for row in (result.steady.histogram if result.steady else [])],
        outcome=result.outcome,
        exit_code=None,
        error=imported.error,
        error_kind=(primary.kind if primary else "other") if imported.error else "",
        error_hint=primary.hint if primary and imported.error else "",
        raw_log=raw_log,
        started_at=now,
        finished_at=now,
    )
    Sample.objects.bulk_create(_samples(run, result, threads, now))
    return run


def _samples(run: Run, result: ParseResult, threads: int, now: Any) -> list[Sample]:
    queue = {q.time_s: q for q in result.queue_samples}
    rows = []
    for seq, s in enumerate(result.samples, 1):
        rows.append(_sample(run, seq, s, threads, now, queue.get(s.time_s)))
    return rows


def _sample(run: Run, seq: int, s: IntervalSample, threads: int, now: Any, queue: Any) -> Sample:
    extra = dict(s.extra)
    if s.eps is not None:
        extra["eps"] = s.eps
    return Sample(
        run=run,
        seq=seq,
        time_s=s.time_s,
        threads=s.threads or threads,  # fileio and memory lines print no thread count
        tps=s.tps,
        qps=s.qps,
        reads=s.reads,
        writes=s.writes,
        other=s.other,
        latency_pct=s.latency_pct,
        latency_ms=s.latency_ms,
        errors_per_s=s.errors_per_s,
        reconnects_per_s=s.reconnects_per_s,
        queue_length=queue.queue_length if queue else None,
        concurrency=queue.concurrency if queue else None,
        extra=extra,
        received_at=now,
    )
