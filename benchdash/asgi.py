import gc
import os

from django.core.asgi import get_asgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
# Tells the settings that requests run here, each in a thread of its own: database
# connections then come from a bounded pool (see DATABASES in benchdash/settings.py).
os.environ["BENCHDASH_WEB_SERVER"] = "asgi"
application = get_asgi_application()

# Every view imported now rather than at the first request, then what is loaded, which
# lives as long as the process, is left out of the garbage collector's full collections:
# walking it cost a request 120 ms about every other results page of a large batch
# (docs/PERFORMANCE.md). The worker does the same once it is ready (runs/tasks.py).
get_resolver().url_patterns  # noqa: B018 - imports the URLconf and every view
gc.collect()
gc.freeze()
