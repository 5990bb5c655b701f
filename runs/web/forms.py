"""Forms of the pages (the plan editor's is in plan_form.py). Secrets are write-only: a
password or key field is never filled in, and left empty it keeps what is stored."""

from __future__ import annotations

import io
from typing import Any, BinaryIO, cast

from django import forms

from runs.models import LoadHost, Target

KEEP = "Leave empty to keep the stored one"
TARGET_MOVES = "host, port, socket, engine or user"
LOADHOST_MOVES = "address or user"


def _moved_text(fields: str) -> str:
    # A stored secret never follows the target or host to another address: see
    # runs/services/definitions.py.
    return f"{KEEP}, unless you change the {fields}: then give it again, or it is removed."


class TargetForm(forms.ModelForm[Target]):
    """The password is not a model field here: the instance keeps the stored one, and the
    view passes what was typed (or "" to remove it) to the service."""

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
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


class ScriptForm(forms.Form):
    name = forms.CharField(max_length=100)
    content = forms.CharField(
        strip=False, widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false"})
    )
