"""Uploads refused as soon as they are too large, before they are read whole."""

from __future__ import annotations

from typing import Any

from django.core.files.uploadhandler import FileUploadHandler
from django.http.multipartparser import MultiPartParserError

from runs.services.imports.store import log_too_large, max_log_bytes

# What a multipart body holds beyond the log: the boundaries and the other fields.
FORM_MARGIN = 64 * 1024


class LogTooLarge(MultiPartParserError):
    pass


class LogSizeLimit(FileUploadHandler):
    """First of the upload handlers: refuses a request whose declared length is beyond
    the log size limit before reading it, and a file as soon as what arrived passes the
    limit (a chunked upload declares no length). The other handlers then never see it."""

    def handle_raw_input(
        self,
        input_data: Any,
        META: dict[str, Any],
        content_length: int,
        boundary: Any,
        encoding: str | None = None,
    ) -> None:
        if content_length > max_log_bytes() + FORM_MARGIN:
            raise LogTooLarge(log_too_large())

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        if start + len(raw_data) > max_log_bytes():
            raise LogTooLarge(log_too_large())
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
