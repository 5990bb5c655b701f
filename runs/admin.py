"""The Django admin, for staff. Secrets are write-only everywhere, here too: every
encrypted field (a target's password, a load host's private key) is left out of every
admin form and page, whatever the model."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models as db_models
from django.http import HttpRequest

from runs import models
from runs.secrets import EncryptedTextField


def secret_fields(model: type[db_models.Model]) -> list[str]:
    return [f.name for f in model._meta.get_fields() if isinstance(f, EncryptedTextField)]


class NoSecrets(admin.ModelAdmin[Any]):
    """Leaves the model's encrypted fields out of its forms and pages. Staff set secrets
    through benchdash's own pages or API, which never show them back."""

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [*(super().get_exclude(request, obj) or []), *secret_fields(self.model)]


@admin.register(models.Target)
class TargetAdmin(NoSecrets):
    list_display = ["name", "engine", "address", "database", "user", "created_by"]


@admin.register(models.LoadHost)
class LoadHostAdmin(NoSecrets):
    list_display = ["name", "kind", "address", "user", "created_by"]


@admin.register(models.Plan)
class PlanAdmin(NoSecrets):
    list_display = ["name", "test", "target", "load_host", "repeats", "order_policy", "created_by"]


class RunInline(admin.TabularInline[models.Run, models.Batch]):
    model = models.Run
    fields = ("position", "round", "threads", "settings", "status", "outcome")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(models.Batch)
class BatchAdmin(NoSecrets):
    list_display = ["id", "plan", "status", "launched_by", "created_at", "finished_at"]
    list_filter = ["status", "launched_by"]
    inlines = [RunInline]


@admin.register(models.Run)
class RunAdmin(NoSecrets):
    list_display = ["id", "batch", "position", "threads", "status", "outcome"]
    list_filter = ["status"]


@admin.register(models.Sample)
class SampleAdmin(NoSecrets):
    list_display = ["run", "seq", "time_s", "threads", "tps", "latency_ms"]
