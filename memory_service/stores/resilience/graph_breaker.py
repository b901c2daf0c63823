"""A GraphStore in front of a server graph that fails fast while the server is unreachable.

Without it every call made while Neo4j is down waits out the driver's connection retries (15 s
by default, per call): a search (graph signals), a memory_add (code links) or a graph tool would
hang that long each time. Here a failed call is followed by one cheap health probe (a PING that
is not retried); when the probe fails too, the store counts as down and later calls fail at once
with the same error, except one probe per ``probe_interval`` that lets the next call through as
soon as the server answers again. A call that fails while the server still answers (a query the
server refused) leaves the breaker closed: it is that call's fault, not the store's. An error
raised without calling the server carries ``details["fail_fast"]``, so callers that tell an
outage from a bad message (graph sync, the graph tools) need not probe again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, GraphStore
from memory_service.stores.resilience.delegate import PortDelegate

logger = logging.getLogger(__name__)
T = TypeVar("T")


class FailFastGraphStore(PortDelegate, port=GraphStore):
    """Delegates every GraphStore call to ``inner``; see the module docstring for when it does not.

    Args:
        inner: the graph store (Neo4j).
        probe_interval: seconds between health probes while the store is down.
    """

    def __init__(self, inner: GraphStore, *, probe_interval: float = 1.0) -> None:
        self.inner: GraphStore = inner
        self._interval = probe_interval
        self._lock = threading.Lock()
        self._down: ServiceUnavailableError | None = None  # the error that opened the breaker
        self._probed_at = 0.0

    @property
    def is_down(self) -> bool:
        return self._down is not None

    def _probe(self) -> bool:
        """Ask the server (one PING) whether it answers; closes or keeps open the breaker."""
        health = self.inner.health()
        with self._lock:
            self._probed_at = time.monotonic()
            if health.state == "ok":
                if self._down is not None:
                    logger.warning("graph store answers again: graph queries enabled")
                self._down = None
                return True
        return False

    def around(self, name: str, call: Callable[[], T]) -> T:
        """Every GraphStore method but ``health`` and ``close`` (stores/resilience/delegate.py)."""
        with self._lock:
            down, waited = self._down, time.monotonic() - self._probed_at
        if down is not None and (waited < self._interval or not self._probe()):
            raise ServiceUnavailableError(
                down.message, code=down.code, details={**down.details, "fail_fast": True},
                suggestion=down.suggestion,
            )  # fmt: skip
        try:
            return call()
        except ServiceUnavailableError as exc:
            if not self._probe():
                with self._lock:
                    if self._down is None:
                        logger.warning(
                            "graph store unreachable, failing fast until it answers: %s", exc.message
                        )
                    self._down = exc
            raise

    def health(self) -> ComponentHealth:
        """Always asks the server (and so closes the breaker as soon as it answers)."""
        health = self.inner.health()
        if health.state == "ok" and self._down is not None:
            self._probe()
        return health

    def close(self) -> None:
        self.inner.close()
