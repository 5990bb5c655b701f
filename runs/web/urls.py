"""URLs of the pages."""

from django.urls import path, re_path
from django.views.generic import RedirectView

from runs.web.views import (
    alerts,
    batches,
    health,
    history,
    imports,
    loadhosts,
    notes,
    plans,
    results,
    scripts,
    targets,
    tokens,
)

urlpatterns = [
    path("", batches.home, name="home"),
    path("health", health.health_page, name="health"),
    # batches: live, results, exports, compare
    path("batches/<int:batch_id>/", batches.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/progress", batches.batch_progress, name="batch_progress"),
    path("batches/<int:batch_id>/cancel", batches.batch_cancel, name="batch_cancel"),
    path("batches/<int:batch_id>/notes", notes.batch_notes, name="batch_notes"),
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
    path("load-hosts/", loadhosts.load_hosts_list, name="load_hosts"),
    path("load-hosts/new", loadhosts.load_host_edit, name="load_host_new"),
    path("load-hosts/<int:host_id>/", loadhosts.load_host_detail, name="load_host_detail"),
    path("load-hosts/<int:host_id>/edit", loadhosts.load_host_edit, name="load_host_edit"),
    path("load-hosts/<int:host_id>/delete", loadhosts.load_host_delete, name="load_host_delete"),
    path("load-hosts/<int:host_id>/scan", loadhosts.load_host_scan, name="load_host_scan"),
    path("load-hosts/<int:host_id>/confirm", loadhosts.load_host_confirm, name="load_host_confirm"),
    path("load-hosts/<int:host_id>/facts", loadhosts.load_host_facts, name="load_host_facts"),
    # the pages' old address of load hosts, for bookmarks
    re_path(r"^hosts/(?P<rest>.*)$", RedirectView.as_view(url="/load-hosts/%(rest)s")),
    # plans and schedules
    path("plans/", plans.plans_list, name="plans"),
    path("plans/new", plans.plan_edit, name="plan_new"),
    path("plans/check", plans.plan_check, name="plan_check"),
    path("plans/preflight", plans.plan_preflight, name="plan_preflight"),
    path("plans/<int:plan_id>/", plans.plan_edit, name="plan_edit"),
    path("plans/<int:plan_id>/launch", plans.plan_launch, name="plan_launch"),
    path("plans/<int:plan_id>/delete", plans.plan_delete, name="plan_delete"),
    path("plans/<int:plan_id>/history", history.plan_history, name="plan_history"),
    path("plans/<int:plan_id>/annotations", notes.annotation_add, name="annotation_add"),
    path(
        "annotations/<int:annotation_id>/delete", notes.annotation_delete, name="annotation_delete"
    ),
    path("alerts/<int:alert_id>/decision", alerts.alert_decide, name="alert_decide"),
    path("schedules/", plans.schedules_list, name="schedules"),
    path("scripts/", scripts.scripts_list, name="scripts"),
    # import, tokens
    path("import", imports.log_import, name="import"),
    path("tokens/", tokens.tokens_page, name="tokens"),
    path("tokens/<str:token_key>/revoke", tokens.token_revoke, name="token_revoke"),
]
