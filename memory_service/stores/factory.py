"""Pick and open the adapter for each port from settings; heavy clients are imported lazily."""

from __future__ import annotations

from memory_service.core.errors import ValidationError
from memory_service.core.records import Stores
from memory_service.settings import Settings


def build_stores(settings: Settings) -> Stores:
    """Open every store under the data directory (embedded) or against the configured servers."""
    data_dir = settings.resolved_data_dir
    servers = settings.qdrant.url or settings.graph.uri or settings.redis.url
    if settings.qdrant.backend != "edge" or settings.graph.backend != "embedded" or servers:
        raise ValidationError(
            "Server backends (Qdrant server, Neo4j, Redis) are not available in this version",
            code="VAL_BACKEND_UNSUPPORTED",
            details={
                "qdrant.backend": settings.qdrant.backend,
                "qdrant.url": bool(settings.qdrant.url),
                "graph.backend": settings.graph.backend,
                "graph.uri": bool(settings.graph.uri),
                "redis.url": bool(settings.redis.url),
            },
            suggestion="Unset MEMORY_QDRANT__BACKEND/URL, MEMORY_GRAPH__BACKEND/URI and MEMORY_REDIS__URL "
            "to use the embedded stores (server adapters are on the roadmap).",
        )
    from memory_service.embeddings.bm25 import Bm25Encoder
    from memory_service.embeddings.fastembed_embedder import FastEmbedder
    from memory_service.stores.graph_ladybug import LadybugGraphStore
    from memory_service.stores.local import LocalAuditLog, LocalCache, LocalQueue
    from memory_service.stores.local_db import LocalDB
    from memory_service.stores.local_index import LocalIndexState
    from memory_service.stores.qdrant_edge import EdgeVectorStore

    opened: list[object] = []
    try:
        db = LocalDB.in_dir(data_dir)
        cache = LocalCache(db)
        opened.append(cache)
        queue = LocalQueue(db)
        opened.append(queue)
        audit = LocalAuditLog(db)
        opened.append(audit)
        index_state = LocalIndexState(db)
        opened.append(index_state)
        vectors = EdgeVectorStore(data_dir / "vectors")
        opened.append(vectors)
        graph = LadybugGraphStore(
            data_dir / "graph", buffer_pool_mb=settings.graph.buffer_pool_mb, threads=settings.graph.threads
        )
        opened.append(graph)
    except BaseException:
        for store in reversed(opened):
            store.close()  # type: ignore[attr-defined]
        raise
    return Stores(
        vectors=vectors,
        graph=graph,
        cache=cache,
        queue=queue,
        audit=audit,
        embedder=FastEmbedder(settings.embedding, cache),
        sparse=Bm25Encoder(),
        index_state=index_state,
    )
