"""A Cache in front of Redis that turns Redis being down into "caching off", never a failed call.

Everything cached (embeddings by content hash, search results, job state) can be recomputed, so
while Redis does not answer a read is a miss and a write is skipped, with one warning per outage
and ``degraded`` in health. Two calls change what other readers see and are remembered instead of
dropped: ``incr`` (the search cache's write generation: a write made during the outage must still
invalidate results cached before it) and ``delete_namespace``; both are replayed on the first
call that reaches Redis again. While down, Redis is tried again at most once per
``probe_interval``, so the outage costs no connection attempt per call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Cache, ComponentHealth

logger = logging.getLogger(__name__)
T = TypeVar("T")


class FailoverCache:
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

    def _try(self, fn: Callable[[], T], fallback: T) -> tuple[T, bool]:
        """``fn()``, or ``fallback`` while Redis is down; the flag says whether Redis answered."""
        with self._lock:
            if self._down is not None and time.monotonic() - self._tried_at < self._interval:
                return fallback, False
        try:
            result = fn()
        except ServiceUnavailableError as exc:
            with self._lock:
                if self._down is None:
                    logger.warning("Redis cache unreachable, caching off until it answers: %s", exc.message)
                self._down, self._tried_at = exc.message, time.monotonic()
            return fallback, False
        if self._down is not None:
            self._recovered()
        return result, True

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

    # ------------------------------------------------------------------ the Cache port
    def get(self, namespace: str, key: str) -> bytes | None:
        return self.get_many(namespace, [key]).get(key)

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        none: dict[str, bytes] = {}
        found, answered = self._try(lambda: self.inner.get_many(namespace, keys), none)
        if not answered:
            with self._lock:
                self._misses_while_down += len(set(keys))
        return found

    def set(self, namespace: str, key: str, value: bytes, ttl_seconds: float | None = None) -> None:
        self.set_many(namespace, {key: value}, ttl_seconds)

    def set_many(self, namespace: str, items: dict[str, bytes], ttl_seconds: float | None = None) -> None:
        self._try(lambda: self.inner.set_many(namespace, items, ttl_seconds), None)

    def delete_namespace(self, namespace: str) -> int:
        deleted, answered = self._try(lambda: self.inner.delete_namespace(namespace), 0)
        if not answered:
            with self._lock:
                self._missed_deletes.add(namespace)
        return deleted

    def incr(self, namespace: str, key: str) -> int:
        """The new value; 0 while Redis is down (the increment is replayed when it is back)."""
        value, answered = self._try(lambda: self.inner.incr(namespace, key), 0)
        if not answered:
            with self._lock:
                self._missed_incr[(namespace, key)] += 1
        return value

    def stats(self) -> dict[str, float]:
        empty: dict[str, float] = {}
        stats, answered = self._try(self.inner.stats, empty)
        if answered:
            return stats
        with self._lock:
            misses = float(self._misses_while_down)
        return {"hits": 0.0, "misses": misses, "hit_rate": 0.0, "entries": 0.0}

    def size_bytes(self) -> int:
        return self._try(self.inner.size_bytes, 0)[0]

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
        self.inner.close()
