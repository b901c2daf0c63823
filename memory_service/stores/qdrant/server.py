"""The server VectorStore: a Qdrant server through ``qdrant-client``, laid out as the embedded one.

Same named vectors, sparse IDF modifier and payload indexes as :mod:`.edge` (see
:mod:`.server_collections`), so both answer the contract suite alike. Every collection name gets
``prefix``, so several projects can share one server.

* Writes pass ``wait=True``: acknowledged means in the server's WAL and applied (searchable); how
  the WAL reaches the disk (power loss, replication) is the server's configuration.
* No ``optimize`` or ``upkeep`` (it is not :class:`~memory_service.core.ports.Maintainable`): the
  server's own optimizer threads build HNSW once a segment's dense vectors pass
  ``indexing_threshold_kb`` (set on creation; the embedded default), off our path, and the data
  lives in the server, not in this process.
* Client errors (connection refused, timeout, unexpected response) become ``SVC_VECTOR_STORE``.

``path`` selects qdrant-client's local mode instead (a directory, or ``":memory:"``): the same
client calls, no server; the tests use it. It does not stand in for a server everywhere: it
ignores payload indexes (so an ``order_by`` on an unindexed field works there, not on a server) and
HNSW (every search is exact, brute force in Python), computes sparse IDF in Python per query, keeps
every point in RAM (pickled into SQLite, one commit per point), admits one client per directory,
and slows down past ~20k points. Its calls are serialised here (one SQLite connection, many threads).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from qdrant_client import models

from memory_service.core.errors import MemoryServiceError, ValidationError
from memory_service.core.ports import (
    CollectionSpec,
    ComponentHealth,
    PayloadFilter,
    ScoredPoint,
    SparseVector,
    VectorPoint,
)
from memory_service.stores.qdrant import server_collections as colls
from memory_service.stores.qdrant.ids import point_id
from memory_service.stores.qdrant.server_client import CLIENT_ERRORS, GuardedClient
from memory_service.stores.qdrant.server_collections import DENSE, SPARSE
from memory_service.stores.qdrant.server_filter import to_filter

_PREFIX = re.compile(r"^[A-Za-z0-9_-]{0,64}$")


class QdrantServerVectorStore:
    """VectorStore on a Qdrant server (or qdrant-client local mode); thread-safe."""

    def __init__(
        self,
        url: str | None = None,
        *,
        api_key: str | None = None,
        prefix: str = "",
        path: str | None = None,
        timeout_s: float = 10.0,
        indexing_threshold_kb: int = 20_000,
    ) -> None:
        """Args:
        url: the server's REST address (``http://localhost:6333``); exactly one of url and path.
        api_key: the server's API key, if it requires one.
        prefix: put before every collection name (letters, digits, '_', '-'; may be empty).
        path: local mode instead of a server: a directory, or ``":memory:"``.
        timeout_s: per request (the client counts whole seconds: rounded up).
        indexing_threshold_kb: dense-vector KB per segment before the server builds HNSW.

        Raises:
            ValidationError: both or neither of url and path, or a prefix with other characters.
        """
        if (url is None) == (path is None) or not _PREFIX.match(prefix):
            raise ValidationError(
                "Qdrant needs exactly one of a server URL or a local path, and a plain name prefix",
                code="VAL_QDRANT_TARGET",
                details={"url": bool(url), "path": path, "prefix": prefix},
                suggestion="Set MEMORY_QDRANT__URL (a server) and no local path, with a prefix of "
                "letters, digits, '_' or '-'.",
            )
        self._prefix, self._path, self._threshold_kb = prefix, path, indexing_threshold_kb
        self._client = GuardedClient(url, api_key, path, timeout_s)
        self._call = self._client.call
        self._lock = threading.Lock()
        self._specs: dict[str, CollectionSpec] = {}

    def _spec(self, name: str) -> CollectionSpec:
        """The spec of an ensured collection; a service error for any other name (or once closed)."""
        with self._lock:
            spec = None if self._client.closed else self._specs.get(name)
        if spec is None:
            closed = "Vector store is closed"
            raise self._client.error(
                closed if self._client.closed else f"Vector collection '{name}' is not open"
            )
        return spec

    # ------------------------------------------------------------------ collections
    def ensure_collection(self, spec: CollectionSpec) -> None:
        """Create the collection (or check its vectors match ``spec``) and any missing indexes."""
        colls.check_name(spec.name)
        with self._lock:
            known = self._specs.get(spec.name)
        if known is not None and (known.dense_dim, known.sparse) != (spec.dense_dim, spec.sparse):
            raise colls.layout_error(spec.name, self._prefix)
        with self._call("ensure_collection", spec.name) as client:
            colls.ensure(client, self._prefix, spec, self._threshold_kb)
        with self._lock:
            self._specs[spec.name] = spec

    # ------------------------------------------------------------------ writes
    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        spec = self._spec(collection)
        batch = [self._point(spec, p.id, p.payload, p.dense, p.sparse) for p in points]
        if batch:
            with self._call("upsert", collection) as client:
                client.upsert(self._prefix + collection, batch, wait=True)

    def _point(
        self,
        spec: CollectionSpec,
        pid: str,
        payload: dict[str, Any],
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
    ) -> models.PointStruct:
        vector: dict[str, Any] = {}
        if dense is not None:
            colls.check_dim(spec, dense)
            vector[DENSE] = [float(x) for x in dense]
        if sparse is not None:
            vector[SPARSE] = _sparse(sparse)
        return models.PointStruct(id=point_id(pid), vector=vector, payload=payload)

    def overwrite_payload(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Replace payloads, keeping vectors; unknown ids are skipped.

        Each point is selected by a has-id filter, not by id: a filter that matches nothing is a
        no-op, whereas the server refuses an unknown id (and a read first would race a delete).
        """
        self._spec(collection)
        ops: list[models.UpdateOperation] = [
            models.OverwritePayloadOperation(
                overwrite_payload=models.SetPayload(
                    payload=p.payload,
                    filter=models.Filter(must=[models.HasIdCondition(has_id=[point_id(p.id)])]),
                )
            )
            for p in points
        ]
        if ops:
            with self._call("overwrite_payload", collection) as client:
                client.batch_update_points(self._prefix + collection, ops, wait=True)  # one request

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        self._spec(collection)
        wanted = [point_id(i) for i in ids]
        if wanted:
            with self._call("delete", collection) as client:
                client.delete(self._prefix + collection, models.PointIdsList(points=wanted), wait=True)

    # ------------------------------------------------------------------ reads
    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_dense: bool = False, payload: bool = True
    ) -> list[VectorPoint]:
        """Points in the order asked, unknown ids left out."""
        self._spec(collection)
        wanted = list(dict.fromkeys(point_id(i) for i in ids))
        if not wanted:
            return []
        vectors = [DENSE] if with_dense else False
        with self._call("retrieve", collection) as client:
            records = client.retrieve(
                self._prefix + collection, wanted, with_payload=payload, with_vectors=vectors
            )
        found = {
            str(r.id): VectorPoint(str(r.id), r.payload or {}, dense=_dense_of(r.vector)) for r in records
        }
        return [found[i] for i in wanted if i in found]

    def search_dense(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        colls.check_dim(self._spec(collection), vector)
        return self._query(collection, [float(x) for x in vector], DENSE, limit, flt, payload)

    def search_sparse(
        self,
        collection: str,
        vector: SparseVector,
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        """BM25: documents carry term frequencies, the IDF modifier weights them at query time."""
        if not vector.indices:
            return []
        self._spec(collection)
        return self._query(collection, _sparse(vector), SPARSE, limit, flt, payload)

    def _query(
        self, name: str, query: Any, using: str, limit: int, flt: PayloadFilter | None, payload: bool = True
    ) -> list[ScoredPoint]:
        if limit <= 0:
            return []
        with self._call("search", name) as client:
            hits = client.query_points(
                self._prefix + name,
                query=query,
                using=using,
                limit=limit,
                query_filter=to_filter(flt),
                with_payload=payload,
            ).points
        return [ScoredPoint(str(h.id), float(h.score), h.payload or {}) for h in hits]

    def scroll(
        self, collection: str, flt: PayloadFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[VectorPoint], str | None]:
        """Pages in id order; the offset is the id of the next page's first point."""
        start = point_id(offset) if offset is not None else None
        points, nxt = self._scroll(collection, "scroll", flt, limit, offset=start)
        return points, (str(nxt) if nxt is not None else None)

    def latest(
        self, collection: str, flt: PayloadFilter | None, order_key: str, limit: int
    ) -> list[VectorPoint]:
        """Highest ``order_key`` first (a server needs a float index on it, as ``created_at_ts`` has)."""
        order = models.OrderBy(key=order_key, direction=models.Direction.DESC)
        return self._scroll(collection, "latest", flt, limit, order_by=order)[0]

    def _scroll(
        self,
        collection: str,
        op: str,
        flt: PayloadFilter | None,
        limit: int,
        *,
        offset: str | None = None,
        order_by: models.OrderBy | None = None,
    ) -> tuple[list[VectorPoint], Any]:
        self._spec(collection)
        with self._call(op, collection) as client:
            records, nxt = client.scroll(
                self._prefix + collection,
                scroll_filter=to_filter(flt),
                limit=max(1, limit),
                offset=offset,
                order_by=order_by,
            )
        return [VectorPoint(str(r.id), r.payload or {}) for r in records], nxt

    def count(self, collection: str, flt: PayloadFilter | None = None) -> int:
        self._spec(collection)
        with self._call("count", collection) as client:
            return int(client.count(self._prefix + collection, count_filter=to_filter(flt), exact=True).count)

    # ------------------------------------------------------------------ upkeep
    def checkpoint(self) -> None:
        """Nothing: the server keeps its own files."""

    def size_bytes(self) -> int:
        """Best effort: local mode's files; a server's estimate of vectors + payloads (telemetry),
        or of dense vectors from point counts when telemetry is refused or unreadable."""
        if self._path not in (None, ":memory:"):
            return colls.disk_bytes(str(self._path))
        with self._lock:
            dims = {self._prefix + s.name: s.dense_dim for s in self._specs.values()}
        with self._call("size_bytes", ",".join(dims)) as client:
            if self._path is None:
                with suppress(*CLIENT_ERRORS):  # not an outage: the estimate below says if it is
                    return colls.telemetry_bytes(client, set(dims))
            return colls.estimated_bytes(client, dims)

    def health(self) -> ComponentHealth:
        """Exact counts per open collection; with none open yet, a ping of the server."""
        with self._lock:
            names = sorted(self._specs)
        try:
            counts = {name: self.count(name) for name in names}
            with self._call("health", "*") as client:
                if not names:
                    client.get_collections()
        except MemoryServiceError as exc:
            return ComponentHealth("vectors", "unavailable", "qdrant", detail=exc.message)
        return ComponentHealth(
            "vectors", "ok", "qdrant", detail=self._client.where, extra={"collections": counts}
        )

    def close(self) -> None:
        """Close the client (local mode: release its directory); later calls raise."""
        self._client.close()


def _sparse(vector: SparseVector) -> models.SparseVector:
    return models.SparseVector(
        indices=[int(i) for i in vector.indices], values=[float(v) for v in vector.values]
    )


def _dense_of(vector: Any) -> list[float] | None:
    """The dense vector of a retrieved record (named vectors come back as a dict)."""
    if isinstance(vector, dict):
        dense = vector.get(DENSE)
        return [float(x) for x in dense] if isinstance(dense, list) else None
    return None
