"""`manage.py create_token USER NAME [--expires-in-days N] [--create-user]`: an API token for
a machine without a browser, e.g. a service account's; printed once, on standard output."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runs.errors import InvalidInput
from runs.services import tokens


class Command(BaseCommand):
    help = (
        "Create an API token for USER, named NAME, and print it: it is shown this once, only "
        "a digest of it is kept. Revoke it on the Tokens page or with DELETE /api/v1/tokens/KEY."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", help="The user the token acts for, e.g. a service account.")
        parser.add_argument("name", help="What the token is for, e.g. nightly-ci.")
        parser.add_argument(
            "--expires-in-days",
            type=int,
            help="Days the token lives (1 to 3650); without it, until revoked.",
        )
        parser.add_argument(
            "--create-user",
            action="store_true",
            help="Create USER when missing, without a password: it logs in with tokens only.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["expires_in_days"]
        if days is not None and not 1 <= days <= 3650:
            raise CommandError("--expires-in-days: give 1 to 3650 days")
        try:
            _, text = tokens.token_create_for(
                username=options["user"],
                name=options["name"],
                expires_in=None if days is None else timedelta(days=days),
                create_user=options["create_user"],
            )
        except InvalidInput as e:
            raise CommandError(str(e)) from None
        self.stdout.write(text)
