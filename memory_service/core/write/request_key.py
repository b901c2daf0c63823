"""Request keys: a re-sent tool call makes the same ids and skips the writes it already made.

The stdio forwarder stamps each ``tools/call`` with a key in ``params._meta`` (the same key on
every re-send of that request, e.g. after the daemon died mid-call). The tool registry binds it
for the handler (:func:`bound`); inside, :func:`new_id` derives record ids from the key and a
per-request counter, and :func:`next_write_key` names the request's n-th durable write, so a
re-send that takes the same path makes the same ids and the same write keys. The writer records
each write key with its journal commit and skips a write whose key is already recorded
(:mod:`.services.writer`). Unbound (background jobs, the CLI, a call without a key): random ids
and no write keys, as before.

The state is one mutable object per request in a ContextVar: anyio's ``to_thread.run_sync``
copies the context into the worker thread that runs the handler, and the copy shares the object,
so counters advance across nested service calls.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

REQUEST_KEY_META = "memory-service/request-key"
MAX_KEY_CHARS = 200
_NAMESPACE = uuid.UUID("5b1f0c3e-8f53-4d38-9d0e-4f6c2a7e9b11")  # fixed: ids must not change between releases


@dataclass
class _Request:
    key: str
    ids: int = 0  # ids made so far
    writes: int = 0  # durable writes named so far


_current: ContextVar[_Request | None] = ContextVar("memory_service_request", default=None)


def from_meta(meta: Mapping[str, Any] | None) -> str | None:
    """The request key of a request's ``_meta``: a non-empty string of at most 200 characters,
    else None (a malformed key is ignored, the call runs unkeyed)."""
    key = meta.get(REQUEST_KEY_META) if meta else None
    return key if isinstance(key, str) and 0 < len(key) <= MAX_KEY_CHARS else None


@contextmanager
def bound(key: str | None) -> Iterator[None]:
    """Run the block as the request ``key`` (None or "": unkeyed), with fresh counters."""
    token = _current.set(_Request(key) if key else None)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> str | None:
    """The bound request key, if any."""
    request = _current.get()
    return request.key if request is not None else None


def new_id() -> str:
    """A record id: derived from the key and the request's id counter when bound, else random."""
    request = _current.get()
    if request is None:
        return str(uuid.uuid4())
    request.ids += 1
    return str(uuid.uuid5(_NAMESPACE, f"{request.key}/id/{request.ids}"))


def next_write_key() -> str | None:
    """The key of the request's next durable write (``<key>#<n>``, n from 1), used up; None unbound."""
    request = _current.get()
    if request is None:
        return None
    request.writes += 1
    return f"{request.key}#{request.writes}"


def peek_write_key(ahead: int = 0) -> str | None:
    """The key :func:`next_write_key` would return (``ahead`` writes later), without using it."""
    request = _current.get()
    return f"{request.key}#{request.writes + 1 + ahead}" if request is not None else None
