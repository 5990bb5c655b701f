"""The command's tests run it as a process against the live test server, with a token."""

from tests.api.conftest import owner, owner_token  # noqa: F401 (fixtures)
