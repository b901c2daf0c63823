"""Thread-context vectors: each record of a thread read in its context, kept in a sibling collection.

A memory of a thread (core/write/threads.py) gets a second dense + sparse pair, embedded from
the turns before it and itself; search fuses both views (core/search/ranker.py). The pair is an
ordinary point of a sibling collection, ``<collection>__context``: same id, same payload (filters
apply alike), its vectors under the collection's own names. Only memories in a thread have one,
so other writes never flush its storages. As two more named vectors of the main collection they
cost every write their flush: at 100k, memory_add p50 129 ms and 531 MB on disk, against 96 ms
and 449 MB this way (docs/benchmarks.md).

:class:`ContextVectors` wraps the plain vector store (``Stores.vectors`` holds it): the store's
port passes through, every write to a collection that keeps context keeps its sibling in step,
and ``context=True`` searches the sibling. It uses the plain port only, so every engine keeps the
same layout on disk and on a server.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from memory_service.core.ports.health import ComponentHealth
from memory_service.core.ports.maintenance import Maintainable
from memory_service.core.ports.vector import (
    CollectionSpec,
    PayloadFilter,
    ScoredPoint,
    SparseVector,
    VectorPoint,
    VectorStore,
)

CONTEXT_SUFFIX = "__context"


def context_collection(collection: str) -> str:
    """The sibling that keeps ``collection``'s context pairs (its name in the store)."""
    return f"{collection}{CONTEXT_SUFFIX}"


@dataclass
class ContextPoint(VectorPoint):
    """A point to upsert with its record read in its thread's context (the memories just before
    it, then itself): a second dense + sparse pair, written to the sibling collection. A point
    written without one (or a plain :class:`VectorPoint`) loses any pair it had."""

    context_dense: list[float] | None = None
    context_sparse: SparseVector | None = None


def _pair(point: VectorPoint) -> tuple[list[float] | None, SparseVector | None]:
    if isinstance(point, ContextPoint):
        return point.context_dense, point.context_sparse
    return None, None


class ContextVectors:
    """A VectorStore whose ``collections`` keep a context sibling; anything else passes through.

    A collection keeps context once opened here (``ensure_collection`` opens its sibling too, so a
    collection made before it had one gains it: its old points have no pair, new ones do).
    Thread-safe as the store it wraps is.
    """

    def __init__(self, store: VectorStore, collections: Iterable[str]) -> None:
        self._store = store
        self._contextual = frozenset(collections)
        self._open: set[str] = set()  # contextual collections whose sibling is open
        self._closed = False

    # ------------------------------------------------------------------ context
    def has_context(self, collection: str) -> bool:
        """Whether the open collection keeps context vectors (search skips them otherwise)."""
        return collection in self._open

    def context_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """Which of these points have a context pair (normalization finds memories of a thread
        that lost theirs); empty for a collection without context vectors."""
        if not ids or not self.has_context(collection):
            return set()
        return {p.id for p in self._store.retrieve(context_collection(collection), ids, payload=False)}

    # ------------------------------------------------------------------ collections and writes
    def ensure_collection(self, spec: CollectionSpec) -> None:
        """Open the collection, and its context sibling (same layout) when it keeps context."""
        self._store.ensure_collection(spec)
        if spec.name in self._contextual:
            self._store.ensure_collection(replace(spec, name=context_collection(spec.name)))
            self._open.add(spec.name)

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        self._store.upsert(collection, points)
        if self.has_context(collection):
            self._upsert_pairs(context_collection(collection), points)

    def _upsert_pairs(self, sibling: str, points: Sequence[VectorPoint]) -> None:
        """Context pairs go to the sibling; a point written without one loses any it had there
        (found by a read first: most writes have no pair to drop, and reads cost no log entry)."""
        batch: list[VectorPoint] = []
        without: list[str] = []
        for point in points:
            dense, sparse = _pair(point)
            if dense is None and sparse is None:
                without.append(point.id)
            else:
                batch.append(VectorPoint(point.id, point.payload, dense=dense, sparse=sparse))
        stale = [p.id for p in self._store.retrieve(sibling, without, payload=False)] if without else []
        if batch:
            self._store.upsert(sibling, batch)
        if stale:
            self._store.delete(sibling, stale)

    def overwrite_payload(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Replace payloads, keeping vectors (the context pair's payload too)."""
        self._store.overwrite_payload(collection, points)
        if self.has_context(collection):
            self._store.overwrite_payload(context_collection(collection), points)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        self._store.delete(collection, ids)
        if ids and self.has_context(collection):
            self._store.delete(context_collection(collection), ids)

    # ------------------------------------------------------------------ searches
    def search_dense(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        context: bool = False,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        """Nearest by cosine; ``context`` searches the context vectors (empty when there are none)."""
        name = self._searched(collection, context)
        return [] if name is None else self._store.search_dense(name, vector, limit, flt, payload=payload)

    def search_sparse(
        self,
        collection: str,
        vector: SparseVector,
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        context: bool = False,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        """BM25; ``context`` searches the context vectors (empty when there are none)."""
        name = self._searched(collection, context)
        return [] if name is None else self._store.search_sparse(name, vector, limit, flt, payload=payload)

    def _searched(self, collection: str, context: bool) -> str | None:
        """The collection a search reads: the context sibling for ``context``, None when it has none."""
        if not context:
            return collection
        return context_collection(collection) if self.has_context(collection) else None

    # ------------------------------------------------------------------ the rest of the port
    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_dense: bool = False, payload: bool = True
    ) -> list[VectorPoint]:
        return self._store.retrieve(collection, ids, with_dense=with_dense, payload=payload)

    def scroll(
        self, collection: str, flt: PayloadFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[VectorPoint], str | None]:
        return self._store.scroll(collection, flt, limit, offset)

    def latest(
        self, collection: str, flt: PayloadFilter | None, order_key: str, limit: int
    ) -> list[VectorPoint]:
        return self._store.latest(collection, flt, order_key, limit)

    def count(self, collection: str, flt: PayloadFilter | None = None) -> int:
        return self._store.count(collection, flt)

    def size_bytes(self) -> int:
        return self._store.size_bytes()

    def checkpoint(self) -> None:
        self._store.checkpoint()

    def health(self) -> ComponentHealth:
        return self._store.health()

    def close(self) -> None:
        self._closed = True
        self._store.close()


class MaintainedContextVectors(ContextVectors):
    """ContextVectors on an embedded engine: its maintenance passes through, the index build
    covering the context sibling too."""

    def __init__(self, store: VectorStore, engine: Maintainable, collections: Iterable[str]) -> None:
        super().__init__(store, collections)
        self._engine = engine

    def optimize(self, collection: str) -> bool:
        """Build the collection's indexes, then its context sibling's; True when something changed."""
        changed = self._engine.optimize(collection)
        if self.has_context(collection) and not self._closed:  # shutdown may have stopped the first
            changed = self._engine.optimize(context_collection(collection)) or changed
        return changed

    def upkeep(self) -> bool:
        return self._engine.upkeep()


def context_vectors(store: VectorStore, collections: Iterable[str]) -> ContextVectors:
    """``store`` with ``collections`` keeping their context sibling; :class:`Maintainable` when
    the engine is."""
    if isinstance(store, Maintainable):
        return MaintainedContextVectors(store, store, collections)
    return ContextVectors(store, collections)
