"""Where mail goes when no SMTP server is configured (development): each mail a file of
its own, 0600, in a directory only benchdash's user may open (0700). Never the console: a
password reset link is a login, and the console is the web server's log."""

from __future__ import annotations

import os
from typing import Any

from django.core.mail.backends import filebased


class PrivateFileBackend(filebased.EmailBackend):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # makes the directory, with the process's umask
        os.chmod(self.file_path, 0o700)

    def open(self) -> bool:
        if self.stream is not None:
            return False
        name = self._get_filename()
        self.stream = os.fdopen(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        return True
