"""`manage.py demo_setup`: the demo admin, the demo MariaDB target and a demo plan.

Idempotent: run by scripts/start on every start, it brings the demo rows back to their
definition and keeps the printed login true."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from runs.models import Engine, LoadHost, Plan, Target

ADMIN_USERNAME = "admin"
TARGET_NAME = "demo-mariadb"
PLAN_NAME = "demo: oltp_insert flush × sync_binlog"  # noqa: RUF001 (the name the lead chose)


class Command(BaseCommand):
    help = "Create or refresh the demo admin user, the demo MariaDB target and a demo plan."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--target-password-file",
            type=Path,
            required=True,
            help="File holding the password of the demo MariaDB's `bench` user.",
        )
        parser.add_argument("--target-host", default="127.0.0.1", help="Host of the demo MariaDB.")
        parser.add_argument(
            "--target-port",
            type=int,
            default=int(os.environ.get("BENCHDASH_DEMO_MARIADB_PORT", "3307")),
            help="Port of the demo MariaDB (default: $BENCHDASH_DEMO_MARIADB_PORT or 3307).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        target_password = _read_secret(options["target_password_file"])
        admin_password = _admin_password()
        with transaction.atomic():
            admin = _ensure_admin(admin_password)
            target = _ensure_target(
                host=options["target_host"],
                port=options["target_port"],
                password=target_password,
                owner=admin,
            )
            _ensure_plan(target=target, created_by=admin)
        self.stdout.write(f"Demo login: {ADMIN_USERNAME} / {admin_password}")


def _read_secret(path: Path) -> str:
    try:
        secret = path.read_text().strip()
    except OSError as e:
        raise CommandError(f"cannot read the target password: {e}") from e
    if not secret:
        raise CommandError(f"{path} is empty")
    return secret


def _admin_password() -> str:
    """BENCHDASH_DEMO_PASSWORD if set, else a password generated once and kept in VAR_DIR."""
    if password := os.environ.get("BENCHDASH_DEMO_PASSWORD"):
        return password
    path = Path(settings.VAR_DIR) / "demo_admin_password"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(12) + "\n")
    return path.read_text().strip()


def _ensure_admin(password: str) -> Any:
    user_model = get_user_model()
    admin, _ = user_model.objects.get_or_create(
        username=ADMIN_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    # The printed login must work, even after someone changed the password.
    if not admin.check_password(password) or not (admin.is_staff and admin.is_superuser):
        admin.set_password(password)
        admin.is_staff = admin.is_superuser = admin.is_active = True
        admin.save()
    return admin


def _ensure_target(*, host: str, port: int, password: str, owner: Any) -> Target:
    # The demo rows belong to the demo admin (see runs/services/permissions.py).
    target, _ = Target.objects.update_or_create(
        name=TARGET_NAME,
        defaults={
            "engine": Engine.MARIADB,
            "host": host,
            "port": port,
            "socket": "",
            "database": "sbtest",
            "user": "bench",
            "password": password,
            "created_by": owner,
        },
    )
    return target


def _ensure_plan(*, target: Target, created_by: Any) -> Plan:
    local, _ = LoadHost.objects.get_or_create(name="local", defaults={"kind": "local"})
    plan, _ = Plan.objects.update_or_create(
        name=PLAN_NAME,
        defaults={
            "target": target,
            "load_host": local,
            "test": "oltp_insert",
            "options": {"time": 10, "report-interval": 1, "tables": 1, "table-size": 1000},
            "threads": [1, 2],
            "server_settings": {
                "innodb_flush_log_at_trx_commit": ["1", "2"],
                "sync_binlog": ["0", "1"],
            },
            "option_axes": {},
            "repeats": 1,
            "warmup_s": 0,
            "created_by": created_by,
        },
    )
    return plan
