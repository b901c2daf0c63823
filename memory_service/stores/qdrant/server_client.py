"""One guarded ``QdrantClient`` for :mod:`.server`: opening it, serialising local mode,
refusing calls once closed, and turning whatever the client raises into ``SVC_VECTOR_STORE``.

What the client raises: :class:`ApiException` (``UnexpectedResponse`` for an HTTP error status,
``ResponseHandlingException`` wrapping httpx's connection errors and timeouts),
``QdrantException`` (rate limits), and in local mode plain ``ValueError`` (unknown collection),
``KeyError`` (unknown point), ``RuntimeError`` (closed) and SQLite/OS errors.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from typing import Any

import httpx
from qdrant_client import QdrantClient
from qdrant_client.common.client_exceptions import QdrantException
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError

CLIENT_ERRORS = (ApiException, QdrantException, httpx.HTTPError, ValueError, KeyError, RuntimeError,
                 OSError, sqlite3.Error)  # fmt: skip
_CODE = "SVC_VECTOR_STORE"


class GuardedClient:
    """The client of one store; ``call()`` hands it out for one operation."""

    def __init__(self, url: str | None, api_key: str | None, path: str | None, timeout_s: float) -> None:
        """A server client for ``url``, else local mode on ``path`` (a directory or ``":memory:"``).

        Local mode shares one SQLite connection across threads, so its calls are serialised; a
        server client (httpx) is used from many threads at once.
        """
        self.local = url is None
        self.where = f"Qdrant server at {url}" if url else f"qdrant-client local mode at {path}"
        if url is not None:  # the version check would warn from a thread when the server is down
            timeout = max(1, math.ceil(timeout_s))  # the client counts whole seconds
            self._client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
        else:
            where = {"location": path} if path == ":memory:" else {"path": path}
            self._client = QdrantClient(**where, force_disable_check_same_thread=True)
        self._serial: AbstractContextManager[Any] = threading.RLock() if self.local else nullcontext()
        self._lock = threading.Lock()
        self.closed = False

    def error(self, message: str, **details: Any) -> ServiceUnavailableError:
        fix = (
            "Check that the local Qdrant path exists, is writable and is not open in another process."
            if self.local
            else "Check that the Qdrant server at MEMORY_QDRANT__URL is running and reachable, and "
            "that MEMORY_QDRANT__API_KEY is its key; then retry."
        )
        return ServiceUnavailableError(
            message, code=_CODE, details={**details, "backend": "qdrant"}, suggestion=fix
        )

    @contextmanager
    def call(self, op: str, collection: str) -> Iterator[QdrantClient]:
        """The client for one operation; its errors come out as ServiceUnavailableError."""
        with self._lock:
            if self.closed:
                raise self.error("Vector store is closed", operation=op)
        try:
            with self._serial:
                yield self._client
        except MemoryServiceError:
            raise
        except CLIENT_ERRORS as exc:
            raise self.error(
                f"Vector store failed during {op} on collection '{collection}' ({self.where}): {exc}",
                operation=op,
                collection=collection,
                status=exc.status_code if isinstance(exc, UnexpectedResponse) else None,
            ) from exc

    def close(self) -> None:
        """Close once (local mode: release its directory); later calls raise."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        with self._serial, suppress(*CLIENT_ERRORS):  # a server gone: the handle is dropped anyway
            self._client.close()
