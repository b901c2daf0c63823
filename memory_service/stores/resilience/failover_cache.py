"""A Cache in front of Redis that turns Redis being down into "caching off", never a failed call.

Everything cached (embeddings by content hash, search results, job state) can be recomputed, so
while Redis does not answer a read is a miss and a write is skipped, with one warning per outage
and ``degraded`` in health. Two calls change what other readers see and are remembered instead of
dropped: ``incr`` (the search cache's write generation: a write made during the outage must still
invalidate results cached before it) and ``delete_namespace``; both are replayed on the first
call that reaches Redis again. While down, Redis is tried again at most once per
``probe_interval``, so the outage costs no connection attempt per call.

Every Cache call but ``health`` and ``close`` takes the same path (:meth:`FailoverCache.around`,
stores/resilience/delegate.py); what each answers while Redis is down is stated in one place
(:meth:`FailoverCache._while_down`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Cache, ComponentHealth
from memory_service.stores.resilience.delegate import PortCall, PortDelegate

logger = logging.getLogger(__name__)


class FailoverCache(PortDelegate, port=Cache):
    """Wraps a Redis cache; see the module docstring.

    Args:
        inner: the Redis cache.
        probe_interval: seconds between attempts to reach Redis while it is down.
    """

    def __init__(self, inner: Cache, *, probe_interval: float = 1.0) -> None:
        self.inner = inner
        self._interval = probe_interval
        self._lock = threading.Lock()
        self._down: str | None = None  # why, while Redis is unreachable
        self._tried_at = 0.0
        self._missed_incr: Counter[tuple[str, str]] = Counter()
        self._missed_deletes: set[str] = set()
        self._misses_while_down = 0

    @property
    def is_down(self) -> bool:
        return self._down is not None

    def around(self, name: str, call: PortCall) -> Any:
        """Every Cache method but ``health`` and ``close``: Redis's answer, or the one
        :meth:`_while_down` gives while Redis is down."""
        with self._lock:
            if self._down is not None and time.monotonic() - self._tried_at < self._interval:
                return self._while_down(call)
        try:
            result = call()
        except ServiceUnavailableError as exc:
            with self._lock:
                if self._down is None:
                    logger.warning("Redis cache unreachable, caching off until it answers: %s", exc.message)
                self._down, self._tried_at = exc.message, time.monotonic()
                return self._while_down(call)
        if self._down is not None:
            self._recovered()
        return result

    def _while_down(self, call: PortCall) -> Any:
        """What a Cache call answers while Redis is down (a read misses, a write is skipped), and
        what it leaves to replay; called holding the lock."""
        match call.name:
            case "get":
                self._misses_while_down += 1
                return None
            case "get_many":
                self._misses_while_down += len(set(call.arguments["keys"]))
                return {}
            case "set" | "set_many":
                return None
            case "delete_namespace":
                self._missed_deletes.add(call.arguments["namespace"])
                return 0
            case "incr":  # the new value: 0 while Redis is down (replayed when it is back)
                args = call.arguments
                self._missed_incr[(args["namespace"], args["key"])] += 1
                return 0
            case "stats":
                misses = float(self._misses_while_down)
                return {"hits": 0.0, "misses": misses, "hit_rate": 0.0, "entries": 0.0}
            case "size_bytes":
                return 0
        raise NotImplementedError(f"Cache.{call.name} has no answer while Redis is down")

    def _recovered(self) -> None:
        """Replay what the outage held back, then count Redis as up (a failure keeps it down)."""
        with self._lock:
            incrs, self._missed_incr = self._missed_incr, Counter()
            deletes, self._missed_deletes = self._missed_deletes, set()
        try:
            for namespace in deletes:
                self.inner.delete_namespace(namespace)
            for (namespace, key), times in incrs.items():
                for _ in range(times):
                    self.inner.incr(namespace, key)
        except ServiceUnavailableError as exc:
            with self._lock:
                self._missed_incr.update(incrs)
                self._missed_deletes |= deletes
                self._down, self._tried_at = exc.message, time.monotonic()
            return
        with self._lock:
            self._down = None
        logger.warning("Redis cache answers again: caching on")

    # ------------------------------------------------------------------ stated: not routed
    def health(self) -> ComponentHealth:
        """The server's health; unreachable is ``degraded`` here, since every call still works."""
        health = self.inner.health()
        if health.state == "ok":
            if self._down is not None:
                self._recovered()
            return health
        detail = f"caching off while Redis is unreachable ({health.detail})"
        return ComponentHealth(health.name, "degraded", health.backend, detail, extra=dict(health.extra))

    def close(self) -> None:
        """Closes the client, whether Redis answers or not."""
        self.inner.close()
