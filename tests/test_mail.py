"""A password reset link is a login: it never lands in a log. In development (no SMTP
server configured) each mail is a file of its own, 0600, in a directory only benchdash's
user may open (0700); the logs scripts/start writes are not for other accounts either."""

from __future__ import annotations

import re
import stat
import subprocess
from pathlib import Path

import pytest
import requests

from tests.processes import AsgiServer

ROOT = Path(__file__).resolve().parent.parent


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.timeout(120)
def test_a_reset_link_is_in_a_private_mail_file_and_in_no_log(
    transactional_db, django_user_model, tmp_path: Path
):
    django_user_model.objects.create_user("ada", email="ada@example.com", password="ada-pass-1")
    mail_dir = tmp_path / "mail"
    log = tmp_path / "uvicorn.log"
    server = AsgiServer(log, env={"BENCHDASH_EMAIL_FILE_PATH": str(mail_dir),
                                  "BENCHDASH_EMAIL_BACKEND": ""})  # fmt: skip
    try:
        session = requests.Session()
        page = session.get(f"{server.url}/accounts/password_reset/", timeout=30)
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert csrf, page.text[:300]
        answer = session.post(
            f"{server.url}/accounts/password_reset/",
            data={"email": "ada@example.com", "csrfmiddlewaretoken": csrf[1]},
            timeout=30,
            allow_redirects=False,
        )
        assert answer.status_code == 302, answer.text[:300]  # the mail is sent by then
    finally:
        server.stop()

    assert "/accounts/reset/" not in log.read_text()
    (mail,) = mail_dir.iterdir()
    assert "/accounts/reset/" in mail.read_text()
    assert mode(mail_dir) == 0o700 and mode(mail) == 0o600


def test_the_logs_scripts_start_writes_are_not_world_readable(tmp_path: Path):
    log_dir = tmp_path / "log"
    log_dir.mkdir(mode=0o755)
    (log_dir / "web.log").write_text("written before, by an older start\n")
    (log_dir / "web.log").chmod(0o644)

    # What scripts/start does before it starts anything, then a process's log as it
    # opens one (launch: >>"$LOG_DIR/$name.log").
    subprocess.run(
        ["bash", "-c", 'umask 022; . scripts/private_logs "$1"; echo up >>"$1/worker.log"',
         "start", str(log_dir)],
        cwd=ROOT, check=True,
    )  # fmt: skip

    assert mode(log_dir) == 0o750
    assert mode(log_dir / "web.log") == 0o640
    assert mode(log_dir / "worker.log") == 0o640
