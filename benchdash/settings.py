"""benchdash settings: everything comes from the environment, with defaults that work
on a developer machine (Postgres and Redis on 127.0.0.1)."""

import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path

import django_stubs_ext

# Lets generic classes such as ModelAdmin[Target] be written at run time too.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("BENCHDASH_VAR_DIR", BASE_DIR / "var"))


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    return env(name, "1" if default else "0").lower() in {"1", "true", "yes", "on"}


def _key_from_file(name: str, make: Callable[[], str]) -> str:
    """A key kept in VAR_DIR, created once: local set-ups need no manual step, and the
    key survives restarts so that encrypted secrets stay readable."""
    path = VAR_DIR / name
    if not path.exists():
        # 0700: the keys, the logs and the demo's password are the service's alone.
        VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(make())
    return path.read_text().strip()


def _fernet_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


SECRET_KEY = env("BENCHDASH_SECRET_KEY") or _key_from_file(
    "secret_key", lambda: secrets.token_urlsafe(50)
)
# Secrets of targets and load hosts are encrypted with these Fernet keys (comma-separated,
# newest first, so keys can be rotated).
ENCRYPTION_KEYS = [
    k.strip()
    for k in (
        env("BENCHDASH_ENCRYPTION_KEYS") or _key_from_file("encryption_key", _fernet_key)
    ).split(",")
    if k.strip()
]
DEBUG = env_bool("BENCHDASH_DEBUG", False)
ALLOWED_HOSTS = env("BENCHDASH_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in env("BENCHDASH_CSRF_TRUSTED_ORIGINS").split(",") if o]

# Production behind HTTPS: benchdash is served through a TLS-terminating proxy that sets
# X-Forwarded-Proto (trusted only with this switch on). Plain HTTP is redirected, cookies
# travel over HTTPS only, and browsers are told to come back over HTTPS only (HSTS).
HTTPS = env_bool("BENCHDASH_HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(env("BENCHDASH_HSTS_SECONDS") or str(365 * 24 * 3600))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("BENCHDASH_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("BENCHDASH_HSTS_PRELOAD", True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "runs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Above everything that writes a body, so it compresses what they wrote; static files
    # come from whitenoise already compressed (collectstatic writes a .gz of each).
    "runs.web.middleware.CompressionMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Reads a page's upload before the CSRF check does: a log too large is then refused in
    # words (runs/web/middleware.py).
    "runs.web.middleware.UploadLimitMiddleware",
    # A U+202E in a comment would reverse the text a reader sees: every page shows it.
    "runs.web.middleware.BidiShownMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "benchdash.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "runs.web.views.health.health_banner",
                "runs.web.links.links",
            ],
            # The pages' filters live with the pages (runs/web/), not in runs/templatetags.
            "libraries": {"benchdash": "runs.web.templatetags.benchdash"},
        },
    },
]
WSGI_APPLICATION = "benchdash.wsgi.application"
ASGI_APPLICATION = "benchdash.asgi.application"

# The web server runs each request in a thread of its own (Django under ASGI), and a
# persistent connection per thread is never used again: it would stay open until garbage
# collected, and 50 clients exhausted PostgreSQL's max_connections. There, connections come
# from a pool of at most BENCHDASH_DB_POOL_SIZE per web worker process, handed back at the
# end of each request. The Celery processes keep one persistent connection per thread.
WEB_SERVER = env("BENCHDASH_WEB_SERVER") == "asgi"  # set by benchdash/asgi.py
# Pages computed at once by one web worker process, the others waiting in line (0: no
# line). Two: one computes while the other waits on the database, and a long request
# (an import, the first view of a large batch) leaves the other turn to everyone else.
WEB_TURNS = int(env("BENCHDASH_WEB_TURNS") or "2")
DB_POOL = {
    "min_size": 1,
    "max_size": int(env("BENCHDASH_DB_POOL_SIZE") or "8"),
    # Seconds a request waits for a connection. The pool reconnects in the background; a
    # request need not wait longer to learn that the database is gone: it is answered 503
    # in words (runs/api/errors.py) within these seconds, not 500 after 30.
    "timeout": float(env("BENCHDASH_DB_POOL_TIMEOUT") or "5"),
    "max_idle": 60,  # seconds an idle connection beyond min_size is kept
}
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": env("BENCHDASH_DB_HOST", "127.0.0.1"),
        "PORT": env("BENCHDASH_DB_PORT", "5432"),
        "NAME": env("BENCHDASH_DB_NAME", "benchdash"),
        "USER": env("BENCHDASH_DB_USER", "postgres"),
        "PASSWORD": env("BENCHDASH_DB_PASSWORD"),
        "CONN_MAX_AGE": 0 if WEB_SERVER else 60,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {"connect_timeout": 10, **({"pool": DB_POOL} if WEB_SERVER else {})},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Django's database sessions, each read with one written-out SELECT (runs/web/sessions.py).
SESSION_ENGINE = "runs.web.sessions"
# Its users read the same way (runs/web/users.py); Django's backend after it keeps the
# sessions it logged in valid. Two backends: a login() in code names its backend, and a
# backend added here must come first (the first refuses a password for all of them).
AUTHENTICATION_BACKENDS = [
    "runs.web.users.UserBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env("BENCHDASH_STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# The npm packages the pages import (templates/base.html maps them), served under vendor/;
# only these: node_modules also holds the dev tools (ESLint, TypeScript), not for browsers.
BROWSER_PACKAGES = (
    "chart.js",
    "@kurkle/color",  # what Chart.js imports
    "chartjs-chart-error-bars",
    "chartjs-plugin-annotation",
)
STATICFILES_DIRS = [
    BASE_DIR / "static",
    *((f"vendor/{name}", BASE_DIR / "node_modules" / name) for name in BROWSER_PACKAGES),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Celery -------------------------------------------------------------------------------
REDIS_URL = env("BENCHDASH_REDIS_URL", "redis://127.0.0.1:6379/0")
# Names this installation's live channels, heartbeats and Celery queues on a Redis server
# that others share (pub/sub ignores the database number); empty means the name of the
# results database.
BENCHDASH_INSTALLATION = env("BENCHDASH_INSTALLATION")
CELERY_BROKER_URL = REDIS_URL
# Redis, with every broker key (the queues among them) under the installation's name
# (benchdash/broker.py): two installations on one Redis never take each other's batches.
CELERY_BROKER_TRANSPORT = "benchdash.broker:Transport"
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
# A batch runs for hours: the task is acknowledged on receipt and never redelivered by the
# broker. Crashed batches are found by the heartbeat sweeper and re-queued explicitly.
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# An idle worker asks Redis for work once every `polling_interval` seconds (one BRPOP that
# Redis answers at once when a task arrives, so a longer wait costs no latency): 1 s, the
# default, kept each of four idle workers awake for nothing.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 24 * 3600, "polling_interval": 10}
CELERY_TASK_ROUTES = {
    "runs.tasks.batch_execute": {"queue": "benchmarks"},
    # A cell from several load hosts: one driver per host, alongside the batch's task.
    "runs.tasks.host_drive": {"queue": "drivers"},
}
# django_celery_beat's database scheduler, made to ride out an outage of the results
# database (benchdash/beat.py).
CELERY_BEAT_SCHEDULER = "benchdash.beat:BeatScheduler"
# Beat reads its whole schedule again this often (seconds, at most 300), besides whenever a
# schedule is edited.
BENCHDASH_BEAT_FULL_SYNC_S = float(env("BENCHDASH_BEAT_FULL_SYNC_S") or "300")
# Beat writes a schedule's last_run_at and total_run_count after every fire, not every
# three minutes: the schedules page and the API read them from the database.
CELERY_BEAT_SYNC_EVERY = 1
# The sweeper (runs/services/recovery.py) finds batches whose worker died, and batches
# whose message Redis lost; a crashed batch is handed back within STALE_AFTER + SWEEP_S.
BENCHDASH_SWEEP_S = float(env("BENCHDASH_SWEEP_S") or "60")
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-runs": {"task": "runs.tasks.sweep_stale", "schedule": BENCHDASH_SWEEP_S},
}
# A worker that dies mid-batch is found within WORKER_GONE_AFTER_S + WATCH_S (<= 15 s): while
# it runs a batch its heartbeat in Redis is written every BUSY_BEAT_S, and beat looks every
# WATCH_S whether a busy worker fell silent (one Redis read in beat's own tick, benchdash/
# beat.py); only then does it send runs.tasks.watch_workers. Not a schedule entry: one
# fired every 4 s would cost a message, a task and a database write each time, idle.
BENCHDASH_WATCH_S = float(env("BENCHDASH_WATCH_S") or "4")
BENCHDASH_WORKER_GONE_AFTER_S = float(env("BENCHDASH_WORKER_GONE_AFTER_S") or "8")

# --- benchdash ----------------------------------------------------------------------------
# A running run beats every HEARTBEAT_SECONDS; one silent for STALE_AFTER_SECONDS is
# considered orphaned by a dead worker.
BENCHDASH_HEARTBEAT_SECONDS = float(env("BENCHDASH_HEARTBEAT_SECONDS", "5"))
BENCHDASH_STALE_AFTER_SECONDS = float(env("BENCHDASH_STALE_AFTER_SECONDS", "30"))
# benchdash's own processes (workers, beat) say they are alive this often, busy or idle
# (runs/execution/liveness.py): twice within STALE_AFTER_SECONDS, so that one late beat
# never makes a live process look gone.
BENCHDASH_PROCESS_BEAT_S = min(
    float(env("BENCHDASH_PROCESS_BEAT_S") or "15"), BENCHDASH_STALE_AFTER_SECONDS / 2
)
# While it runs a batch, a worker beats this often: four beats within WORKER_GONE_AFTER_S.
BENCHDASH_BUSY_BEAT_S = min(
    float(env("BENCHDASH_BUSY_BEAT_S") or "2"), BENCHDASH_WORKER_GONE_AFTER_S / 4
)
# A batch still queued this long after it was handed to the broker lost its message (Redis
# restarted without persistence): the sweeper hands it over again. A second delivery is
# harmless, the claim is conditional.
BENCHDASH_QUEUED_GRACE_SECONDS = float(env("BENCHDASH_QUEUED_GRACE_SECONDS") or "60")
BENCHDASH_SYSBENCH = env("BENCHDASH_SYSBENCH", "sysbench")
BENCHDASH_TARGET_TIMEOUT = int(env("BENCHDASH_TARGET_TIMEOUT", "10"))
# Where fileio's test files live on a local load host, from prepare to cleanup: on the disk
# to measure, not a tmpfs.
BENCHDASH_WORK_DIR = env("BENCHDASH_WORK_DIR", str(VAR_DIR / "work"))
# Custom Lua scripts (uploading them needs runs.upload_luascript) may run on the local load
# host; off: SSH hosts only. A service that runs as root loads and runs them as the account
# BENCHDASH_SCRIPT_ACCOUNT (scripts/bootstrap makes it), which reads no key: on by default.
# One that is not root cannot switch accounts, and the script would run as the service's own
# user: off by default, and then uploaded scripts are not even loaded (docs/scripts.md).
BENCHDASH_LOCAL_SCRIPTS = env_bool("BENCHDASH_LOCAL_SCRIPTS", os.geteuid() == 0)
BENCHDASH_SCRIPT_ACCOUNT = env("BENCHDASH_SCRIPT_ACCOUNT", "benchdash-script")
# Restarts (docs/servers.md): what benchdash may run and write on a database server's
# machine, the operator's choice, never a user's. A target restarted as a service names one
# of these commands (a JSON object: name -> argv template, placeholders such as {unit}
# filled with one word each, e.g. {"systemd": ["/usr/bin/systemctl", "restart",
# "{unit}"]}); none by default. Its include is a file inside one of the include folders
# (comma-separated); none by default. A managed instance's directories must be inside
# the install roots (comma-separated) when there are some; empty: any absolute path.
BENCHDASH_RESTART_COMMANDS = json.loads(env("BENCHDASH_RESTART_COMMANDS") or "{}")
BENCHDASH_RESTART_INCLUDE_DIRS = env("BENCHDASH_RESTART_INCLUDE_DIRS").split(",")
BENCHDASH_RESTART_INSTALL_ROOTS = env("BENCHDASH_RESTART_INSTALL_ROOTS").split(",")
# Sample the server's status counters while sysbench runs (one extra connection).
BENCHDASH_COUNTERS = env_bool("BENCHDASH_COUNTERS", True)
# Seconds between two looks at a PostgreSQL target's waits in progress (a second extra
# connection while sysbench runs); 0: not sampled. docs/performance/inside.md: its cost.
BENCHDASH_WAIT_SAMPLE_S = float(env("BENCHDASH_WAIT_SAMPLE_S", "0.2"))
# Sample the server host's and the load hosts' /proc while sysbench runs (one stream per
# machine: docs/host-metrics.md).
BENCHDASH_HOST_METRICS = env_bool("BENCHDASH_HOST_METRICS", True)
# Mean seconds between two samples of the sync probe on the server host (one 4 KiB write
# and fdatasync on its log's file system: docs/host-metrics.md); 0: no probe.
BENCHDASH_SYNC_PROBE_S = float(env("BENCHDASH_SYNC_PROBE_S", "0.2"))
# Seconds for each step of an SSH connection (connect, banner, handshake, login) and for a
# short command on a load host (facts, kill, sysbench --version).
BENCHDASH_SSH_TIMEOUT = float(env("BENCHDASH_SSH_TIMEOUT", "10"))
# A cell from several load hosts starts when every host is staged; a host not ready
# within this many seconds fails the cell, naming the host.
BENCHDASH_BARRIER_TIMEOUT_S = float(env("BENCHDASH_BARRIER_TIMEOUT_S", "60"))
# A run still going at its expected duration + max(this, 20 %) is stopped and failed.
BENCHDASH_TIMEOUT_MARGIN_S = float(env("BENCHDASH_TIMEOUT_MARGIN_S", "30"))
# A running batch rides out a results database away this long (a restart, a failover):
# sysbench goes on, its output waits in memory. Longer, the run is stopped.
BENCHDASH_RESULTS_DB_OUTAGE_S = float(env("BENCHDASH_RESULTS_DB_OUTAGE_S", "300"))
# A batch whose target went away (a restart) waits this long for it before skipping the
# remaining cells.
BENCHDASH_TARGET_WAIT_S = float(env("BENCHDASH_TARGET_WAIT_S", "120"))
# The largest log an import accepts, checked as it is read (an upload: as it arrives).
BENCHDASH_MAX_LOG_MB = float(env("BENCHDASH_MAX_LOG_MB") or "50")

# --- uploads ------------------------------------------------------------------------------
# A log pasted into the import page is a form field, held in memory: up to 10 MB. A file
# beyond 2.5 MB is written to a temporary file as it arrives, never held in memory, and
# refused as soon as it passes BENCHDASH_MAX_LOG_MB.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_HANDLERS = [
    "runs.http.uploads.LogSizeLimit",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- notifications (regressions and lost nights of scheduled plans) ------------------------
# Unless an SMTP server is configured, each mail is a private file (0600) in a private
# directory (0700), EMAIL_FILE_PATH: never the console, whose output is the web server's log,
# for a password reset link is a login (benchdash/mail.py). An empty variable (as
# docker-compose passes an unset one) means the default.
EMAIL_BACKEND = env("BENCHDASH_EMAIL_BACKEND") or "benchdash.mail.PrivateFileBackend"
EMAIL_FILE_PATH = env("BENCHDASH_EMAIL_FILE_PATH") or str(VAR_DIR / "mail")
EMAIL_HOST = env("BENCHDASH_EMAIL_HOST") or "localhost"
EMAIL_PORT = int(env("BENCHDASH_EMAIL_PORT") or "25")
EMAIL_HOST_USER = env("BENCHDASH_EMAIL_USER")
EMAIL_HOST_PASSWORD = env("BENCHDASH_EMAIL_PASSWORD")
EMAIL_USE_TLS = env_bool("BENCHDASH_EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("BENCHDASH_EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = float(env("BENCHDASH_EMAIL_TIMEOUT") or "10")
DEFAULT_FROM_EMAIL = env("BENCHDASH_EMAIL_FROM") or "benchdash@localhost"
# The address people open benchdash at, the start of every link that leaves it (mails,
# webhooks, the downloaded report): by default the one scripts/start serves, on
# BENCHDASH_PORT.
BENCHDASH_PORT = int(env("BENCHDASH_PORT") or "8000")
BENCHDASH_BASE_URL = (env("BENCHDASH_BASE_URL") or f"http://127.0.0.1:{BENCHDASH_PORT}").rstrip("/")
BENCHDASH_WEBHOOK_TIMEOUT = float(env("BENCHDASH_WEBHOOK_TIMEOUT") or "10")
# Webhooks go to public addresses only: a host that resolves to loopback, link-local
# (169.254.169.254, cloud metadata), private or reserved addresses is refused, at save and
# at send, unless an administrator allows them here (a chat server on the office network).
BENCHDASH_WEBHOOK_ALLOW_PRIVATE = env_bool("BENCHDASH_WEBHOOK_ALLOW_PRIVATE", False)

# --- API ----------------------------------------------------------------------------------
# Scripts authenticate with knox tokens (several per user, stored hashed, shown once);
# the browser with its session.
KNOX_TOKEN_MODEL = "runs.ApiToken"  # noqa: S105 - a model name, not a secret
# knox's migrations create its own token table even when the model is swapped for ours,
# and that stray table (with a key to auth_user) breaks flushing the test database.
MIGRATION_MODULES = {"knox": None}
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "runs.api.auth.TokenAuthentication",  # knox's, remembering tokens for health
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Bodies are JSON (the log import alone takes multipart, for its file): the schema then
    # offers each body in one media type, which is what clients generated from it handle.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_PAGINATION_CLASS": "runs.api.conventions.Pages",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "runs.api.conventions.Negotiation",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "runs.api.errors.exception_handler",
}
# A token the results database verified within this many seconds is taken again by
# `GET /api/v1/health`, and by nothing else, while that database is down (the workers',
# beat's and the sweeper's state is in Redis): runs/services/verified_tokens.py. 0: never.
BENCHDASH_HEALTH_TOKEN_MEMORY_S = float(env("BENCHDASH_HEALTH_TOKEN_MEMORY_S") or "3600")
# Tokens live until revoked, unless created with an expiry.
REST_KNOX = {"TOKEN_TTL": None, "AUTO_REFRESH": False}
SPECTACULAR_SETTINGS = {
    "TITLE": "benchdash API",
    "DESCRIPTION": "Targets, load hosts, plans, batches, runs and their samples.",
    "VERSION": "1",
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # The documentation page works offline: its assets come from drf-spectacular-sidecar.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "StatusEnum": "runs.models.Status",
        "PreflightCheckStatusEnum": ["ok", "warning", "failed"],
        "VerdictEnum": "runs.api.nightly.history.VERDICTS",
        "LaunchedByEnum": "runs.models.LaunchedBy",
        "LaunchClaimEnum": ["api", "cli"],  # what a launch may say of itself
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "runs.api.errors.document_errors",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("BENCHDASH_LOG_LEVEL", "INFO")},
    # paramiko says "Connected" and "Authentication successful" at INFO for every SSH
    # connection, that is for every sysbench command on a remote load host.
    "loggers": {"paramiko": {"level": "WARNING"}},
}
