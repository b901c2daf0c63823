"""Who made a mutation: the configured actor, else the MCP client's name, else ``agent``.

``MEMORY_ACTOR`` (settings) names the actor for every call. Left at its default, each audited
mutation names the client that asked for it: the tool registry binds the ``clientInfo.name`` the
session gave at ``initialize`` (e.g. ``claude-code``) for the call, and :func:`effective` puts it
in place of the default when an audit event is made. Background work (index jobs, cleanup, a
crash replay) has no client and keeps the configured name.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

DEFAULT_ACTOR = "agent"
MAX_ACTOR_CHARS = 100

_client: ContextVar[str | None] = ContextVar("memory_service_client", default=None)


@contextmanager
def client(name: str | None) -> Iterator[None]:
    """Run the block on behalf of the client ``name`` (None: no client known)."""
    cleaned = " ".join(str(name).split())[:MAX_ACTOR_CHARS] if name else None
    token = _client.set(cleaned or None)
    try:
        yield
    finally:
        _client.reset(token)


def effective(configured: str) -> str:
    """The actor an audit event records: ``configured`` unless it is the default and a client is bound."""
    if configured != DEFAULT_ACTOR:
        return configured
    return _client.get() or configured
