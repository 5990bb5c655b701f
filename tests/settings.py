"""Settings for the test suite: benchdash's own, with a fast heartbeat so crash recovery can
be exercised in seconds, on this run's database names and this slot's Redis, work and mail
directories (tests/isolation.py): whatever BENCHDASH_REDIS_URL says, the tests never use a
shared Redis."""

import json
import os
import tempfile
from pathlib import Path

from tests import isolation

os.environ.setdefault("BENCHDASH_HEARTBEAT_SECONDS", "1")
os.environ.setdefault("BENCHDASH_STALE_AFTER_SECONDS", "5")
os.environ.setdefault("BENCHDASH_TIMEOUT_MARGIN_S", "3")
# The webhook receivers of the tests listen on loopback; tests/services/nightly/test_webhooks.py
# turns this off to see such addresses refused.
os.environ.setdefault("BENCHDASH_WEBHOOK_ALLOW_PRIVATE", "1")
# The restarts a test's service may run: its private server's own "service manager" script
# (tests/execution/test_restart_service.py), in the server's folder of the temporary
# directory, which holds its includes too. The worker and uvicorn inherit them.
os.environ.setdefault(
    "BENCHDASH_RESTART_COMMANDS",
    json.dumps(
        {"test-service": ["/bin/sh", f"{tempfile.gettempdir()}/{{server}}/restart-mariadb"]}
    ),
)
os.environ.setdefault("BENCHDASH_RESTART_INCLUDE_DIRS", tempfile.gettempdir())
isolation.set_up(
    Path(os.environ.get("BENCHDASH_VAR_DIR", Path(__file__).resolve().parents[1] / "var"))
)

from benchdash.settings import *  # noqa: E402, F403

DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405 - worker threads must not keep connections
DATABASES["default"]["TEST"] = {"NAME": isolation.test_database(str(DATABASES["default"]["NAME"]))}  # noqa: F405
# The browser tests load the page scripts and Chart.js from uvicorn without collectstatic.
WHITENOISE_USE_FINDERS = True
