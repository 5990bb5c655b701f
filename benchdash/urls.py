from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("runs.api.urls")),
    path("", include("runs.web.urls")),
]

# JSON under /api/, Django's HTML pages elsewhere.
handler400 = "runs.api.errors.bad_request"
handler403 = "runs.api.errors.permission_denied"
handler404 = "runs.api.errors.page_not_found"
handler500 = "runs.api.errors.server_error"
