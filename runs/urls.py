from django.urls import path

from runs import views, views_history, views_results, views_setup

urlpatterns = [
    path("", views.home, name="home"),
    # batches: live, results, exports, compare
    path("batches/<int:batch_id>/", views.batch_detail, name="batch_detail"),
    path("batches/<int:batch_id>/progress", views.batch_progress, name="batch_progress"),
    path("batches/<int:batch_id>/cancel", views.batch_cancel, name="batch_cancel"),
    path("batches/<int:batch_id>/results", views_results.batch_results, name="batch_results"),
    path("batches/<int:batch_id>/export.csv", views_results.export_csv, name="batch_export_csv"),
    path("batches/<int:batch_id>/export.json", views_results.export_json, name="batch_export_json"),
    path("compare", views_results.compare, name="compare"),
    path("runs/<int:run_id>/", views.run_live, name="run_live"),
    path("runs/<int:run_id>/events", views.run_events, name="run_events"),
    # targets
    path("targets/", views_setup.targets_list, name="targets"),
    path("targets/new", views_setup.target_edit, name="target_new"),
    path("targets/<int:target_id>/", views_setup.target_detail, name="target_detail"),
    path("targets/<int:target_id>/edit", views_setup.target_edit, name="target_edit"),
    path("targets/<int:target_id>/delete", views_setup.target_delete, name="target_delete"),
    # load hosts
    path("hosts/", views_setup.hosts_list, name="hosts"),
    path("hosts/new", views_setup.host_edit, name="host_new"),
    path("hosts/<int:host_id>/", views_setup.host_detail, name="host_detail"),
    path("hosts/<int:host_id>/edit", views_setup.host_edit, name="host_edit"),
    path("hosts/<int:host_id>/delete", views_setup.host_delete, name="host_delete"),
    path("hosts/<int:host_id>/scan", views_setup.host_scan, name="host_scan"),
    path("hosts/<int:host_id>/confirm", views_setup.host_confirm, name="host_confirm"),
    path("hosts/<int:host_id>/facts", views_setup.host_facts, name="host_facts"),
    # plans and schedules
    path("plans/", views_setup.plans_list, name="plans"),
    path("plans/new", views_setup.plan_edit, name="plan_new"),
    path("plans/check", views_setup.plan_check, name="plan_check"),
    path("plans/preflight", views_setup.plan_preflight, name="plan_preflight"),
    path("plans/<int:plan_id>/", views_setup.plan_edit, name="plan_edit"),
    path("plans/<int:plan_id>/launch", views_setup.plan_launch, name="plan_launch"),
    path("plans/<int:plan_id>/delete", views_setup.plan_delete, name="plan_delete"),
    path("plans/<int:plan_id>/history", views_history.plan_history, name="plan_history"),
    path("schedules/", views_setup.schedules_list, name="schedules"),
    path("scripts/", views_setup.scripts_list, name="scripts"),
    # import, tokens
    path("import", views_setup.log_import, name="import"),
    path("tokens/", views_setup.tokens_page, name="tokens"),
    path("tokens/<str:token_key>/revoke", views_setup.token_revoke, name="token_revoke"),
]
