"""The one write path for memory records (ROADMAP: audit, outbox and idempotency each have one home).

validate (callers) → embed (dense when the model is loaded, sparse always; plus the thread-context
pair for memories of a session, :mod:`.threads`) → upsert the vector store → enqueue graph changes
in the durable outbox → append the audit events → acknowledge; then drain the outbox so that the
graph is usually current by the time the caller reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import MemoryServiceError
from memory_service.core.models import MemoryRecord
from memory_service.core.ports import AuditEvent, SparseVector, VectorPoint
from memory_service.core.records import MEMORIES, WRITE_GENERATION, Stores, to_payload
from memory_service.core.services.graph_sync import GraphSync
from memory_service.core.services.threads import ThreadContext

logger = logging.getLogger(__name__)


class RecordWriter:
    def __init__(
        self,
        stores: Stores,
        sync: GraphSync,
        *,
        model_wait_seconds: float = 60.0,
        threads: ThreadContext | None = None,
    ) -> None:
        self._stores = stores
        self._sync = sync
        self._model_wait_seconds = model_wait_seconds
        self._threads = threads

    def embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        """Dense vectors for texts, or None when no model is usable (records then go lexical-only)."""
        embedder = self._stores.embedder
        if not texts or not embedder.wait_ready(self._model_wait_seconds):
            return None
        return embedder.embed_documents(list(texts))

    def write(
        self,
        records: Sequence[MemoryRecord],
        *,
        graph_ops: list[dict[str, Any]] | None = None,
        audit: Sequence[AuditEvent] = (),
        reembed: bool = True,
        vectors: list[list[float]] | None = None,
    ) -> None:
        """Persist records (re-embedding them unless told otherwise), queue graph ops, audit."""
        if records:
            texts = [r.embedding_text() for r in records]
            dense = vectors if vectors is not None else (self.embed(texts) if reembed else None)
            sparse = self._stores.sparse.encode_documents(texts) if reembed else [None] * len(records)
            points = []
            for i, record in enumerate(records):
                if reembed:
                    record.embedding_pending = dense is None
                    record.embedding_model = None if dense is None else self._stores.embedder.model_name
                points.append(
                    VectorPoint(
                        id=record.id,
                        payload=to_payload(record),
                        dense=dense[i] if dense is not None else None,
                        sparse=sparse[i],
                    )
                )
            if reembed:
                self._add_context(records, texts, points)
                self._stores.vectors.upsert(MEMORIES, points)
            else:
                self._stores.vectors.overwrite_payload(MEMORIES, points)
        self._sync.enqueue(graph_ops or [])
        if audit:
            self._stores.audit.append(list(audit))
        self._bump_generation()
        self.drain_quietly()

    def _bump_generation(self) -> None:
        """Invalidate cached search results; a cache that fails leaves them to expire (TTL)."""
        try:
            self._stores.cache.incr(*WRITE_GENERATION)
        except MemoryServiceError as exc:
            logger.warning("search cache not invalidated: %s", exc.message)

    def _add_context(
        self, records: Sequence[MemoryRecord], texts: Sequence[str], points: list[VectorPoint]
    ) -> None:
        """Give memories of a thread their context vectors (a thread's first memory reuses its own)."""
        if self._threads is None:
            return
        contexts = self._threads.texts(records)
        fresh = [i for i, c in enumerate(contexts) if c is not None and c != texts[i]]
        fresh_texts = [contexts[i] or "" for i in fresh]
        have_dense = any(p.dense is not None for p in points)
        dense = self.embed(fresh_texts) if fresh and have_dense else None
        sparse: list[SparseVector] = self._stores.sparse.encode_documents(fresh_texts) if fresh else []
        slot = {i: j for j, i in enumerate(fresh)}
        for i, context in enumerate(contexts):
            if context is None:
                continue
            point = points[i]
            if i in slot:
                point.context_dense = dense[slot[i]] if dense is not None and point.dense else None
                point.context_sparse = sparse[slot[i]]
            else:
                point.context_dense, point.context_sparse = point.dense, point.sparse

    def drain_quietly(self) -> None:
        """Apply queued graph changes now; failures stay queued and are retried later."""
        try:
            self._sync.drain()
        except MemoryServiceError as exc:  # the graph being down must not fail an acknowledged write
            logger.warning("graph sync deferred: %s", exc.message)
