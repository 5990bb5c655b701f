"""benchdash's URLs plus two views that fail, an API view and a page, for the tests of what
Django answers after an unexpected error (tests/api/test_errors.py)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchdash import urls as site


class FailingApiView(APIView):
    def get(self, request: Request) -> Response:
        raise RuntimeError("a bug in an API view")


def failing_page(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a page")


urlpatterns = [
    path("api/v1/failing", FailingApiView.as_view()),
    path("failing", failing_page),
    *site.urlpatterns,
]
handler400 = site.handler400
handler403 = site.handler403
handler404 = site.handler404
handler500 = site.handler500
