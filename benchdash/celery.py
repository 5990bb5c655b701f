"""The Celery app: benchmarks on their own queue, housekeeping on the default one."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")

app = Celery("benchdash")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
