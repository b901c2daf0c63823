"""Wiring: open the stores one process owns, build the services, run housekeeping.

The server and the CLI both start here, so there is one place that owns the engine handles
(ROADMAP 6: a forwarder can later sit in front of it).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from memory_service.core import code_records
from memory_service.core.errors import MemoryServiceError
from memory_service.core.jobs import JobManager
from memory_service.core.models import MemoryStatus, MemoryType, Scope
from memory_service.core.ports import ComponentHealth, PayloadFilter
from memory_service.core.records import MEMORIES, Stores, memories_collection
from memory_service.core.services.code_search import CodeSearch
from memory_service.core.services.consistency import ConsistencyService
from memory_service.core.services.design_context import DesignContextService
from memory_service.core.services.embedding_refresh import EmbeddingRefresher
from memory_service.core.services.explain import ExplainService
from memory_service.core.services.feedback import FeedbackService
from memory_service.core.services.fix_validation import FixValidationService
from memory_service.core.services.graph_sync import GraphSync
from memory_service.core.services.graph_tools import GraphToolsService
from memory_service.core.services.index import CodeIndexer
from memory_service.core.services.index_service import IndexService
from memory_service.core.services.memory import MemoryService
from memory_service.core.services.paths import PathPolicy
from memory_service.core.services.ranker import Ranker
from memory_service.core.services.search import SearchService
from memory_service.core.services.stale import StaleMarker
from memory_service.core.services.supersede import SupersedeService
from memory_service.core.services.threads import ThreadContext
from memory_service.core.services.trace import TraceService
from memory_service.core.services.writer import RecordWriter
from memory_service.settings import Settings
from memory_service.stores.factory import build_stores
from memory_service.stores.owner_lock import OwnerLock

logger = logging.getLogger(__name__)

# What each settings backend is, as statistics and health name it.
BACKEND_NAMES = {"edge": "qdrant-edge", "server": "qdrant", "embedded": "ladybug", "neo4j": "neo4j"}


@dataclass
class Services:
    settings: Settings
    stores: Stores
    sync: GraphSync
    memory: MemoryService
    search: SearchService
    explain: ExplainService
    feedback: FeedbackService
    supersede: SupersedeService
    index: IndexService
    code: CodeSearch
    graph: GraphToolsService
    trace: TraceService
    design: DesignContextService
    consistency: ConsistencyService
    fix: FixValidationService
    lock: OwnerLock
    _housekeeper: Housekeeper | None = field(default=None, repr=False)

    def health(self) -> list[ComponentHealth]:
        parts = []
        for store in (self.stores.vectors, self.stores.graph, self.stores.cache, self.stores.queue):
            try:
                parts.append(store.health())
            except MemoryServiceError as exc:
                parts.append(ComponentHealth(type(store).__name__, "unavailable", "?", exc.message))
        parts.append(self.stores.embedder.health())
        return parts

    def stats(self) -> dict[str, Any]:
        """memory_statistics-shaped figures, from the stores themselves."""
        vectors = self.stores.vectors
        by_type = {
            t.value: n
            for t in MemoryType
            if (n := vectors.count(MEMORIES, PayloadFilter(equals={"status": "active", "type": t.value})))
        }
        deleted = vectors.count(MEMORIES, PayloadFilter(equals={"status": MemoryStatus.DELETED.value}))
        pending_embeddings = vectors.count(
            MEMORIES, PayloadFilter(equals={"status": "active", "embedding_pending": True})
        )
        try:
            rel_by_type = self.stores.graph.count_edges_by_type()
            graph_mb = round(self.stores.graph.size_bytes() / 1e6, 3)
        except MemoryServiceError:
            rel_by_type, graph_mb = {}, 0.0
        sync = self.sync.pending()
        cache = self.stores.cache.stats()
        return {
            "memories": {
                "total": sum(by_type.values()),
                "by_type": by_type,
                "deleted": deleted,
                "embedding_pending": pending_embeddings,
            },
            "relationships": {"total": sum(rel_by_type.values()), "by_type": rel_by_type},
            # Each store by what it is (the embedded default is not Qdrant's server nor Neo4j).
            "storage": {
                "vector_store": BACKEND_NAMES[str(self.settings.qdrant.backend)],
                "vector_size_mb": round(vectors.size_bytes() / 1e6, 3),
                "graph_store": BACKEND_NAMES[str(self.settings.graph.backend)],
                "graph_size_mb": graph_mb,
                "cache_store": str(self.settings.redis.backend),
                "cache_size_mb": round(self.stores.cache.size_bytes() / 1e6, 3),
            },
            "sync": {
                "pending": sync.get("pending", 0) + sync.get("inflight", 0),
                "failed": sync.get("failed", 0),
            },
            "performance": {"cache_hit_rate": cache.get("hit_rate", 0.0)},
        }

    def close(self) -> None:
        # A process that exits while the model loads dies in ONNX Runtime's native threads
        # ("terminate called without an active exception"); a load takes a second or two.
        self.stores.embedder.wait_ready(timeout=10)
        self.index.jobs.shutdown()
        if self._housekeeper is not None:
            self._housekeeper.stop()
        with contextlib.suppress(MemoryServiceError):  # left queued; the next start retries it
            self.sync.drain()
        self.stores.close()
        self.lock.release()


def open_services(settings: Settings, *, housekeeping: bool = True) -> Services:
    """Take ownership of the data directory and open everything; the model loads in the background."""
    data_dir = settings.resolved_data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = OwnerLock(data_dir)
    lock.acquire()
    try:
        stores = build_stores(settings)
    except BaseException:
        lock.release()
        raise
    stores.embedder.start()  # type: ignore[attr-defined]
    stores.vectors.ensure_collection(memories_collection(settings.embedding.dim))
    for name in code_records.CODE_COLLECTIONS:
        stores.vectors.ensure_collection(code_records.code_collection(name, settings.embedding.dim))
    sync = GraphSync(stores.queue, stores.graph)
    # What a crashed run left held: ours by name, dead consumers' after the visibility timeout;
    # the embedded queue has no consumer but the data directory's owner (us), so all of it.
    sync.recover(sole_consumer=settings.redis.backend == "sqlite")
    threads = ThreadContext(
        stores.vectors, turns=settings.memory.context_turns, max_chars=settings.memory.context_chars
    )
    writer = RecordWriter(
        stores, sync, model_wait_seconds=settings.embedding.load_timeout_seconds, threads=threads
    )
    scope = Scope(project=settings.project, branch=settings.branch)
    paths = PathPolicy(settings.project_root, settings.indexer.allowed_roots, settings.indexer.max_file_bytes)
    memory = MemoryService(stores, writer, settings.memory, scope, settings.actor)
    stale = StaleMarker(memory, writer, settings.actor)
    indexer = CodeIndexer(
        stores, stores.index_state, paths, settings.project, settings.indexer.batch_units, stale.mark
    )
    search = SearchService(Ranker(stores, settings.ranking, scope))
    services = Services(
        settings=settings,
        stores=stores,
        sync=sync,
        memory=memory,
        search=search,
        explain=ExplainService(search, scope),
        feedback=FeedbackService(stores, writer, memory, settings.actor),
        supersede=SupersedeService(stores, writer, memory, settings.actor),
        index=IndexService(stores, indexer, paths, JobManager(stores.cache), settings.actor),
        code=CodeSearch(stores),
        graph=GraphToolsService(
            stores.graph, allow_writes=settings.graph.allow_writes, timeout_ms=settings.graph.query_timeout_ms
        ),
        trace=TraceService(stores.vectors, stores.graph, stores.sparse),
        design=DesignContextService(stores.vectors, stores.graph),
        consistency=ConsistencyService(stores.vectors, stores.graph),
        fix=FixValidationService(stores.vectors, stores.graph),
        lock=lock,
    )
    writer.drain_quietly()
    if housekeeping:
        services._housekeeper = Housekeeper(services, EmbeddingRefresher(stores, writer, memory.locks))
        services._housekeeper.start()
    return services


class Housekeeper:
    """Background upkeep off the request path: retry graph sync, embed memories stored without a
    model once one is loaded, build HNSW indexes as collections grow."""

    def __init__(self, services: Services, refresher: EmbeddingRefresher, *, interval: float = 2.0) -> None:
        self._services = services
        self._refresher = refresher
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="housekeeper", daemon=True)
        self._collections = (MEMORIES, *code_records.CODE_COLLECTIONS)
        self._indexed: dict[str, int] = {}

    def start(self) -> None:
        # What is on disk was indexed by an earlier run (the engine persists its HNSW segments);
        # rebuilding it on every start would cost minutes on a large store for nothing.
        vectors = self._services.stores.vectors
        self._indexed = {name: vectors.count(name) for name in self._collections}
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._tick()
            except MemoryServiceError as exc:
                logger.warning("housekeeping: %s", exc.message)
            except Exception:
                logger.exception("housekeeping failed")

    def _tick(self) -> None:
        services = self._services
        if services.sync.pending().get("pending", 0):
            services.sync.drain()
        self._refresher.run()
        vectors = services.stores.vectors
        for name in self._collections:
            total = vectors.count(name)
            indexed = self._indexed.get(name, 0)
            # Rebuilds cost time proportional to the collection: wait for 25% growth once large.
            threshold = max(services.settings.qdrant.optimize_after_points, indexed // 4)
            if total - indexed >= threshold:
                logger.info("building the %s vector index for %d points", name, total)
                vectors.optimize(name)
                self._indexed[name] = total
