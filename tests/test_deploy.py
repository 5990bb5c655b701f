"""`manage.py check --deploy` is clean with the production switch on (BENCHDASH_HTTPS=1:
HSTS, secure cookies, the redirect to HTTPS, the proxy's X-Forwarded-Proto trusted), and
says what is missing without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def check_deploy(**env: str) -> subprocess.CompletedProcess[str]:
    production = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("BENCHDASH_HTTPS") and not key.startswith("BENCHDASH_HSTS")
    }
    production.update(DJANGO_SETTINGS_MODULE="benchdash.settings", BENCHDASH_DEBUG="0", **env)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_deploy_is_clean_with_the_production_switch():
    done = check_deploy(BENCHDASH_HTTPS="1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_without_it_check_deploy_names_what_is_missing():
    done = check_deploy()
    assert done.returncode != 0
    for missing in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert missing in done.stderr + done.stdout


def test_the_switch_trusts_the_proxy_and_keeps_cookies_on_https():
    code = (
        "from django.conf import settings as s;"
        "print(s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE,"
        " s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "benchdash.settings", "BENCHDASH_HTTPS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.split() == [
        "('HTTP_X_FORWARDED_PROTO',", "'https')", "True", "True", "True", "31536000"
    ]  # fmt: skip
