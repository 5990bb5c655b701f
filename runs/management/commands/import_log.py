"""`manage.py import_log FILE --target NAME`: store a sysbench log as an imported run."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runs.errors import InvalidInput
from runs.models import Target
from runs.services.imports.importer import ImportResult, log_import


class Command(BaseCommand):
    help = (
        "Import a sysbench log (0.4, 0.5, 1.0; SQL or cpu, fileio, memory...) as a run of an "
        "imported batch. With --dry-run nothing is saved; --json prints what was parsed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The log file, or - for standard input.")
        parser.add_argument("--target", required=True, help="Name of the target it ran on.")
        parser.add_argument("--test", help="The sysbench test, when the log does not name it.")
        parser.add_argument("--label", default="", help="A label for the imported batch.")
        parser.add_argument("--dry-run", action="store_true", help="Parse only; save nothing.")
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            target = Target.objects.get(name=options["target"])
        except Target.DoesNotExist:
            raise CommandError(f"no target named {options['target']!r}") from None
        try:
            with self._open(options["file"]) as log:
                imported = log_import(
                    log=log,
                    target=target,
                    test=options["test"],
                    label=options["label"],
                    dry_run=options["dry_run"],
                )
        except InvalidInput as e:
            raise CommandError(str(e)) from None
        if options["json"]:
            self.stdout.write(json.dumps(imported.to_dict(), indent=2, allow_nan=False))
        else:
            self.stdout.write(_describe(imported))

    def _open(self, path: str) -> contextlib.AbstractContextManager[BinaryIO]:
        """The log as a binary file, read line by line (and decoded line by line)."""
        if path == "-":
            return contextlib.nullcontext(sys.stdin.buffer)
        try:
            return open(path, "rb")
        except OSError as e:
            raise CommandError(f"cannot read {path}: {e.strerror}") from None


def _describe(imported: ImportResult) -> str:
    summary = imported.summary
    where = (
        "dry run, nothing saved"
        if imported.dry_run
        else f"batch {imported.batch.pk if imported.batch else '?'}, "
        f"run {imported.run.pk if imported.run else '?'}"
    )
    lines = [
        f"{imported.status}: {imported.test}, sysbench {imported.result.version or '?'} ({where})",
        f"samples: {imported.sample_count}, unrecognised lines: {imported.unrecognised_lines}",
    ]
    figures = [f"{k}={summary[k]}" for k in ("tps", "qps", "eps", "latency_pct_ms") if k in summary]
    if figures:
        lines.append("summary: " + " ".join(figures))
    if imported.error:
        lines.append(f"error: {imported.error}")
    return "\n".join(lines)
