"""Timing wrappers around the stores and the embedder: every port method observed, nothing else.

Why wrappers rather than timing inside each adapter: one place covers every backend (embedded and
server), and turning metrics off (``MEMORY_SERVER__METRICS_ENABLED=false``) leaves the adapters
untouched. Each wrapper binds its timed methods once, each keeping its labelled histogram child,
so a call costs two ``perf_counter`` reads and one ``observe`` (about a microsecond); attributes
that are not port methods (``start``, ``model_name``...) pass through to the adapter.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from memory_service.core.ports import Cache, GraphStore, Queue, VectorStore
from memory_service.core.records import Stores
from memory_service.observability.metrics import Metrics

# The store label of each wrapped port, and the port whose methods are timed.
PORTS: dict[str, type] = {"vectors": VectorStore, "graph": GraphStore, "cache": Cache, "queue": Queue}
# Also timed where the store has them: the memories' context vectors (core/context_vectors.py) and
# an embedded engine's maintenance (core/ports/maintenance.py).
MORE: dict[str, tuple[str, ...]] = {"vectors": ("has_context", "context_ids", "optimize", "upkeep")}
UNTIMED = frozenset({"close"})


def port_methods(port: type) -> list[str]:
    """The public methods a port declares (the operations a store label can carry)."""
    return sorted(
        n for n, v in vars(port).items() if callable(v) and not n.startswith("_") and n not in UNTIMED
    )


def _timed_methods(store: str, port: type, inner: Any) -> list[str]:
    """The port's methods, and those of ``MORE`` the adapter has."""
    return port_methods(port) + [m for m in MORE.get(store, ()) if hasattr(inner, m)]


def _timed(fn: Callable[..., Any], metrics: Metrics, store: str, operation: str) -> Any:
    """``fn`` timed; its labelled series are created at its first call, so only the operations in
    use are exported (a scrape of every port method's empty histogram costs time for nothing)."""
    observe: list[Callable[[float], None]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except Exception:
            metrics.store_errors.labels(store, operation).inc()
            raise
        finally:
            if not observe:
                observe.append(metrics.store_duration.labels(store, operation).observe)
                # Errors start at 0 with the operation's first call, so rate() sees the series
                # before its first error (Prometheus: initialise the label sets you know).
                metrics.store_errors.labels(store, operation)
            observe[0](time.perf_counter() - started)

    return call


class TimedStore:
    """A store adapter whose port methods are timed under ``store`` / ``operation``."""

    def __init__(self, inner: Any, store: str, methods: Sequence[str], metrics: Metrics) -> None:
        self._inner = inner
        for name in methods:
            setattr(self, name, _timed(getattr(inner, name), metrics, store, name))

    def __getattr__(self, name: str) -> Any:  # only reached for what __init__ did not bind
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return f"Timed({self._inner!r})"


class TimedCache(TimedStore):
    """The cache, also counting lookups by result (one per key, as the adapters' stats do)."""

    def __init__(self, inner: Any, metrics: Metrics) -> None:
        super().__init__(inner, "cache", port_methods(Cache), metrics)
        timed_get, timed_get_many = self.__dict__["get"], self.__dict__["get_many"]
        hits, misses = metrics.cache_hits.inc, metrics.cache_misses.inc

        def get(namespace: str, key: str) -> bytes | None:
            value: bytes | None = timed_get(namespace, key)
            (misses if value is None else hits)()
            return value

        def get_many(namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
            found: dict[str, bytes] = timed_get_many(namespace, keys)
            if found:
                hits(len(found))
            if len(keys) > len(found):
                misses(len(keys) - len(found))
            return found

        self.__dict__.update(get=get, get_many=get_many)


class TimedEmbedder:
    """The embedder: latency and texts per call, by kind (documents, query); failures not timed."""

    def __init__(self, inner: Any, metrics: Metrics) -> None:
        self._inner = inner
        self._docs = (metrics.embed_duration.labels("documents"), metrics.embed_batch.labels("documents"))
        self._query = (metrics.embed_duration.labels("query"), metrics.embed_batch.labels("query"))

    def embed_documents(self, texts: Sequence[str], *, remember: bool = True) -> list[list[float]]:
        started = time.perf_counter()
        vectors: list[list[float]] = self._inner.embed_documents(texts, remember=remember)
        self._docs[0].observe(time.perf_counter() - started)
        self._docs[1].observe(len(texts))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        started = time.perf_counter()
        vector: list[float] = self._inner.embed_query(text)
        self._query[0].observe(time.perf_counter() - started)
        self._query[1].observe(1)
        return vector

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def instrument(stores: Stores, metrics: Metrics) -> Stores:
    """The same stores, each port wrapped; audit, index state, votes and BM25 stay as they are."""
    # Each stands in for its store (attributes it does not time pass through): typed as Any for that.
    wrapped: dict[str, Any] = {
        name: TimedStore(
            getattr(stores, name), name, _timed_methods(name, port, getattr(stores, name)), metrics
        )
        for name, port in PORTS.items()
        if name != "cache"
    }
    cache = TimedCache(stores.cache, metrics)
    use_cache = getattr(stores.embedder, "use_cache", None)
    if use_cache is not None:  # the embedding cache is most of the lookups: count them too
        use_cache(cache)
    return dataclasses.replace(
        stores, cache=cache, embedder=TimedEmbedder(stores.embedder, metrics), **wrapped
    )
