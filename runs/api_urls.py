"""URLs of the REST API, mounted at /api/v1/."""

from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from runs import api, api_compare

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The interactive documentation is a page for people: without a session, the login page.
    path(
        "docs/",
        login_required(SpectacularSwaggerView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
    path("tokens", api.TokenList.as_view(), name="api-tokens"),
    path("tokens/<str:token_key>", api.TokenRevoke.as_view(), name="api-token"),
    path("targets", api.TargetList.as_view(), name="api-targets"),
    path("targets/<int:pk>", api.TargetDetail.as_view(), name="api-target"),
    path("load-hosts", api.LoadHostList.as_view(), name="api-load-hosts"),
    path("load-hosts/<int:pk>", api.LoadHostDetail.as_view(), name="api-load-host"),
    path("load-hosts/<int:pk>/scan", api.LoadHostScan.as_view(), name="api-load-host-scan"),
    path(
        "load-hosts/<int:pk>/confirm-host-key",
        api.LoadHostConfirmHostKey.as_view(),
        name="api-load-host-confirm",
    ),
    path("plans", api.PlanList.as_view(), name="api-plans"),
    path("plans/<int:pk>", api.PlanDetail.as_view(), name="api-plan"),
    path("plans/<int:pk>/preflight", api.PlanPreflight.as_view(), name="api-plan-preflight"),
    path("plans/<int:pk>/launch", api.PlanLaunch.as_view(), name="api-plan-launch"),
    path("plans/<int:pk>/schedule", api.PlanSchedule.as_view(), name="api-plan-schedule"),
    path("batches", api.BatchList.as_view(), name="api-batches"),
    path("batches/<int:pk>", api.BatchDetail.as_view(), name="api-batch"),
    path("batches/<int:pk>/cancel", api.BatchCancel.as_view(), name="api-batch-cancel"),
    path("batches/<int:pk>/runs", api.BatchRuns.as_view(), name="api-batch-runs"),
    path("runs/<int:pk>", api.RunDetail.as_view(), name="api-run"),
    path("runs/<int:pk>/samples", api.RunSamples.as_view(), name="api-run-samples"),
    path("imports", api.LogImport.as_view(), name="api-imports"),
    path("compare", api_compare.Compare.as_view(), name="api-compare"),
]
