"""Background upkeep off the request path, run by the process that owns the data directory.

Every 2 s, through the write gate: drain the graph-sync backlog, embed memories stored without a
model once one is loaded, sweep expired memories, hand idle memory back, and build a collection's
HNSW index once it has grown enough (docs/architecture.md, "Background housekeeping").
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Protocol

from memory_service.core.code import records as code_records
from memory_service.core.errors import MemoryServiceError
from memory_service.core.maintenance.embedding_refresh import EmbeddingRefresher
from memory_service.core.maintenance.expiry import ExpiryService
from memory_service.core.ports import Maintainable
from memory_service.core.records import MEMORIES, Stores
from memory_service.core.write.gate import WriteGate
from memory_service.core.write.graph_sync import GraphSync
from memory_service.resident import trim_heap
from memory_service.settings import Settings

logger = logging.getLogger(__name__)


class Upkept(Protocol):
    """What housekeeping reads of the service bundle (app.Services)."""

    settings: Settings
    stores: Stores
    sync: GraphSync
    expiry: ExpiryService
    gate: WriteGate


SETTLE_WITHIN_SECONDS = 60.0  # settle_heap without waiting for a model that does not load


def settle_heap() -> None:
    """Once started (stores open, model loaded or given up): freeze the objects alive now.

    The process holds ~150,000 objects the cyclic collector tracks once started (modules, the
    SDK's and pydantic's schemas, the model's wrappers), nearly all kept for its lifetime. Every
    full collection walked all of them: 40-60 ms on this 2-core machine, inside whichever request
    allocated the object that triggered it (the bench's slowest search, one in ~500, every run).
    Frozen objects are left out of every collection (``gc.freeze``, which only moves lists);
    later ones are collected as before. The young generations are collected first (cheap); a full
    collection here would itself be such a pause, in whichever request runs meanwhile, so the
    few start-up objects that are already garbage in the old generation stay, frozen."""
    gc.collect(1)
    gc.freeze()
    logger.debug("start-up objects frozen: %d", gc.get_freeze_count())


class Housekeeper:
    """Background upkeep off the request path: retry graph sync, embed memories stored without a
    model once one is loaded, build HNSW indexes as collections grow."""

    def __init__(self, services: Upkept, refresher: EmbeddingRefresher, *, interval: float = 2.0) -> None:
        self._services = services
        self._refresher = refresher
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="housekeeper", daemon=True)
        self._collections = (MEMORIES, *code_records.CODE_COLLECTIONS)
        self._indexed: dict[str, int] = {}
        self._next_sweep = 0.0  # the first tick sweeps what expired while the server was down
        self._settled = False  # start-up objects moved out of the collector's way (settle_heap)
        self._settle_by = time.monotonic() + SETTLE_WITHIN_SECONDS

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
                with self._services.gate.passing("housekeeping"):
                    self._tick()
                self._build_indexes()
            except MemoryServiceError as exc:
                logger.warning("housekeeping: %s", exc.message)
            except Exception:
                logger.exception("housekeeping failed")

    def _tick(self) -> None:
        services = self._services
        if not self._settled and (services.stores.embedder.ready or time.monotonic() > self._settle_by):
            self._settled = True  # once the model is loaded (or could not be, by then)
            settle_heap()
        if services.sync.pending().get("pending", 0):
            services.sync.drain()
        self._refresher.run()
        every = services.settings.memory.ttl_sweep_seconds
        if every and time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + every
            services.expiry.sweep()
        vectors = services.stores.vectors
        # An embedded engine's upkeep; writes went quiet: the model's run buffers and freed heap go back.
        if isinstance(vectors, Maintainable) and vectors.upkeep():
            services.stores.embedder.release_memory()
            trim_heap()

    def _build_indexes(self) -> None:
        """Build the HNSW index of each collection grown enough since the last build: long work
        for the write gate (an online backup waits for it before pausing writes)."""
        services = self._services
        vectors = services.stores.vectors
        if not isinstance(vectors, Maintainable):  # a server builds its indexes itself
            return
        for name in self._collections:
            total = vectors.count(name)
            indexed = self._indexed.get(name, 0)
            # Rebuilds cost time proportional to the collection: wait for 25% growth once large.
            threshold = max(services.settings.qdrant.optimize_after_points, indexed // 4)
            if total - indexed >= threshold:
                logger.info("building the %s vector index for %d points", name, total)
                with services.gate.passing(f"the {name} vector index build", long=True):
                    vectors.optimize(name)
                self._indexed[name] = total
