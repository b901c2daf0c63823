"""The reads of the embedded VectorStore (:mod:`.edge`): points by id, searches, pages, counts.

Each is one engine call under the collection's lock (:class:`.edge_shard.EdgeShards`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import qdrant_edge as qe

from memory_service.core.ports import PayloadFilter, ScoredPoint, SparseVector, VectorPoint
from memory_service.stores.qdrant.edge_filter import to_filter
from memory_service.stores.qdrant.edge_shard import DENSE, SPARSE, EdgeShards, dense_of
from memory_service.stores.qdrant.ids import point_id


class EdgeReads(EdgeShards):
    """Reads of the open shards."""

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_dense: bool = False, payload: bool = True
    ) -> list[VectorPoint]:
        """Points in the order asked (the engine returns them sorted by id), unknown ids left out."""
        wanted: list[qe.PointId] = list(dict.fromkeys(point_id(i) for i in ids))
        if not wanted:
            return []
        with self._use(collection, "retrieve") as coll:
            records = coll.shard.retrieve(wanted, payload, with_dense)  # with_vector is required at runtime
        found = {
            str(r.id): VectorPoint(str(r.id), r.payload or {}, dense=dense_of(r.vector)) for r in records
        }
        return [found[i] for i in map(str, wanted) if i in found]

    def _query(
        self,
        collection: str,
        query: qe.Query,
        limit: int,
        flt: PayloadFilter | None,
        check: Sequence[float] | None = None,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        if limit <= 0:
            return []
        with self._use(collection, "search") as coll:
            if check is not None:
                self._check_dim(coll, check)
            hits = coll.shard.query(
                qe.QueryRequest(limit=limit, query=query, filter=to_filter(flt), with_payload=payload)
            )
        return [ScoredPoint(str(h.id), float(h.score), h.payload or {}) for h in hits]

    def search_dense(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        query = qe.Query.Nearest([float(x) for x in vector], using=DENSE)
        return self._query(collection, query, limit, flt, check=vector, payload=payload)

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
        sparse = qe.SparseVector([int(i) for i in vector.indices], [float(v) for v in vector.values])
        return self._query(collection, qe.Query.Nearest(sparse, using=SPARSE), limit, flt, payload=payload)

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
        """Highest ``order_key`` first (it must have a float index, as ``created_at_ts`` has)."""
        order = qe.OrderBy(order_key, qe.Direction.Desc)
        return self._scroll(collection, "latest", flt, limit, order_by=order)[0]

    def _scroll(
        self,
        collection: str,
        op: str,
        flt: PayloadFilter | None,
        limit: int,
        *,
        offset: qe.PointId | None = None,
        order_by: qe.OrderBy | None = None,
    ) -> tuple[list[VectorPoint], Any]:
        """One page of points with payloads (no vectors), and the engine's next-page offset."""
        with self._use(collection, op) as coll:
            if order_by is not None and not coll.indexed:  # empty: no index to order by yet
                return [], None
            records, nxt = coll.shard.scroll(
                qe.ScrollRequest(
                    offset=offset,
                    limit=max(1, limit),
                    filter=to_filter(flt),
                    with_payload=True,
                    with_vector=False,
                    order_by=order_by,
                )
            )
        return [VectorPoint(str(r.id), r.payload or {}) for r in records], nxt

    def count(self, collection: str, flt: PayloadFilter | None = None) -> int:
        with self._use(collection, "count") as coll:
            return int(coll.shard.count(qe.CountRequest(exact=True, filter=to_filter(flt))))
