"""Forms of the pages (the plan editor's is in plan_form.py). Secrets are write-only: a
password or key field is never filled in, and left empty it keeps what is stored."""

from __future__ import annotations

import io
from typing import Any, BinaryIO, cast

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from runs.models import LoadHost, Target
from runs.services.permissions import RESTART_FIELDS

KEEP = "Leave empty to keep the stored one"
TARGET_MOVES = "host, port, socket, engine or user"
LOADHOST_MOVES = "address or user"


def _moved_text(fields: str) -> str:
    # A stored secret never follows the target or host to another address: see
    # runs/services/definitions.py.
    return f"{KEEP}, unless you change the {fields}: then give it again, or it is removed."


class TargetForm(forms.ModelForm[Target]):
    """The password is not a model field here: the instance keeps the stored one, and the
    view passes what was typed (or "" to remove it) to the service. For a user who may not
    manage restarts (`may_restart` False), the restart mode, config and server host are
    shown disabled and kept as stored; a value sent all the same is the view's to refuse
    (runs/services/permissions.py, require_restarts)."""

    password = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted; never shown again. " + _moved_text(TARGET_MOVES),
    )
    clear_password = forms.BooleanField(required=False, label="Remove the stored password")

    class Meta:
        model = Target
        fields = [
            "name",
            "engine",
            "host",
            "port",
            "socket",
            "database",
            "user",
            "cpu_cores",
            "disk_count",
            "server_host",
            "restart_mode",
            "restart_config",
        ]

    def __init__(self, *args: Any, may_restart: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.may_restart = may_restart
        if not may_restart:
            for name in RESTART_FIELDS:
                self.fields[name].widget.attrs["disabled"] = True
        self.order_fields([*self.Meta.fields[:7], "password", "clear_password"])
        self.fields["server_host"].queryset = LoadHost.objects.filter(  # type: ignore[attr-defined]
            kind=LoadHost.Kind.SSH
        )
        if not self.instance.pk:
            self.fields["password"].help_text = "Stored encrypted; never shown again."
            del self.fields["clear_password"]

    def new_password(self) -> str | None:
        """What to store: None keeps the stored password, "" removes it."""
        return _new_secret(self, "password", "clear_password")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.may_restart:  # a browser sends no disabled field: it stays as stored
            for name in RESTART_FIELDS:
                if self.add_prefix(name) not in self.data:
                    data[name] = getattr(self.instance, name)
        return data


class LoadHostForm(forms.ModelForm[LoadHost]):
    """The key is not a model field here, like a target's password."""

    private_key = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "autocomplete": "off", "spellcheck": "false"}),
        help_text="PEM or OpenSSH private key, stored encrypted; never shown again.",
    )
    clear_private_key = forms.BooleanField(required=False, label="Remove the stored key")

    class Meta:
        model = LoadHost
        fields = ["name", "kind", "address", "port", "user"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.order_fields([*self.Meta.fields[:5], "private_key", "clear_private_key"])
        if self.instance.pk:
            self.fields["private_key"].help_text += " " + _moved_text(LOADHOST_MOVES)
        else:
            del self.fields["clear_private_key"]

    def new_private_key(self) -> str | None:
        return _new_secret(self, "private_key", "clear_private_key")


def _new_secret(form: forms.BaseForm, name: str, clear: str) -> str | None:
    data = form.cleaned_data
    if data.get(name):
        return str(data[name])
    return "" if data.get(clear) else None


class FingerprintForm(forms.Form):
    fingerprint = forms.CharField(
        max_length=200,
        help_text="Type or paste the fingerprint `ssh-keygen -lf` prints on the host itself.",
    )


class ImportForm(forms.Form):
    text = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
        label="Paste a sysbench log",
    )
    upload = forms.FileField(required=False, label="or upload a log file")
    target = forms.ModelChoiceField(
        Target.objects.all(), required=False, empty_label="— unknown —",
        help_text="The server the log was measured on, if it is one of ours.",
    )  # fmt: skip
    test = forms.CharField(
        required=False,
        max_length=64,
        help_text="The test, when the log does not say (e.g. oltp_insert).",
    )
    label = forms.CharField(required=False, max_length=200, help_text="A name for the batch.")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("upload") is None and not (data.get("text") or "").strip():
            raise forms.ValidationError("Paste a log or choose a file.")
        return data

    def log(self) -> BinaryIO:
        """The log to read line by line: the uploaded file (on disk beyond 2.5 MB), or
        the pasted text."""
        upload = self.cleaned_data.get("upload")
        if upload is not None:
            return cast(BinaryIO, upload)
        return io.BytesIO(self.cleaned_data["text"].encode())


class TokenForm(forms.Form):
    name = forms.CharField(max_length=64, required=False, help_text="What the token is for.")
    expires_days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, label="Expires after (days)",
        help_text="Empty: until revoked.",
    )  # fmt: skip


class _MultipleFiles(forms.ClearableFileInput):
    allow_multiple_selected = True


class _FilesField(forms.FileField):
    def clean(self, data: Any, initial: Any = None) -> Any:
        given = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(_FilesField, self).clean(item, initial) for item in given]


class ScriptForm(forms.Form):
    name = forms.CharField(
        max_length=100, help_text="A name of yours again uploads its next version."
    )
    content = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false"}),
        help_text="A one-file script; or upload a bundle below.",
    )
    bundle_files = _FilesField(
        required=False,
        widget=_MultipleFiles(attrs={"accept": ".lua"}),
        label="or a bundle's .lua files",
        help_text="Several files at once: the entry script and the modules it requires.",
    )
    archive = forms.FileField(
        required=False,
        label="or a bundle as an archive",
        help_text="A .tar.gz or .zip of .lua files (links, absolute or .. paths refused).",
    )
    entry = forms.CharField(
        max_length=200,
        required=False,
        help_text="The entry script's file name, when the others do not make it plain.",
    )


class OrderedSelects(forms.Widget):
    """Several <select>s of one name, one per chosen value and `spare` empty ones: the
    browser sends them in the page's order, which is the user's (no script needed)."""

    spare = 2

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        super().__init__(attrs)
        self.choices: Any = []

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[str]:
        given = data.getlist(name) if hasattr(data, "getlist") else data.get(name) or []
        return [str(v) for v in given if str(v).strip()]

    def value_omitted_from_data(self, data: Any, files: Any, name: str) -> bool:
        return False  # an empty list is a choice: no more targets

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        chosen = [str(v) for v in value or []]
        base = (attrs or {}).get("id") or f"id_{name}"
        selects = []
        for i, current in enumerate([*chosen, *[""] * self.spare], start=1):
            options = format_html_join(
                "",
                '<option value="{}"{}>{}</option>',
                (
                    (str(key), " selected" if str(key) == current else "", label)
                    for key, label in self.choices
                    if str(key)
                ),
            )
            selects.append(
                format_html(
                    '<select name="{}" id="{}" aria-label="{} {}">'
                    '<option value="">— none —</option>{}</select>',
                    name,
                    base if i == 1 else f"{base}_{i}",
                    "Compared target",
                    i,
                    options,
                )
            )
        return format_html('<div class="ordered-selects">{}</div>', mark_safe("".join(selects)))  # noqa: S308


class OrderedModelsField(forms.ModelMultipleChoiceField):
    """Rows chosen in an order that matters (a servers axis: the first is compared with
    the plan's target, and so on): cleaned to a list in the user's order, each once."""

    widget = OrderedSelects

    def clean(self, value: Any) -> list[Any]:  # type: ignore[override]
        keys = [str(v) for v in value or []]
        if not keys:
            return []
        rows = {str(row.pk): row for row in super().clean(keys)}
        twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if twice is not None:
            raise forms.ValidationError(f"{rows[twice]} is chosen twice")
        return [rows[k] for k in keys]
