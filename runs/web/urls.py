"""URLs of the pages."""

from django.urls import path

from runs.web.views import (
    alerts,
    batches,
    history,
    hosts,
    imports,
    plans,
    results,
    scripts,
    targets,
    tokens,
)

urlpatterns = [
    path("", batches.home, name="home"),
    # batches: live, results, exports, compare
    path("batches/<int:batch_id>/", batches.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/progress", batches.batch_progress, name="batch_progress"),
    path("batches/<int:batch_id>/cancel", batches.batch_cancel, name="batch_cancel"),
    path("batches/<int:batch_id>/notes", alerts.batch_notes, name="batch_notes"),
    path("batches/<int:batch_id>/results", results.batch_results, name="batch_results"),
    path("batches/<int:batch_id>/export.csv", results.export_csv, name="batch_export_csv"),
    path("batches/<int:batch_id>/export.json", results.export_json, name="batch_export_json"),
    path("batches/<int:batch_id>/report.html", results.batch_report, name="batch_report"),
    path("compare", results.compare, name="compare"),
    path("runs/<int:run_id>/", batches.run_live, name="run_live"),
    path("runs/<int:run_id>/events", batches.run_events, name="run_events"),
    path("runs/<int:run_id>/log", batches.run_log, name="run_log"),
    # targets
    path("targets/", targets.targets_list, name="targets"),
    path("targets/new", targets.target_edit, name="target_new"),
    path("targets/<int:target_id>/", targets.target_detail, name="target_detail"),
    path("targets/<int:target_id>/edit", targets.target_edit, name="target_edit"),
    path("targets/<int:target_id>/delete", targets.target_delete, name="target_delete"),
    # load hosts
    path("hosts/", hosts.hosts_list, name="hosts"),
    path("hosts/new", hosts.host_edit, name="host_new"),
    path("hosts/<int:host_id>/", hosts.host_detail, name="host_detail"),
    path("hosts/<int:host_id>/edit", hosts.host_edit, name="host_edit"),
    path("hosts/<int:host_id>/delete", hosts.host_delete, name="host_delete"),
    path("hosts/<int:host_id>/scan", hosts.host_scan, name="host_scan"),
    path("hosts/<int:host_id>/confirm", hosts.host_confirm, name="host_confirm"),
    path("hosts/<int:host_id>/facts", hosts.host_facts, name="host_facts"),
    # plans and schedules
    path("plans/", plans.plans_list, name="plans"),
    path("plans/new", plans.plan_edit, name="plan_new"),
    path("plans/check", plans.plan_check, name="plan_check"),
    path("plans/preflight", plans.plan_preflight, name="plan_preflight"),
    path("plans/<int:plan_id>/", plans.plan_edit, name="plan_edit"),
    path("plans/<int:plan_id>/launch", plans.plan_launch, name="plan_launch"),
    path("plans/<int:plan_id>/delete", plans.plan_delete, name="plan_delete"),
    path("plans/<int:plan_id>/history", history.plan_history, name="plan_history"),
    path("plans/<int:plan_id>/annotations", alerts.annotation_add, name="annotation_add"),
    path(
        "annotations/<int:annotation_id>/delete", alerts.annotation_delete, name="annotation_delete"
    ),
    path("alerts/<int:alert_id>/decision", alerts.alert_decide, name="alert_decide"),
    path("schedules/", plans.schedules_list, name="schedules"),
    path("scripts/", scripts.scripts_list, name="scripts"),
    # import, tokens
    path("import", imports.log_import, name="import"),
    path("tokens/", tokens.tokens_page, name="tokens"),
    path("tokens/<str:token_key>/revoke", tokens.token_revoke, name="token_revoke"),
]
