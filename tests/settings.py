"""Settings for the test suite: benchdash's own, with a Redis database of its own and a
fast heartbeat so crash recovery can be exercised in seconds."""

import os

os.environ.setdefault("BENCHDASH_REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("BENCHDASH_HEARTBEAT_SECONDS", "1")
os.environ.setdefault("BENCHDASH_STALE_AFTER_SECONDS", "5")
os.environ.setdefault("BENCHDASH_TIMEOUT_MARGIN_S", "3")
# The webhook receivers of the tests listen on loopback; tests/services/nightly/test_webhooks.py
# turns this off to see such addresses refused.
os.environ.setdefault("BENCHDASH_WEBHOOK_ALLOW_PRIVATE", "1")

from benchdash.settings import *  # noqa: F403

DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405 - worker threads must not keep connections
# The browser tests load the page scripts and Chart.js from uvicorn without collectstatic.
WHITENOISE_USE_FINDERS = True
