"""Uploading a log to the import page through the real web server (uvicorn), as a browser
or a script does: a log beyond the limit is refused with words that say so, and an
upload sent in chunks (no Content-Length) is read like any other."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runs.models import Batch
from tests.api.conftest import Api
from tests.processes import AsgiServer

pytestmark = pytest.mark.timeout(120)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sysbench"


@pytest.fixture
def browser(transactional_db, django_user_model, tmp_path: Path) -> Iterator[Api]:
    django_user_model.objects.create_user("ada", password="ada-pass-1")
    server = AsgiServer(tmp_path / "uvicorn.log", env={"BENCHDASH_MAX_LOG_MB": "1"})
    client = Api(server.url)
    client.login("ada", "ada-pass-1")
    yield client
    server.stop()


def multipart(fields: dict[str, str], name: str, content: bytes) -> tuple[str, bytes]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="upload"; filename="{name}"\r\n'
        f"Content-Type: text/plain\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", b"".join(parts)


def test_a_log_beyond_the_limit_is_refused_in_words(browser):
    csrf = browser.session.cookies["csrftoken"]
    answer = browser.post(
        "/import",
        data={"csrfmiddlewaretoken": csrf, "action": "preview"},
        files={"upload": ("big.log", b"x" * 3 * 2**20)},
    )

    assert answer.status_code == 413, answer.text[:300]
    assert "the log is larger than 1 MB" in answer.text
    assert not Batch.objects.exists()


@pytest.mark.parametrize("size_mb", [0, 3])
def test_a_chunked_upload_is_read_like_any_other(browser, size_mb):
    csrf = browser.session.cookies["csrftoken"]
    log = (FIXTURES / "cpu.txt").read_bytes() + b"x" * size_mb * 2**20
    content_type, body = multipart(
        {"csrfmiddlewaretoken": csrf, "action": "preview"}, "cpu.txt", log
    )

    def chunks() -> Iterator[bytes]:  # requests sends a generator chunked
        for start in range(0, len(body), 64 * 1024):
            yield body[start : start + 64 * 1024]

    answer = browser.post("/import", data=chunks(), headers={"Content-Type": content_type})

    assert "Transfer-Encoding" in answer.request.headers
    if size_mb:
        assert answer.status_code == 413, answer.text[:300]
        assert "the log is larger than 1 MB" in answer.text
    else:
        assert answer.status_code == 200, answer.text[:300]
        assert "What the log holds" in answer.text and "No file was submitted" not in answer.text
