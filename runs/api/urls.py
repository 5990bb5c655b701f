"""URLs of the REST API, mounted at /api/v1/."""

from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from runs.api import batches, health, imports, tokens
from runs.api import runs as run_views  # not to hide the package named runs
from runs.api.answers import compare, host_metrics, relative, results
from runs.api.nightly import alerts, history, notes
from runs.api.setup import loadhosts, plans, scripts, targets

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The interactive documentation is a page for people: without a session, the login page.
    path(
        "docs/",
        login_required(SpectacularSwaggerView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
    path("health", health.Health.as_view(), name="api-health"),
    path("tokens", tokens.TokenList.as_view(), name="api-tokens"),
    path("tokens/<str:token_key>", tokens.TokenRevoke.as_view(), name="api-token"),
    path("targets", targets.TargetList.as_view(), name="api-targets"),
    path("targets/<int:pk>", targets.TargetDetail.as_view(), name="api-target"),
    path("load-hosts", loadhosts.LoadHostList.as_view(), name="api-load-hosts"),
    path("load-hosts/<int:pk>", loadhosts.LoadHostDetail.as_view(), name="api-load-host"),
    path("load-hosts/<int:pk>/scan", loadhosts.LoadHostScan.as_view(), name="api-load-host-scan"),
    path(
        "load-hosts/<int:pk>/confirm-host-key",
        loadhosts.LoadHostConfirmHostKey.as_view(),
        name="api-load-host-confirm",
    ),
    path("scripts", scripts.ScriptList.as_view(), name="api-scripts"),
    path("scripts/<int:pk>", scripts.ScriptDetail.as_view(), name="api-script"),
    path("scripts/<int:pk>/versions", scripts.ScriptVersions.as_view(), name="api-script-versions"),
    path("plans", plans.PlanList.as_view(), name="api-plans"),
    path("plans/<int:pk>", plans.PlanDetail.as_view(), name="api-plan"),
    path("plans/suites", plans.Suites.as_view(), name="api-plan-suites"),
    path("plans/<int:pk>/preflight", plans.PlanPreflight.as_view(), name="api-plan-preflight"),
    path("plans/<int:pk>/launch", plans.PlanLaunch.as_view(), name="api-plan-launch"),
    path("plans/<int:pk>/schedule", plans.PlanSchedule.as_view(), name="api-plan-schedule"),
    path("plans/<int:pk>/history", history.PlanHistory.as_view(), name="api-plan-history"),
    path("plans/<int:pk>/alerts", alerts.PlanAlerts.as_view(), name="api-plan-alerts"),
    path(
        "plans/<int:pk>/annotations",
        notes.PlanAnnotations.as_view(),
        name="api-plan-annotations",
    ),
    path("alerts/<int:pk>", alerts.AlertDetail.as_view(), name="api-alert"),
    path("alerts/<int:pk>/decision", alerts.AlertDecide.as_view(), name="api-alert-decide"),
    path("annotations/<int:pk>", notes.AnnotationDetail.as_view(), name="api-annotation"),
    path("batches/<int:pk>/notes", notes.BatchNotes.as_view(), name="api-batch-notes"),
    path("batches", batches.BatchList.as_view(), name="api-batches"),
    path("batches/<int:pk>", batches.BatchDetail.as_view(), name="api-batch"),
    path("batches/<int:pk>/cancel", batches.BatchCancel.as_view(), name="api-batch-cancel"),
    path("batches/<int:pk>/runs", batches.BatchRuns.as_view(), name="api-batch-runs"),
    path("batches/<int:pk>/results", results.BatchResultsView.as_view(), name="api-batch-results"),
    path("batches/<int:pk>/report", results.BatchReport.as_view(), name="api-batch-report"),
    path("batches/<int:pk>/relative", relative.BatchRelative.as_view(), name="api-batch-relative"),
    path("runs/<int:pk>", run_views.RunDetail.as_view(), name="api-run"),
    path("runs/<int:pk>/samples", run_views.RunSamples.as_view(), name="api-run-samples"),
    path("runs/<int:pk>/log", run_views.RunLog.as_view(), name="api-run-log"),
    path(
        "runs/<int:pk>/host-metrics",
        host_metrics.RunHostMetrics.as_view(),
        name="api-run-host-metrics",
    ),
    path("imports", imports.LogImport.as_view(), name="api-imports"),
    path("compare", compare.Compare.as_view(), name="api-compare"),
]
