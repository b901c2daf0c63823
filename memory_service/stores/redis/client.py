"""The Redis connection the cache and the queue adapters share: opened from a URL, errors translated.

Every ``redis`` exception (and a URL the driver cannot parse) becomes
:class:`ServiceUnavailableError` whose suggestion names ``MEMORY_REDIS__URL``; the URL is quoted
without its password.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import redis

from memory_service.core.errors import ServiceUnavailableError


def safe_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (for messages, details and health)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def service_error(
    code: str, what: str, operation: str, url: str, exc: BaseException
) -> ServiceUnavailableError:
    """The error for a failed Redis call: what failed, where, and how to fix it."""
    where = safe_url(url)
    return ServiceUnavailableError(
        f"Redis {what} failed during {operation}: {exc}",
        code=code,
        details={"url": where, "operation": operation, "error": str(exc)},
        suggestion=f"Check that the Redis server at {where} is running and reachable, and that "
        "MEMORY_REDIS__URL names it (redis://[:password@]host:port/db); unset MEMORY_REDIS__URL "
        "to use the embedded SQLite cache and queue instead.",
    )


def connect(url: str, *, code: str, what: str, socket_timeout: float) -> redis.Redis:
    """A client with its own connection pool (thread-safe); nothing is sent until first use."""
    try:
        return redis.Redis.from_url(
            url,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
            health_check_interval=30,
        )
    except ValueError as exc:  # an address the driver cannot parse
        raise service_error(code, what, "connect", url, exc) from exc


@contextmanager
def translated(code: str, what: str, operation: str, url: str) -> Iterator[None]:
    """Run driver calls, turning any ``redis`` error into :class:`ServiceUnavailableError`."""
    try:
        yield
    except redis.RedisError as exc:
        raise service_error(code, what, operation, url, exc) from exc


def server_version(client: redis.Redis) -> str:
    """The server's version, from ``INFO server``."""
    info = client.info("server")
    return str(info.get("redis_version", "?"))
