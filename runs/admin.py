"""The Django admin, for staff. Secrets are write-only everywhere, here too: every
encrypted field (a target's password, a load host's private key) is left out of every
admin form and page, whatever the model. Targets, load hosts and plans are checked and
stored by the same services as through the API and the pages (runs/services/definitions.py): a
value the API refuses is refused here, naming the field, and a target or load host that
now points elsewhere loses its stored password or key. A target's restart mode, restart
config and server host are set by who may manage restarts (runs/services/permissions.py),
here as everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import models as db_models
from django.http import HttpRequest

from runs import models
from runs.errors import InvalidInput
from runs.secrets import EncryptedTextField
from runs.services import definitions, permissions
from runs.services.answers import stored_results


def secret_fields(model: type[db_models.Model]) -> list[str]:
    return [f.name for f in model._meta.get_fields() if isinstance(f, EncryptedTextField)]


class NoSecrets(admin.ModelAdmin[Any]):
    """Leaves the model's encrypted fields out of its forms and pages. Staff set secrets
    through benchdash's own pages or API, which never show them back."""

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [*(super().get_exclude(request, obj) or []), *secret_fields(self.model)]


def checked_form(check: Callable[[Any, dict[str, Any]], object]) -> type[forms.ModelForm[Any]]:
    """A model form whose instance goes through `check`, its service's, before it is
    saved (with the form's cleaned data, for what is not on the instance: a plan's extra
    load hosts): the service's refusal is shown on the field it names."""

    class CheckedForm(forms.ModelForm[Any]):
        # After Django put the form's values on the instance: the service checks that.
        def _post_clean(self) -> None:
            super()._post_clean()  # type: ignore[misc]  # not in django-stubs
            if self.errors:
                return
            try:
                check(self.instance, self.cleaned_data)
            except InvalidInput as e:
                self.add_error(e.field if e.field in self.fields else None, e.message)
            except ValidationError as e:
                self.add_error(None, e)

    return CheckedForm


@admin.register(models.Target)
class TargetAdmin(NoSecrets):
    form = checked_form(lambda target, _: definitions.target_check(target=target))
    list_display = ["name", "engine", "address", "database", "user", "created_by"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False,
                 **kwargs: Any) -> Any:  # fmt: skip
        """The form of `request`'s user: the restart fields refused on their field unless
        the user may manage restarts."""
        form = super().get_form(request, obj, change, **kwargs)
        user = request.user

        class ByUser(form):  # type: ignore[valid-type,misc]
            def _post_clean(self) -> None:
                super()._post_clean()
                if not self.errors:
                    try:
                        permissions.require_restarts(user, self.instance)
                    except permissions.NotAllowed as e:
                        self.add_error(e.field if e.field in self.fields else None, e.message)

        return ByUser

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        definitions.target_save(target=obj)


@admin.register(models.LoadHost)
class LoadHostAdmin(NoSecrets):
    form = checked_form(lambda load_host, _: definitions.loadhost_check(load_host=load_host))
    list_display = ["name", "kind", "address", "user", "created_by"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        definitions.loadhost_save(load_host=obj)


@admin.register(models.Plan)
class PlanAdmin(NoSecrets):
    form = checked_form(
        lambda plan, data: definitions.plan_validate(
            plan=plan, extra_load_hosts=data.get("extra_load_hosts")
        )
    )
    list_display = ["name", "test", "target", "load_host", "repeats", "order_policy", "created_by"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        definitions.plan_save(plan=obj, extra_load_hosts=form.cleaned_data.get("extra_load_hosts"))


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

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        stored_results.batch_results_forget(batch_id=obj.pk)  # what its answers say may change


@admin.register(models.Run)
class RunAdmin(NoSecrets):
    """A run edited or deleted here changes its batch's answers: they are built again."""

    list_display = ["id", "batch", "position", "threads", "status", "outcome"]
    list_filter = ["status"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        stored_results.batch_results_forget(batch_id=obj.batch_id)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        super().delete_model(request, obj)
        stored_results.batch_results_forget(batch_id=obj.batch_id)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        batch_ids = set(queryset.values_list("batch_id", flat=True))
        super().delete_queryset(request, queryset)
        for batch_id in batch_ids:
            stored_results.batch_results_forget(batch_id=batch_id)


@admin.register(models.Sample)
class SampleAdmin(NoSecrets):
    list_display = ["run", "seq", "time_s", "threads", "tps", "latency_ms"]
