"""`<script>` in a plan name, a target name and a log line comes out escaped everywhere."""

from __future__ import annotations

from pathlib import Path

from runs.models import Alert, Batch, Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"
EVIL = '<script>alert("x")</script>'


def pages_of(batch: Batch, plan_id: int, target_id: int, run_id: int) -> list[str]:
    return [
        "/",
        "/plans/",
        f"/plans/{plan_id}/",
        "/targets/",
        f"/targets/{target_id}/",
        f"/targets/{target_id}/edit",
        f"/targets/{target_id}/delete",
        f"/batches/{batch.pk}/",
        f"/batches/{batch.pk}/results",
        f"/batches/{batch.pk}/results?runs={run_id}&counter=Innodb_data_fsyncs",
        f"/batches/{batch.pk}/progress",
        f"/runs/{run_id}/",
        f"/compare?s=b{batch.pk}&s=r{run_id}",
        "/schedules/",
        "/import",
    ]


def test_script_tags_in_names_and_log_lines_are_escaped_on_every_page(
    client_in, make_batch, stored_target, stored_plan
):
    stored_target.name = f"target {EVIL}"
    stored_target.save()
    stored_plan.name = f"plan {EVIL}"
    stored_plan.save()
    batch = make_batch(threads=(1, 2), repeats=1, samples=5)
    run = batch.runs.get(position=0)
    Run.objects.filter(pk=run.pk).update(
        status="failed", error=f"FATAL: {EVIL}", error_hint=EVIL, raw_log=f"FATAL: {EVIL}\n"
    )
    Batch.objects.filter(pk=batch.pk).update(error=f"FATAL: {EVIL}", warnings=[EVIL], label=EVIL)

    for url in pages_of(batch, stored_plan.pk, stored_target.pk, run.pk):
        body = client_in.get(url).content.decode()
        assert "<script>alert" not in body, url
    results = client_in.get(f"/batches/{batch.pk}/results").content.decode()
    assert "plan &lt;script&gt;" in results and "target &lt;script&gt;" in results


def test_a_log_line_with_a_script_tag_is_escaped_in_the_import_preview_and_after(client_in):
    log = (FIXTURES / "err_missing_table.txt").read_text() + f"FATAL: {EVIL}\n"
    preview = client_in.post("/import", {"text": log, "action": "preview", "label": EVIL})
    assert "<script>alert" not in preview.content.decode()
    assert "&lt;script&gt;" in preview.content.decode()

    client_in.post("/import", {"text": log, "action": "save", "label": EVIL})
    batch = Batch.objects.get()
    run = batch.runs.get()
    assert EVIL in run.error or EVIL in run.raw_log
    for url in (f"/batches/{batch.pk}/", f"/batches/{batch.pk}/results", "/", f"/runs/{run.pk}/"):
        assert "<script>alert" not in client_in.get(url).content.decode(), url


RLO = "\u202e"  # right-to-left override: "noise \u202eevorppa" reads "noise approve"


def test_bidi_controls_are_shown_not_obeyed_everywhere(
    client_in, make_batch, stored_target, stored_plan
):
    stored_plan.name = f"plan {RLO}gnp.exe"
    stored_plan.save()
    batch = make_batch(threads=(1,), repeats=1, samples=3)
    run = batch.runs.get(position=0)
    Batch.objects.filter(pk=batch.pk).update(
        label=f"night {RLO}gnp.exe", notes=f"ok {RLO}3202 ni deggot"
    )
    Alert.objects.create(
        plan=stored_plan, batch=batch, state="dismissed", comment=f"noise {RLO}evorppa"
    )

    urls = [*pages_of(batch, stored_plan.pk, stored_target.pk, run.pk)]
    for url in [*urls, f"/plans/{stored_plan.pk}/history"]:
        body = client_in.get(url).content.decode()
        assert RLO not in body, url
    history = client_in.get(f"/plans/{stored_plan.pk}/history").content.decode()
    assert "noise [U+202E]evorppa" in history
    assert "ok [U+202E]3202 ni deggot" in client_in.get(f"/batches/{batch.pk}/").content.decode()
    batch.refresh_from_db()
    assert batch.notes == f"ok {RLO}3202 ni deggot"  # stored as typed
