"""`manage.py put_back_servers --worker NAME`: scripts/stop's last step, once the workers
of this machine stopped: every server a batch of worker NAME left running another config
or install (its worker killed before it put it back) restarted with its original; one
line per batch on standard output, exit 1 when one could not be put back."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runs.services import restarts


class Command(BaseCommand):
    help = (
        "Put back the servers the batches of a stopped worker left changed (restart-only "
        "settings, config snippets, installs): run by scripts/stop after the workers stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--worker", required=True, help="The stopped worker's name, e.g. benchdash@host."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        problems = restarts.servers_put_back_after_stop(worker=options["worker"])
        for batch_id, problem in problems.items():
            self.stdout.write(f"batch {batch_id}: {problem or 'the original config put back'}")
        if any(problems.values()):
            raise CommandError("a server could not be put back: see above")
