"""The plan editor's form: a plan's plain fields, its automatic modes and its schedule,
and the initial values from a stored plan (its matrix comes through plan_editor.py)."""

from __future__ import annotations

import zoneinfo
from typing import Any

from django import forms
from django.contrib.auth.models import AnonymousUser, User

from runs.errors import InvalidInput
from runs.models import DatasetPolicy, LoadHost, LoadSplit, LuaScript, OrderPolicy, Target
from runs.services.batches import MAX_SEED
from runs.sysbench import suites
from runs.sysbench.options import ALL_TESTS
from runs.web.forms import OrderedModelsField

SCHEDULE_KINDS = [
    ("", "No schedule"),
    ("cron", "Cron"),
    ("interval", "Every N minutes"),
    ("clocked", "Once, at a time"),
]


def _zones() -> list[tuple[str, str]]:
    return [(z, z) for z in sorted(zoneinfo.available_timezones())]


class PlanForm(forms.Form):
    """The plain fields of a plan; its matrix comes through plan_editor.matrix_from_form."""

    name = forms.CharField(max_length=200)
    target = forms.ModelChoiceField(Target.objects.all(), required=False, empty_label="— none —")
    server_targets = OrderedModelsField(
        Target.objects.all(),
        required=False,
        label="Servers: targets compared",
        help_text="The servers axis's targets after the one above, in this order: every cell "
        "runs on each, interleaved round by round; the target above is the baseline of the "
        "verdicts.",
    )
    # The rest of the servers axis (Plan.servers); its configs come as rows (plan_editor.py).
    installs = forms.CharField(
        required=False,
        max_length=2000,
        label="Servers: installs",
        help_text="The target's installs to run each cell on, by label, comma-separated, in "
        "this order (the first is the baseline), e.g. 10.11,11.4; each is a restart. Empty: "
        "the install the server runs.",
    )
    after_restart = forms.ChoiceField(
        choices=[("", "warm (the default)"), ("warm", "warm"), ("cold", "cold")],
        required=False,
        label="After a restart",
        help_text="warm: the cell's own load for the warm-up, unmeasured; cold: measured at once.",
    )
    warm_s = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=3600,
        label="Warm-up after a restart (s)",
        help_text="Empty: 10 s.",
    )
    load_host = forms.ModelChoiceField(LoadHost.objects.all(), empty_label=None)
    extra_load_hosts = forms.ModelMultipleChoiceField(
        LoadHost.objects.filter(kind=LoadHost.Kind.SSH),
        required=False,
        label="More load hosts",
        help_text="SSH hosts that drive each cell together with the load host, for a server "
        "one host cannot saturate.",
    )
    load_split = forms.ChoiceField(
        choices=LoadSplit.choices,
        initial=LoadSplit.DIVIDE,
        required=False,
        label="With several load hosts",
    )
    test = forms.ChoiceField(choices=[(t, t) for t in ALL_TESTS], initial="oltp_read_write")
    script = forms.ModelChoiceField(
        LuaScript.objects.all(),
        required=False,
        empty_label="— the built-in test —",
        help_text="A custom Lua script or bundle in place of the test; the test says how it "
        "runs (a database test connects to the target, prepares and cleans up). Its own "
        "options go under script_options in the options.",
    )
    tests = forms.CharField(
        required=False,
        max_length=20_000,
        label="Tests axis",
        widget=forms.Textarea(attrs={"rows": 5, "class": "tests-axis", "spellcheck": "false"}),
        help_text="Several tests in one batch, one a line: family, test, name=row-name "
        "(optional), its options as name=value, and rebuild for a test that gets a fresh "
        "data set of its own; the others share one, the tests that only read first. "
        "Empty: the test above alone.",
    )
    threads = forms.CharField(
        max_length=1000, initial="1,2,4,8", help_text="Comma-separated thread counts."
    )
    repeats = forms.IntegerField(min_value=1, max_value=1000, initial=3)
    warmup_s = forms.IntegerField(
        min_value=0,
        initial=0,
        label="Warmup (s)",
        help_text="Seconds excluded from the steady-state figures.",
    )
    quiet_wait_s = forms.IntegerField(
        min_value=0,
        max_value=3600,
        initial=0,
        required=False,
        label="Wait for quiet hosts (s)",
        help_text="Before each cell, wait up to this long for the server and load hosts to "
        "be quiet (no other process using the CPU); 0 does not wait. A busy start is "
        "flagged either way.",
    )
    order_policy = forms.ChoiceField(choices=OrderPolicy.choices, initial=OrderPolicy.INTERLEAVED)
    dataset_policy = forms.ChoiceField(choices=DatasetPolicy.choices, initial=DatasetPolicy.SHARED)
    cleanup = forms.BooleanField(
        required=False, initial=True, help_text="Drop the data set after the batch."
    )
    hold_last_level_s = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=86_400,
        label="Hold the last level (s)",
        help_text="Ramp order: the largest thread count runs this long, the other levels the "
        "plan's time. Empty: every level alike.",
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_SEED,
        help_text="Of the interleaved order: the same seed replays the same order. Empty: a "
        "new one at each launch, recorded on the batch.",
    )
    schedule_kind = forms.ChoiceField(choices=SCHEDULE_KINDS, required=False, label="Schedule")
    schedule_cron = forms.CharField(
        required=False,
        max_length=100,
        label="Cron",
        help_text="minute hour day-of-month month day-of-week, e.g. 0 2 * * *",
    )
    schedule_interval_min = forms.IntegerField(required=False, min_value=1, label="Every (minutes)")
    schedule_clocked_at = forms.DateTimeField(
        required=False,
        label="At",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
        help_text="In the time zone below.",
    )
    schedule_run_now = forms.BooleanField(
        required=False, label="Launch at once if that time has passed"
    )
    schedule_timezone = forms.ChoiceField(
        choices=_zones, initial="UTC", required=False, label="Time zone"
    )
    schedule_enabled = forms.BooleanField(required=False, initial=True, label="Enabled")
    notify_emails = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Email",
        help_text="Told of regressions and failed nightly batches; one address a line.",
    )
    notify_webhook = forms.URLField(
        required=False,
        assume_scheme="https",
        label="Webhook",
        help_text="Receives the same news as JSON (POST).",
    )
    regression_threshold_pct = forms.FloatField(
        required=False,
        min_value=0.1,
        max_value=100,
        initial=5.0,
        label="Threshold (%)",
        help_text="Smallest change flagged, beyond 3 x the noise of earlier nights.",
    )
    history_nights = forms.IntegerField(
        required=False, min_value=5, max_value=365, initial=7, label="Baseline nights"
    )
    # The auto modes (runs/analysis/auto/): each adds runs until its answer is clear.
    repeats_auto = forms.BooleanField(
        required=False,
        label="Repeats: auto",
        help_text="Add interleaved repeats until each cell's comparison with the baseline is "
        "decided (faster, slower, or equivalent within the margin), or, for a cell with "
        "nothing to compare with, the 95 % interval of its mean is within the target (each "
        "cell starts with at least 3 repeats).",
    )
    repeats_target_pct = forms.FloatField(
        required=False, min_value=0.1, max_value=100, initial=2.0, label="Target ± (%)"
    )
    repeats_margin_pct = forms.FloatField(
        required=False,
        min_value=0.1,
        max_value=50,
        initial=2.0,
        label="Equivalence margin ± (%)",
        help_text="A cell whose ratio to the baseline lies within this margin is equivalent.",
    )
    repeats_max = forms.IntegerField(
        required=False, min_value=2, max_value=100, initial=5, label="At most (repeats)"
    )
    threads_auto = forms.BooleanField(
        required=False,
        label="Threads: auto",
        help_text="Start at 1 thread and double while throughput rises by more than the "
        "threshold and p95 stays under the SLO, then refine between the last two points.",
    )
    threads_max = forms.IntegerField(
        required=False, min_value=1, max_value=100_000, initial=64, label="Up to (threads)"
    )
    threads_slo_ms = forms.FloatField(
        required=False, min_value=0.001, label="p95 SLO (ms)", help_text="Optional."
    )
    threads_rise_pct = forms.FloatField(
        required=False, min_value=0.1, max_value=1000, initial=5.0, label="Rise threshold (%)"
    )
    rate_auto = forms.BooleanField(
        required=False,
        label="Rate: auto (open loop)",
        help_text="Find the highest --rate the server sustains: achieved tps keeps up, the "
        "queue stays bounded, p95 stays under the SLO. Double from the start, then bisect.",
    )
    rate_start = forms.IntegerField(
        required=False, min_value=1, initial=100, label="Start at (tps)"
    )
    rate_max = forms.IntegerField(
        required=False, min_value=1, initial=1_000_000, label="Up to (tps)"
    )
    rate_slo_ms = forms.FloatField(
        required=False, min_value=0.001, label="p95 SLO (ms)", help_text="Optional."
    )  # fmt: skip
    rate_tolerance_pct = forms.FloatField(
        required=False, min_value=0.1, max_value=50, label="Keeps up within (%)",
        help_text="How far below the asked rate the achieved tps may fall. Empty: 5 %.",
    )  # fmt: skip
    rate_precision_pct = forms.FloatField(
        required=False, min_value=1, max_value=100, label="Bisect to (%)",
        help_text="The search stops when the bounds are this close. Empty: 10 %.",
    )  # fmt: skip

    script_options = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        label="Script options",
        help_text="The script's own options, one name=value a line (e.g. scale=10): the "
        "scripts page lists what each script declares.",
    )

    def __init__(self, *args: Any, user: User | AnonymousUser | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        may_script = user is not None and user.has_perm("runs.upload_luascript")
        self.fields["tests"].widget.attrs["data-suite"] = suites.suite_text(
            suites.microbenchmarks()
        )
        plan_script = self.initial.get("script")
        if not may_script and not plan_script:
            del self.fields["script"]
            del self.fields["script_options"]

    def clean_tests(self) -> list[dict[str, Any]]:
        try:
            return suites.suite_from_text(self.cleaned_data.get("tests") or "")
        except InvalidInput as e:
            raise forms.ValidationError(e.message) from None

    def clean_notify_emails(self) -> str:
        # A browser sends a textarea's lines ending in CRLF: stored as the API's `\n`.
        return str(self.cleaned_data.get("notify_emails") or "").replace("\r\n", "\n")

    def plan_fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        tests = data.get("tests") or []
        return {
            "tests": tests,
            "name": data["name"],
            "target": data["target"],
            "load_host": data["load_host"],
            "load_split": data.get("load_split") or LoadSplit.DIVIDE,
            "test": tests[0]["test"] if tests else data["test"],  # the axis's first
            "script": data.get("script"),
            "repeats": data["repeats"],
            "warmup_s": data["warmup_s"],
            "quiet_wait_s": data.get("quiet_wait_s") or 0,
            "order_policy": data["order_policy"],
            "dataset_policy": data["dataset_policy"],
            "cleanup": data["cleanup"],
            "seed": data.get("seed"),
            "notify_emails": data.get("notify_emails") or "",
            "notify_webhook": data.get("notify_webhook") or "",
            # Left empty: the plan's defaults (5 %, 7 nights).
            "regression_threshold_pct": data.get("regression_threshold_pct") or 5.0,
            "history_nights": data.get("history_nights") or 7,
            "auto": self.auto_settings(),
        }

    def servers(self, configs: list[dict[str, str]]) -> dict[str, Any]:
        """The plan's `servers` (its targets apart): only the keys the user gave, so that a
        plan saved unchanged keeps the object it had."""
        data = self.cleaned_data
        installs = [label.strip() for label in (data.get("installs") or "").split(",")]
        given: dict[str, Any] = {
            "installs": [label for label in installs if label],
            "configs": configs,
            "after_restart": data.get("after_restart") or None,
            "warm_s": data.get("warm_s"),
        }
        return {key: value for key, value in given.items() if value not in (None, [])}

    def auto_settings(self) -> dict[str, Any]:
        """The plan's `auto` field from the checked modes (checked further on save)."""
        data = self.cleaned_data
        modes: dict[str, Any] = {}
        for mode, fields in AUTO_FIELDS.items():
            if data.get(f"{mode}_auto"):
                given = {key: data.get(name) for name, key in fields.items()}
                modes[mode] = {k: v for k, v in given.items() if v is not None}
        if data.get("hold_last_level_s"):
            modes["hold"] = {"last_level_s": data["hold_last_level_s"]}
        return modes


# form field → key of the plan's `auto` settings, per mode
AUTO_FIELDS: dict[str, dict[str, str]] = {
    "repeats": {
        "repeats_target_pct": "target_pct", "repeats_max": "max",
        "repeats_margin_pct": "margin_pct",
    },
    "threads": {
        "threads_max": "max", "threads_slo_ms": "slo_p95_ms", "threads_rise_pct": "rise_pct",
    },
    "rate": {
        "rate_start": "start", "rate_max": "max", "rate_slo_ms": "slo_p95_ms",
        "rate_tolerance_pct": "tolerance_pct", "rate_precision_pct": "precision_pct",
    },
}  # fmt: skip
