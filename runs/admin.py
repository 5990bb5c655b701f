from django.contrib import admin

from runs import models


@admin.register(models.Target)
class TargetAdmin(admin.ModelAdmin[models.Target]):
    list_display = ["name", "engine", "address", "database", "user"]
    # The password is write-only: it is never rendered back, even to an admin.
    exclude = ["password"]


@admin.register(models.LoadHost)
class LoadHostAdmin(admin.ModelAdmin[models.LoadHost]):
    list_display = ["name", "kind"]


@admin.register(models.Plan)
class PlanAdmin(admin.ModelAdmin[models.Plan]):
    list_display = ["name", "test", "target", "load_host", "repeats", "order_policy"]


class RunInline(admin.TabularInline[models.Run, models.Batch]):
    model = models.Run
    fields = ("position", "round", "threads", "settings", "status", "outcome")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(models.Batch)
class BatchAdmin(admin.ModelAdmin[models.Batch]):
    list_display = ["id", "plan", "status", "launched_by", "created_at", "finished_at"]
    list_filter = ["status", "launched_by"]
    inlines = [RunInline]


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin[models.Run]):
    list_display = ["id", "batch", "position", "threads", "status", "outcome"]
    list_filter = ["status"]


@admin.register(models.Sample)
class SampleAdmin(admin.ModelAdmin[models.Sample]):
    list_display = ["run", "seq", "time_s", "threads", "tps", "latency_ms"]
