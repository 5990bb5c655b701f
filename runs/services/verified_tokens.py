"""API tokens and sessions verified lately, remembered in Redis for the health answer
alone.

Every endpoint needs login or an API token, and a token is checked against the results
database. When that database is down, `GET /api/v1/health` still has to say what is up
(the workers, beat and the sweeper beat in Redis): so a token that the database verified
within BENCHDASH_HEALTH_TOKEN_MEMORY_S is taken again, for the health answer only and
only while the database cannot be reached (runs/api/auth.py). So is the session of
someone who opened the health page within that time: the page then comes without its
template (runs/http/health_down.py). Nothing else is answered on their word: no batch,
plan or result is readable without the database anyway.

What Redis holds cannot be used as a token: under a key made from the token's public
prefix (knox's token_key, which the tokens page shows), an HMAC of the whole token with
the SECRET_KEY, the user's name and until when it holds (never past the token's own
expiry); a session is kept under an HMAC of its key alone. Revoking a token forgets it
at once; a token used again while the database is up is remembered again at most once a
minute per process (one Redis write).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import time
from datetime import datetime

import orjson
import redis
from django.conf import settings

from runs.execution.stream import live

REFRESH_S = 60.0
TOKEN, SESSION = "token", "session"
# (kind, public part) -> when this process last wrote it (monotonic): one write a minute.
_written: dict[tuple[str, str], float] = {}


def remember(*, token: str, token_key: str, username: str, expiry: datetime | None) -> None:
    """The database has just verified `token` (its clear text, as the client sent it)."""
    _remember(TOKEN, token_key, token, username, expiry)


def recalled(*, token: str, token_key: str) -> str | None:
    """The user whose token this is, when the database verified it lately; else None."""
    return _recalled(TOKEN, token_key, token)


def forget(*, token_key: str) -> None:
    """A revoked token: no longer taken, even while the database is down."""
    _written.pop((TOKEN, token_key), None)
    with contextlib.suppress(redis.RedisError):
        live.redis_client().delete(_key(TOKEN, token_key))


def remember_session(*, session_key: str, username: str, expiry: datetime | None) -> None:
    """The session `session_key` of `username`, just read from the database."""
    _remember(SESSION, session_key, session_key, username, expiry)


def recalled_session(*, session_key: str) -> str | None:
    return _recalled(SESSION, session_key, session_key)


def _mac(text: str, label: str) -> str:
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"{label}:{text}".encode(), hashlib.sha256).hexdigest()


def _key(kind: str, public: str) -> str:
    return f"benchdash:{live.installation()}:verified-{kind}:{_mac(public, 'key')[:32]}"


def _remember(kind: str, public: str, secret: str, username: str, expiry: datetime | None) -> None:
    memory_s = settings.BENCHDASH_HEALTH_TOKEN_MEMORY_S
    now = time.monotonic()
    if memory_s <= 0 or now - _written.get((kind, public), -REFRESH_S) < REFRESH_S:
        return
    _written[(kind, public)] = now  # also on failure: a Redis away is not asked each time
    until = time.time() + memory_s
    if expiry is not None:
        until = min(until, expiry.timestamp())
    left_s = int(until - time.time())
    if left_s <= 0:
        return
    value = orjson.dumps({"check": _mac(secret, kind), "user": username, "until": until})
    with contextlib.suppress(redis.RedisError):
        live.redis_client().set(_key(kind, public), value, ex=left_s)


def _recalled(kind: str, public: str, secret: str) -> str | None:
    try:
        value = live.redis_client().get(_key(kind, public))
    except redis.RedisError:
        return None
    if value is None:
        return None
    said = orjson.loads(value)
    if not hmac.compare_digest(said["check"], _mac(secret, kind)):
        return None
    if float(said["until"]) < time.time():
        return None
    return str(said["user"])
