import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchdash.settings")
# Tells the settings that requests run here, each in a thread of its own: database
# connections then come from a bounded pool (see DATABASES in benchdash/settings.py).
os.environ["BENCHDASH_WEB_SERVER"] = "asgi"
application = get_asgi_application()
