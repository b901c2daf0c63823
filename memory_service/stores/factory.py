"""Pick and open the adapter for each port from settings; heavy clients are imported lazily.

Each settings section names one backend (``qdrant``: edge | server, ``graph``: embedded | neo4j,
``redis``: sqlite | redis; settings.py derives it from the address when unset). A small registry
per port maps that name to an opener, so adding a backend is one function and one entry. The
audit log, the index state and the utility votes stay in the data directory's SQLite file
whatever the backends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, cast

from memory_service.core.context_vectors import context_vectors
from memory_service.core.errors import ValidationError
from memory_service.core.ports import Cache, GraphStore, Queue, VectorStore
from memory_service.core.records import CONTEXT_COLLECTIONS, Stores
from memory_service.settings import Settings
from memory_service.stores.local.db import LocalDB

Opener = Callable[[Settings, LocalDB], Any]


def _edge_vectors(settings: Settings, _db: LocalDB) -> VectorStore:
    from memory_service.stores.qdrant.edge import EdgeVectorStore

    return EdgeVectorStore(settings.resolved_data_dir / "vectors")


def _server_vectors(settings: Settings, _db: LocalDB) -> VectorStore:
    from memory_service.stores.qdrant.server import QdrantServerVectorStore

    qdrant = settings.qdrant
    return QdrantServerVectorStore(
        url=qdrant.url,
        path=str(qdrant.path) if qdrant.path else None,
        api_key=qdrant.api_key.get_secret_value() if qdrant.api_key else None,
        prefix=qdrant.collection_prefix or "",
        timeout_s=qdrant.timeout_seconds,
    )


def _ladybug_graph(settings: Settings, _db: LocalDB) -> GraphStore:
    from memory_service.stores.graph.ladybug import LadybugGraphStore

    graph = settings.graph
    return LadybugGraphStore(
        settings.resolved_data_dir / "graph",
        buffer_pool_mb=graph.buffer_pool_mb,
        threads=graph.threads,
        query_timeout_ms=graph.query_timeout_ms,
    )


def _ladybug_or_unavailable(settings: Settings, db: LocalDB) -> GraphStore:
    """A graph file that cannot be opened (read-only, corrupt, WAL cut short) must not keep the
    memories from being served: a stand-in answers every graph call with why (resilience/unavailable.py)."""
    from memory_service.core.errors import ServiceUnavailableError
    from memory_service.stores.resilience.unavailable import UnavailableGraphStore

    try:
        return _ladybug_graph(settings, db)
    except ServiceUnavailableError as exc:
        path = str(settings.resolved_data_dir / "graph")
        logging.getLogger(__name__).error("graph store unavailable, starting without it: %s", exc.message)
        # The port methods are generated (stores/resilience/delegate.py), out of a type checker's sight.
        return cast(GraphStore, UnavailableGraphStore(exc, backend="ladybug", path=path))


def _neo4j_graph(settings: Settings, _db: LocalDB) -> GraphStore:
    from memory_service.stores.graph.neo4j import Neo4jGraphStore
    from memory_service.stores.resilience.graph_breaker import FailFastGraphStore

    graph = settings.graph
    assert graph.namespace is not None  # the settings model fills it from the project name
    # A call to a stopped server fails in ~3 s (driver retries for 2 s), later ones at once.
    # The port methods are generated (stores/resilience/delegate.py), out of a type checker's sight.
    breaker = FailFastGraphStore(
        Neo4jGraphStore(
            uri=graph.uri,
            user=graph.user,
            password=graph.password.get_secret_value() if graph.password else None,
            database=graph.database,
            namespace=graph.namespace,
            query_timeout_ms=graph.query_timeout_ms,
            max_retry_time=2.0,
        )
    )
    return cast(GraphStore, breaker)


def _sqlite_cache(_settings: Settings, db: LocalDB) -> Cache:
    from memory_service.stores.local.cache import LocalCache

    return LocalCache(db)


def _sqlite_queue(_settings: Settings, db: LocalDB) -> Queue:
    from memory_service.stores.local.queue import LocalQueue

    return LocalQueue(db)


def _redis_url(settings: Settings) -> str:
    assert settings.redis.url is not None  # the settings model guarantees it for this backend
    return settings.redis.url.get_secret_value()


def _redis_cache(settings: Settings, _db: LocalDB) -> Cache:
    from memory_service.stores.redis.cache import RedisCache
    from memory_service.stores.resilience.failover_cache import FailoverCache

    # Redis down: caching off (misses, skipped writes), never a failed call.
    redis = RedisCache(url=_redis_url(settings), prefix=settings.redis.key_prefix or "")
    return cast(Cache, FailoverCache(redis))


def _redis_queue(settings: Settings, db: LocalDB) -> Queue:
    from memory_service.stores.local.queue import LocalQueue
    from memory_service.stores.redis.queue import RedisQueue
    from memory_service.stores.resilience.failover_queue import FailoverQueue

    # Redis down: the outbox goes to the local durable queue, in order, and back once drained.
    redis = RedisQueue(url=_redis_url(settings), prefix=settings.redis.key_prefix or "")
    return cast(Queue, FailoverQueue(redis, LocalQueue(db)))


VECTORS: dict[str, Opener] = {"edge": _edge_vectors, "server": _server_vectors}
GRAPHS: dict[str, Opener] = {"embedded": _ladybug_or_unavailable, "neo4j": _neo4j_graph}
CACHES: dict[str, Opener] = {"sqlite": _sqlite_cache, "redis": _redis_cache}
QUEUES: dict[str, Opener] = {"sqlite": _sqlite_queue, "redis": _redis_queue}


def _opener(registry: dict[str, Opener], backend: str | None, setting: str) -> Opener:
    opener = registry.get(backend or "")
    if opener is None:
        raise ValidationError(
            f"Unknown backend '{backend}' for {setting}",
            code="VAL_BACKEND_UNSUPPORTED",
            details={"field": setting, "provided": backend, "allowed": sorted(registry)},
            suggestion=f"Set {setting} to one of: {', '.join(sorted(registry))} (or leave it unset).",
        )
    return opener


def build_stores(settings: Settings) -> Stores:
    """Open every store: embedded ones under the data directory, servers where configured."""
    from memory_service.embeddings.bm25 import Bm25Encoder
    from memory_service.embeddings.fastembed_embedder import FastEmbedder
    from memory_service.stores.local.audit import LocalAuditLog
    from memory_service.stores.local.flags import LocalFlags
    from memory_service.stores.local.index import LocalIndexState
    from memory_service.stores.local.journal import LocalWriteJournal
    from memory_service.stores.local.votes import LocalVoteStore

    openers = (
        _opener(CACHES, settings.redis.backend, "MEMORY_REDIS__BACKEND"),
        _opener(QUEUES, settings.redis.backend, "MEMORY_REDIS__BACKEND"),
        _opener(VECTORS, settings.qdrant.backend, "MEMORY_QDRANT__BACKEND"),
        _opener(GRAPHS, settings.graph.backend, "MEMORY_GRAPH__BACKEND"),
    )
    opened: list[Any] = []
    try:
        db = LocalDB.in_dir(settings.resolved_data_dir)
        audit = LocalAuditLog(db)
        opened.append(audit)
        index_state = LocalIndexState(db)
        opened.append(index_state)
        votes = LocalVoteStore(db)
        opened.append(votes)
        for opener in openers:
            opened.append(opener(settings, db))
    except BaseException:
        for store in reversed(opened):
            store.close()
        raise
    cache, queue, vectors, graph = opened[3:]
    journal = LocalWriteJournal(db, queue, audit)  # always local: intents are on disk before any write
    flags = LocalFlags(db)  # in the same file, so its markers stand or fall with the journal
    return Stores(
        vectors=context_vectors(vectors, CONTEXT_COLLECTIONS),
        graph=graph,
        cache=cache,
        queue=queue,
        audit=audit,
        embedder=FastEmbedder(settings.embedding, cache),
        sparse=Bm25Encoder(),
        index_state=index_state,
        votes=votes,
        journal=journal,
        flags=flags,
    )
