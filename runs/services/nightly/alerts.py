"""Alerts: a night that looked slower, from the suspicion to what the team made of it.

When the nightly check alerts cells (a new slower step, runs/services/nightly/check.py), nobody
is told yet: an Alert is recorded (confirming) with the flagged cells and what changed
since the baseline nights (runs/analysis/nightly/night_changes.py), and a batch launched to
confirm re-runs the flagged cells at once, interleaved, with repeats auto. When it ends,
each alerted step is judged by where the re-run lands (runs/analysis/nightly/confirmation.py):
the alert is confirmed (the plan's recipients are told, with the evidence) or noise
(recorded, nobody told). A confirmation that failed or was cancelled tells the recipients
that the night could not be confirmed; the alert stays open for a person to decide.

People then acknowledge it, dismiss it as noise, or accept it as the new baseline
(Plan.baseline_from: the nights before it no longer judge the nights after).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from runs.analysis.auto import settings as auto_settings
from runs.analysis.nightly import confirmation, night_changes, regressions
from runs.analysis.results import cell_axes, run_axes, series_label
from runs.columns import BatchEnvironment, NightCheck, RunSummary
from runs.errors import InvalidInput
from runs.frozen import FrozenPlan
from runs.models import Alert, Batch, LaunchedBy, Plan, Run, Status
from runs.services import batches
from runs.services.nightly import check as nightly_check
from runs.services.nightly import notifications
from runs.services.queue import BrokerUnavailable

logger = logging.getLogger(__name__)

State = Alert.State
UNCONFIRMED = "unconfirmed"  # confirming, but its confirmation ended without an answer
DECISIONS = {
    "acknowledge": State.ACKNOWLEDGED,
    "dismiss": State.DISMISSED,
    "accept": State.ACCEPTED,
}
# What a person may decide, from each state (an alert still confirming waits for its re-run).
OPEN_TO = {
    State.CONFIRMED: {State.ACKNOWLEDGED, State.DISMISSED, State.ACCEPTED},
    State.ACKNOWLEDGED: {State.DISMISSED, State.ACCEPTED},
    UNCONFIRMED: {State.ACKNOWLEDGED, State.DISMISSED, State.ACCEPTED},
    State.NOISE: {State.ACCEPTED},  # the re-run may be wrong: a person may still accept
}
TELEMETRY_FIELDS = (
    "id",
    "batch_id",
    "cell_key",
    "threads",
    "settings",
    "host_summary",
    "bottleneck",
    "environment",  # the run's own: its target's version and address, not the 650 variables
)


def alert_status(alert: Alert) -> str:
    """The alert's state as people read it: `unconfirmed` for one whose confirmation
    ended without an answer."""
    if alert.state == State.CONFIRMING and alert.verdict:
        return UNCONFIRMED
    return str(alert.state)


# --- a night alerted ---------------------------------------------------------------------------


def batch_judge(*, batch: Batch) -> None:
    """After a scheduled batch or a batch launched to confirm ended (the task): a night
    is checked (nightly_check.batch_analyse, which tells of a lost night), and alerted cells open
    an alert; a confirmation judges its alert."""
    if batch.launched_by == LaunchedBy.CONFIRM:
        confirmation_finished(batch=batch)
        return
    nightly_check.batch_analyse(batch=batch)
    if (
        batch.status == Status.DONE
        and NightCheck.load(batch.analysis).status == regressions.REGRESSION
    ):
        alert_open(batch=batch, previous=nightly_check.previous_nights(batch=batch))


def alert_open(*, batch: Batch, previous: Sequence[Batch]) -> Alert | None:
    """Record the alert of a night whose check flagged cells, with what changed since the
    baseline nights (`previous`: the nights it was judged against, most recent first), and
    launch its confirmation. Once per night: a redelivered check finds the alert."""
    plan = batch.plan
    flagged = [c for c in NightCheck.load(batch.analysis).cells if c.get("flagged")]
    if plan is None or not flagged:
        return None
    try:
        with transaction.atomic():
            Batch.objects.select_for_update().only("id").get(pk=batch.pk)
            found = Alert.objects.filter(batch=batch).first()
            if found is not None:
                return found
            alert = Alert.objects.create(
                plan=plan,
                batch=batch,
                cells=[_alert_cell(cell) for cell in flagged],
                changes=batch_changes(batch=batch, baseline=_baseline(flagged, previous, plan)),
            )
            alert.confirmation = confirmation_launch(alert=alert)
            alert.save(update_fields=["confirmation"])
    except BrokerUnavailable:
        # Committed, but no worker will run the re-run (it was failed at once): say so.
        confirmation_finished(batch=Batch.objects.get(confirms__batch=batch))
        return Alert.objects.get(batch=batch)
    logger.info(
        "batch %s: alert %s, confirming with batch %s", batch.pk, alert.pk, alert.confirmation_id
    )
    return alert


def _alert_cell(cell: dict[str, Any]) -> dict[str, Any]:
    keys = ("identity", "label", "threads", "settings", "options")
    return {
        **{k: cell.get(k) for k in keys},
        "steps": [s for s in cell.get("steps", []) if s.get("alert")],
        "checks": [c for c in cell.get("checks", []) if c.get("verdict") == regressions.REGRESSION],
    }


def _baseline(flagged: list[dict[str, Any]], previous: Sequence[Batch], plan: Plan) -> list[Batch]:
    """The nights before the earliest alerted step (a step found a night late has the
    night before tonight on its slower side), as many as the band's window."""
    step_nights = {s.get("batch") for c in flagged for s in c.get("steps", []) if s.get("alert")}
    ids = [b.pk for b in previous]
    after = max((ids.index(b) for b in step_nights if b in ids), default=-1)
    window = max(plan.history_nights, regressions.MIN_NIGHTS)
    return list(previous[after + 1 : after + 1 + window])


def batch_changes(*, batch: Batch, baseline: Sequence[Batch]) -> list[dict[str, Any]]:
    """What differs between a night's environment and its baseline nights' (two queries)."""
    runs: dict[int, list[night_changes.RunTelemetry]] = {}
    ids = [batch.pk, *(b.pk for b in baseline)]
    for run in Run.objects.filter(batch_id__in=ids).only(*TELEMETRY_FIELDS):
        runs.setdefault(run.batch_id, []).append(
            night_changes.RunTelemetry(
                label=_label(run),
                host_summary=run.host_summary or {},
                bottleneck=run.bottleneck or {},
                target=BatchEnvironment.load(run.environment).target,
            )
        )
    environments = dict(Batch.objects.filter(pk__in=ids).values_list("id", "environment"))

    def facts(night: Batch) -> night_changes.NightFacts:
        return night_changes.night_facts(environments.get(night.pk) or {}, runs.get(night.pk, []))

    return night_changes.night_changes(facts(batch), [facts(b) for b in baseline])


# --- the confirmation -------------------------------------------------------------------------


def _label(run: Run) -> str:
    """A cell's label as the nightly check says it: threads=4 flush=2."""
    settings = {str(k): str(v) for k, v in (run.settings or {}).items()}
    axes = run_axes(run)  # its target named, on a servers axis
    varied = cell_axes(run.cell_key)  # its test, install, config where the plan varies them
    return f"threads={run.threads}" + (
        f" {series_label(settings, axes, varied)}" if settings or axes or varied else ""
    )


def confirmation_launch(*, alert: Alert) -> Batch:
    """A batch of the flagged cells only, with the night's frozen parameters: at least
    three repeats each, interleaved (one round of every cell, then the next), and repeats
    auto adding more while the interval of a cell's mean is wider than a quarter of its
    step. Launched as `confirm`: never checked as a night."""
    night = alert.batch
    frozen = FrozenPlan.from_params(night.params)
    wanted = {str(c["identity"]) for c in alert.cells}
    templates: dict[str, Run] = {}
    for run in night.runs.order_by("position"):
        identity = _run_identity(run, frozen)
        if identity in wanted:
            templates.setdefault(identity, run)
    steps = [s for c in alert.cells for s in c["steps"]]
    auto = {
        "repeats": {
            "target_pct": confirmation.target_pct(steps),
            "max": confirmation.MAX_REPEATS,
            "metric": confirmation.watched_metric(steps),
        }
    }
    params = {
        **night.params,
        "repeats": confirmation.MIN_REPEATS,
        "auto": auto_settings.auto_stored(auto),
    }
    cells = [
        Run(
            position=round_ * len(templates) + i,
            round=round_,
            cell_key=t.cell_key,
            threads=t.threads,
            settings=t.settings,
            options=t.options,
            expected_duration_s=t.expected_duration_s,
        )
        for round_ in range(confirmation.MIN_REPEATS)
        for i, t in enumerate(templates.values())
    ]
    return batches.batch_launch_cells(
        plan=alert.plan,
        params=params,
        seed=night.seed,
        cells=cells,
        launched_by=LaunchedBy.CONFIRM,
    )


def _run_identity(run: Run, frozen: FrozenPlan) -> str:
    return regressions.cell_identity(
        test=frozen.test,
        options=run.options or {},
        settings=run.settings or {},
        threads=run.threads,
        target=frozen.target,
        script=frozen.script.content if frozen.script else None,
    )


def confirmation_finished(*, batch: Batch) -> Alert | None:
    """A batch launched to confirm ended: judge its alert, and tell the plan's recipients
    when it is confirmed or could not be. Once: an alert judged already is left alone."""
    with transaction.atomic():
        alert = (
            Alert.objects.select_for_update()
            .select_related("batch", "plan")
            .filter(confirmation=batch)
            .first()
        )
        if alert is None or alert.state != State.CONFIRMING or alert.verdict:
            return alert
        if batch.status == Status.DONE:
            _judge(alert, batch)
        else:
            alert.verdict = (
                f"the confirmation batch {batch.pk} {batch.status}"
                + (f" ({batch.error.splitlines()[0]})" if batch.error else "")
                + ": the night could not be confirmed"
            )
        alert.save(update_fields=["state", "verdict", "cells"])
    if alert.state == State.CONFIRMED or alert_status(alert) == UNCONFIRMED:
        notifications.batch_notify(batch=alert.batch, alert=alert)
    logger.info("alert %s: %s", alert.pk, alert_status(alert))
    return alert


def _judge(alert: Alert, batch: Batch) -> None:
    frozen = FrozenPlan.from_params(batch.params)
    figures: dict[str, dict[str, list[float]]] = {}
    for run in batch.runs.filter(status=Status.DONE).order_by("position"):
        summary = RunSummary.load(run.summary)
        cell = figures.setdefault(_run_identity(run, frozen), {"throughput": [], "latency": []})
        if (value := summary.throughput[0]) is not None:
            cell["throughput"].append(value)
        if (latency := summary.latency_pct_ms) is not None:
            cell["latency"].append(latency)
    judged = [
        confirmation.confirm_cell(c, figures.get(str(c["identity"]), {})) for c in alert.cells
    ]
    verdict = confirmation.alert_verdict(judged)
    alert.cells = [
        {**c, "confirmation": j.to_dict()} for c, j in zip(alert.cells, judged, strict=True)
    ]
    text = confirmation.verdict_text(judged)
    if verdict == confirmation.NO_FIGURE:
        alert.verdict = (
            f"the confirmation batch {batch.pk} measured none of the flagged cells: "
            "the night could not be confirmed"
        )
        return
    alert.state = State.CONFIRMED if verdict == confirmation.CONFIRMED else State.NOISE
    alert.verdict = text


# --- what people decide ------------------------------------------------------------------------


def alert_decide(
    *, alert: Alert, decision: str, user: AbstractBaseUser | AnonymousUser | None, comment: str = ""
) -> Alert:
    """Acknowledge, dismiss as noise, or accept as the new baseline. Accepting sets the
    plan's baseline_from to the night of the alerted step: the nightly check and the
    steps no longer look at the nights before it."""
    if decision not in DECISIONS:
        raise InvalidInput("decision", f"one of {', '.join(DECISIONS)}, not {decision!r}")
    wanted = DECISIONS[decision]
    with transaction.atomic():
        alert = Alert.objects.select_for_update().select_related("plan", "batch").get(pk=alert.pk)
        current = alert_status(alert)
        if wanted not in OPEN_TO.get(current, set()):
            raise InvalidInput("decision", _refusal(current, decision))
        alert.state = wanted
        alert.comment = comment or alert.comment
        alert.decided_by = user if isinstance(user, User) else None
        alert.decided_at = timezone.now()
        alert.save(update_fields=["state", "comment", "decided_by", "decided_at"])
        if wanted == State.ACCEPTED:
            Plan.objects.filter(pk=alert.plan_id).update(baseline_from=alert_step_night(alert))
    return alert


def _refusal(current: str, decision: str) -> str:
    if current == State.CONFIRMING:
        return "the alert is still being confirmed: decide once its re-run ended"
    return f"an alert {current} cannot be {DECISIONS[decision]}"


def alert_step_night(alert: Alert) -> Any:
    """When the earliest alerted step's night ran (the flagged night itself when the step
    is at it): where the new baseline starts."""
    nights = {s.get("batch") for c in alert.cells for s in c.get("steps", [])} - {None}
    dates = list(Batch.objects.filter(pk__in=nights).values_list("created_at", flat=True))
    return min(dates, default=alert.batch.created_at)


def plan_alert_counts(*, plan: Plan, found: Sequence[Alert] | None = None) -> dict[str, int]:
    """The plan's alerts counted (`found`: them, already read): `confirmed` and `noise` by
    what the re-run said (whatever was decided after), the others by their state now;
    `total` all of them."""
    if found is None:
        found = list(Alert.objects.filter(plan=plan).only("state", "verdict", "cells"))
    counts = {
        "total": 0,
        "confirmed": 0,
        "noise": 0,
        "dismissed": 0,
        "acknowledged": 0,
        "accepted": 0,
        "confirming": 0,
        UNCONFIRMED: 0,
    }
    for alert in found:
        counts["total"] += 1
        rerun = alert_rerun(alert)
        if rerun in (confirmation.CONFIRMED, confirmation.NOISE):
            counts[rerun] += 1
        status = alert_status(alert)
        if status not in (State.CONFIRMED, State.NOISE):
            counts[status] += 1
    return counts


def alert_rerun(alert: Alert) -> str | None:
    """What the re-run said of the alert: confirmed, noise, or None (not yet, or it could
    not say)."""
    verdicts = [
        str(c["confirmation"]["verdict"])
        for c in alert.cells
        if isinstance(c.get("confirmation"), dict)
    ]
    if not verdicts:
        return None
    return confirmation.alert_verdict(
        [
            confirmation.CellConfirmation(identity="", label="", verdict=v, steps=[])
            for v in verdicts
        ]
    )


def history_alerts(*, plan: Plan) -> dict[str, Any]:
    """What a plan's history page shows of its alerts (newest first, with their status)
    and annotations (oldest first), and the counts."""
    found = list(
        Alert.objects.filter(plan=plan).select_related("batch", "confirmation", "decided_by")
    )
    return {
        "alerts": [(alert, alert_status(alert)) for alert in found],
        "alert_counts": plan_alert_counts(plan=plan, found=found),
        "annotations": list(plan.annotations.select_related("created_by")),
    }
