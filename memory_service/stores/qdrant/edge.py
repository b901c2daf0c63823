"""The embedded VectorStore: one qdrant-edge ``EdgeShard`` per collection under ``root/<collection>/``.

Facts measured on qdrant-edge-py 0.9.0 (2 cores) that shape this module:

* The binding holds the GIL for every call, ``optimize()`` included: an in-process HNSW build
  (4.7 s at 12k x 384) froze every Python thread, the MCP event loop too. Large collections are
  therefore optimised in a child process on a copy of the shard; writes made meanwhile are journalled
  and replayed onto the optimised copy, which is then swapped in (see :mod:`.qdrant_edge_optimize`).
* Since calls cannot overlap anyway, one lock per collection serialises them at no cost in
  parallelism; it also makes the shard swap and ``close`` safe against in-flight calls.
* ``update()`` writes to an mmap-ed WAL without syncing: a SIGKILL right after it lost nothing, a
  power cut could. At load the engine replays its WAL over whatever the segments hold (as a
  Qdrant server does). So with ``sync_writes`` (the default) every write fsyncs the WAL's files
  before it is acknowledged, and survives power loss; the segments themselves are flushed in the
  background (:meth:`EdgeVectorStore.upkeep`: once writes are quiet, and at least every
  ``FLUSH_EVERY_SECONDS`` while they go on) and at close, which bounds the WAL a load replays.
  A shard ``flush()`` on every write instead cost 44 ms per 100-point upsert at 3k points
  (9.6 ms without it; 18 ms with the WAL's fsync), 10 % of a bulk add.
* Exact search stays fast up to ~20-30k 384-d points (1.6 ms at 20k), so HNSW is only built past
  ``indexing_threshold_kb`` of dense vectors; below it ``optimize`` only merges segments in-process.
* Loading a shard faults in files that searches never read again, whatever memory placement is
  asked: every payload index of a segment in full (~5 MB each: 12 per segment here, 50 MB), the WAL
  it replays (up to two 32 MB segments), and an appendable segment's dense vectors a 32 MB chunk at
  a time (a handful of points or none). Searches read an appendable segment's indexes from the
  engine's own copies in memory, an optimised segment's on-disk indexes (``spec.disk_indexes``)
  through the page cache, and only the vectors they score. All are shared file mappings, so they
  are paged out after each load (``resident.page_out``; searches fault back what they read), and
  the WAL and the appendable segments' index files again after writes
  (:meth:`EdgeVectorStore.upkeep`): 165 MB less at 100k memories, and 300 more searches faulted
  none of it back.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import (
    CollectionSpec,
    ComponentHealth,
    PayloadFilter,
    ScoredPoint,
    SparseVector,
    VectorPoint,
)
from memory_service.resident import page_out
from memory_service.stores.qdrant.edge_filter import to_filter
from memory_service.stores.qdrant.edge_optimize import EdgeCollection, ShardOptimizer
from memory_service.stores.qdrant.ids import point_id

logger = logging.getLogger(__name__)

DENSE, SPARSE = "dense", "sparse"
# Context vectors live in a sibling collection (same ids, same payload): only memories in a thread
# have them, so other writes never flush its storages. As two more named vectors of the main shard
# they cost every write their flush: at 100k, memory_add p50 129 ms and 531 MB on disk, against
# 96 ms and 449 MB this way (docs/benchmarks.md).
CONTEXT_SUFFIX = "__context"
_CODE = "SVC_VECTOR_STORE"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # no dots: ".<name>.*" dirs are ours


@contextmanager
def _engine(op: str, collection: str) -> Iterator[None]:
    """Turn engine exceptions (plain ``Exception``/``ValueError`` from the binding) into ours."""
    try:
        yield
    except MemoryServiceError:
        raise
    except Exception as exc:
        raise ServiceUnavailableError(
            f"Vector store failed during {op} on collection '{collection}': {exc}",
            code=_CODE,
            details={"operation": op, "collection": collection, "backend": "qdrant-edge"},
            suggestion="Retry later; if it persists, check disk space and permissions of the data "
            "directory and that no other process has it open.",
        ) from exc


VECTOR_MEMORY = None
# Files of a shard that searches do not read (see the module's docstring), paged out after writes:
# the WAL, and the storage of the payload indexes of an appendable segment (the engine's blob
# store: page_N, tracker, bitmask, gaps), whose contents searches read from memory. After a load,
# also every payload index (an on-disk one, spec.disk_indexes, faults back the pages searches read)
# and an appendable segment's vector chunks.
_INDEX_FILES = re.compile(r"/payload_index/[^/]+/(page_\d+|tracker|bitmask|gaps)\.dat$")
_WAL = re.compile(r"/wal/")
_LOADED = re.compile(r"/(payload_index|wal)/|/vector_storage[^/]*/vectors/chunk_")
# Quiet times before upkeep flushes the segments, and before it pages the index files out: each
# write touches a few pages of every index, so a write after that faults them back (memory_add
# 60 ms instead of 44 at 10k memories), which writes a minute apart do not pay. (The WAL is paged
# out at every call: a write appends to its last page, nothing to fault back.)
QUIET_SECONDS = 5.0
INDEX_QUIET_SECONDS = 60.0
# Writes quiet this long (at least one housekeeping tick without one): upkeep says so, and
# housekeeping gives back the model's run buffers and the freed heap. Sooner than the flush:
# nothing is written, and the next write re-grows what it needs (a burst's ~25 MB).
RELEASE_QUIET_SECONDS = 2.0
FLUSH_EVERY_SECONDS = 30.0


def _sync_wal(shard: Path) -> None:
    """fsync the shard's WAL files (the engine writes them through mmap; fsync writes back pages
    dirtied that way too) and their folder (a segment the update opened or renamed). A segment
    with nothing dirty costs a check. Called under the collection's lock, so no update rotates
    the WAL meanwhile."""
    wal = shard / "wal"
    with os.scandir(wal) as entries:
        files = [e.path for e in entries if e.name.startswith(("open-", "closed-"))]
    for path in [*files, str(wal)]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


_DATATYPES = {"float16": qe.VectorStorageDatatype.Float16, "float32": qe.VectorStorageDatatype.Float32}


def _stored_datatype(path: Path) -> qe.VectorStorageDatatype:
    """The dense datatype of the shard at ``path`` (float32 when its config names none, as shards
    made before float16 do); float16 for a new shard."""
    config = path / "edge_config.json"
    if not config.exists():
        return qe.VectorStorageDatatype.Float16
    stored = json.loads(config.read_text()).get("vectors", {}).get(DENSE, {})
    return _DATATYPES.get(str(stored.get("datatype", "float32")).lower(), qe.VectorStorageDatatype.Float32)


def _context_name(collection: str) -> str:
    return f"{collection}{CONTEXT_SUFFIX}"


class EdgeVectorStore:
    """VectorStore on qdrant-edge; thread-safe; one instance per data directory per process."""

    def __init__(
        self,
        root: Path,
        *,
        sync_writes: bool = True,
        indexing_threshold_kb: int = 20_000,
        optimize_timeout_s: float = 3600.0,
    ) -> None:
        """Args:
        sync_writes: flush after every upsert/delete (survives power loss, not just a crash).
        indexing_threshold_kb: dense-vector KB per segment before HNSW is built (exact search below).
        optimize_timeout_s: the child process building HNSW is killed after this long.
        """
        self._root = Path(root).expanduser().resolve()
        self._root.mkdir(parents=True, exist_ok=True)
        self._sync = sync_writes
        self._threshold_kb = indexing_threshold_kb
        self._shards = ShardOptimizer(self._root, optimize_timeout_s)
        self._lock = threading.Lock()
        self._collections: dict[str, EdgeCollection] = {}
        self._closed = False

    # ------------------------------------------------------------------ plumbing
    def _config(self, spec: CollectionSpec, path: Path) -> qe.EdgeConfig:
        """The shard's configuration: dense vectors stored as float16 (half the memory of float32;
        cosine ranks of unit vectors are unchanged to ~1e-3) in a new shard, as stored in an older
        one (a shard's datatype cannot change); kept in the page cache (``Memory.Cached``)."""
        sparse = {SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)} if spec.sparse else None
        dense = qe.EdgeVectorParams(
            size=spec.dense_dim,
            distance=qe.Distance.Cosine,
            datatype=_stored_datatype(path),
            memory=VECTOR_MEMORY,
        )
        return qe.EdgeConfig(
            vectors={DENSE: dense},
            sparse_vectors=sparse,
            # Qdrant defaults, but leave a core to the server while the child process builds HNSW.
            hnsw_config=qe.HnswIndexConfig(
                m=16,
                ef_construct=100,
                full_scan_threshold=10_000,
                max_indexing_threads=max(1, (os.cpu_count() or 2) - 1),
            ),
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=self._threshold_kb),
        )

    def _closed_error(self) -> ServiceUnavailableError:
        return ServiceUnavailableError(
            "Vector store is closed", code=_CODE, suggestion="Restart the service to reopen the stores."
        )

    def _get(self, name: str) -> EdgeCollection:
        with self._lock:
            if self._closed:
                raise self._closed_error()
            coll = self._collections.get(name)
        if coll is None:
            raise ServiceUnavailableError(
                f"Vector collection '{name}' is not open",
                code=_CODE,
                details={"collection": name},
                suggestion="Call ensure_collection() for it when the service starts.",
            )
        return coll

    @contextmanager
    def _use(self, name: str, op: str) -> Iterator[EdgeCollection]:
        """Lock one collection for one engine call, translating engine errors."""
        coll = self._get(name)
        with coll.lock, _engine(op, name):
            if coll.closed:
                raise self._closed_error()
            yield coll

    def _update(self, coll: EdgeCollection, op: qe.UpdateOperation, *, flush: bool = True) -> None:
        """Apply ``op``; with ``flush`` (and ``sync_writes``), durable when this returns."""
        coll.written_at = time.monotonic()
        if coll.unflushed_since is None:
            coll.unflushed_since = coll.written_at
        coll.shard.update(op)
        if coll.journal is not None:
            coll.journal.append(op)
        if flush and self._sync:
            _sync_wal(coll.path)

    def _check_dim(self, coll: EdgeCollection, vector: Sequence[float]) -> None:
        if len(vector) != coll.spec.dense_dim:
            raise ValidationError(
                f"Dense vector has {len(vector)} dimensions, collection '{coll.spec.name}' expects "
                f"{coll.spec.dense_dim}",
                code="VAL_VECTOR_DIM",
                details={
                    "collection": coll.spec.name,
                    "provided": len(vector),
                    "expected": coll.spec.dense_dim,
                },
                suggestion="Embed with the model the collection was created with.",
            )

    # ------------------------------------------------------------------ VectorStore
    def ensure_collection(self, spec: CollectionSpec) -> None:
        """Create or load the shard (checking its vectors match ``spec``) and any missing indexes."""
        if not _NAME.match(spec.name):
            raise ValidationError(
                f"Invalid collection name '{spec.name}'",
                code="VAL_COLLECTION_NAME",
                details={"provided": spec.name, "pattern": _NAME.pattern},
                suggestion="Use 1-64 letters, digits, '_' or '-', starting with a letter or digit.",
            )
        with self._lock:
            if self._closed:
                raise self._closed_error()
            coll = self._collections.get(spec.name)
            if coll is None:
                path = self._root / spec.name
                with _engine("open", spec.name):
                    self._shards.recover(spec.name)
                    if (path / "edge_config.json").exists():
                        shard = qe.EdgeShard.load(str(path), self._config(spec, path))
                    else:
                        shard = qe.EdgeShard.create(str(path), self._config(spec, path))
                coll = self._collections[spec.name] = EdgeCollection(spec, path, shard)
                page_out(path, _LOADED)
        with self._use(spec.name, "ensure_collection") as coll:
            if (coll.spec.dense_dim, coll.spec.sparse) != (spec.dense_dim, spec.sparse):
                raise ValidationError(
                    f"Collection '{spec.name}' is already open with another vector layout",
                    code="VAL_COLLECTION_SPEC",
                    details={"collection": spec.name},
                    suggestion="Use one CollectionSpec per collection.",
                )
            coll.spec = spec
            self._index(coll)
        if spec.context:
            self.ensure_collection(replace(spec, name=_context_name(spec.name), context=False))

    def _index(self, coll: EdgeCollection) -> None:
        """Create the spec's payload indexes once the collection holds points; caller holds the lock.

        An empty collection gets none yet, and loses any it has: the engine keeps ~5 MB of every
        index of a segment resident, so the two code collections of a store that indexed no code
        cost 70 MB. The first upsert creates them (:meth:`upsert`), under the same lock.
        """
        info = coll.shard.info()
        existing = set(info.payload_schema)
        if not info.points_count:
            for key in existing:
                self._update(coll, qe.UpdateOperation.delete_field_index(key))
            coll.indexed = False
            return
        on_disk = set(coll.spec.disk_indexes)
        wanted: list[tuple[str, Any]] = [
            (k, qe.KeywordIndexParams(on_disk=True) if k in on_disk else qe.PayloadSchemaType.Keyword)
            for k in coll.spec.keyword_indexes
        ]
        wanted += [(k, qe.PayloadSchemaType.Float) for k in coll.spec.float_indexes]
        for key, schema in wanted:
            if key in existing and _on_disk(info.payload_schema[key]) != (key in on_disk):
                # Made before the spec moved it (a store of an earlier version): made again, once;
                # about 1.5 s per index at 100k memories.
                logger.info("vector collection %s: index %s moved %s", coll.spec.name, key,
                            "to disk" if key in on_disk else "to memory")  # fmt: skip
                self._update(coll, qe.UpdateOperation.delete_field_index(key))
                existing.discard(key)
            if key not in existing:
                self._update(coll, qe.UpdateOperation.create_field_index(key, schema))
        coll.indexed = True

    def has_context(self, collection: str) -> bool:
        return self._get(collection).spec.context

    def context_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        wanted: list[qe.PointId] = list(dict.fromkeys(point_id(i) for i in ids))
        if not wanted or not self.has_context(collection):
            return set()
        with self._use(_context_name(collection), "context_ids") as sibling:
            return {str(r.id) for r in sibling.shard.retrieve(wanted, False, False)}

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        with self._use(collection, "upsert") as coll:
            batch = [self._point(coll, p.id, p.payload, p.dense, p.sparse) for p in points]
            if batch:
                self._update(coll, qe.UpdateOperation.upsert_points(batch))
                if not coll.indexed:
                    self._index(coll)  # the first points: now the indexes
        if coll.spec.context:
            self._upsert_context(collection, points)

    def _upsert_context(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Context pairs go to the sibling; a point written without one loses any it had there."""
        with self._use(_context_name(collection), "upsert") as sibling:
            batch = [
                self._point(sibling, p.id, p.payload, p.context_dense, p.context_sparse)
                for p in points
                if p.context_dense is not None or p.context_sparse is not None
            ]
            without: list[qe.PointId] = [
                point_id(p.id) for p in points if p.context_dense is None and p.context_sparse is None
            ]
            stale: list[qe.PointId] = (
                [r.id for r in sibling.shard.retrieve(without, False, False)] if without else []
            )
            if batch:
                self._update(sibling, qe.UpdateOperation.upsert_points(batch), flush=not stale)
                if not sibling.indexed:
                    self._index(sibling)
            if stale:
                self._update(sibling, qe.UpdateOperation.delete_points(stale))

    def _point(
        self,
        coll: EdgeCollection,
        pid: str,
        payload: dict[str, Any],
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
    ) -> qe.Point:
        vector: dict[str, Any] = {}
        if dense is not None:
            self._check_dim(coll, dense)
            if type(dense) is list and (not dense or type(dense[0]) is float):
                vector[DENSE] = dense  # the embedder's lists: ~10 µs a point less than the copy below
            else:
                vector[DENSE] = np.asarray(dense, dtype=np.float32).tolist()  # numpy floats are refused
        if sparse is not None:
            vector[SPARSE] = qe.SparseVector(
                [int(i) for i in sparse.indices], [float(v) for v in sparse.values]
            )
        return qe.Point(point_id(pid), vector, payload)

    def overwrite_payload(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Replace payloads, keeping vectors; unknown ids are skipped (the engine would fail midway)."""
        with self._use(collection, "overwrite_payload") as coll:
            wanted: list[qe.PointId] = [point_id(p.id) for p in points]
            known = {str(r.id) for r in coll.shard.retrieve(wanted, False, False)}
            for pid, point in zip(wanted, points, strict=True):
                if pid in known:
                    op = qe.UpdateOperation.overwrite_payload([pid], point.payload)
                    self._update(coll, op, flush=False)
            if self._sync and known:
                _sync_wal(coll.path)
        if coll.spec.context:
            self.overwrite_payload(_context_name(collection), points)

    def retrieve(self, collection: str, ids: Sequence[str], *, with_dense: bool = False) -> list[VectorPoint]:
        """Points in the order asked (the engine returns them sorted by id), unknown ids left out."""
        wanted: list[qe.PointId] = list(dict.fromkeys(point_id(i) for i in ids))
        if not wanted:
            return []
        with self._use(collection, "retrieve") as coll:
            records = coll.shard.retrieve(wanted, True, with_dense)  # with_vector is required at runtime
        found = {
            str(r.id): VectorPoint(str(r.id), r.payload or {}, dense=_dense_of(r.vector)) for r in records
        }
        return [found[i] for i in map(str, wanted) if i in found]

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        wanted: list[qe.PointId] = [point_id(i) for i in ids]
        if wanted:
            with self._use(collection, "delete") as coll:
                self._update(coll, qe.UpdateOperation.delete_points(wanted))
            if coll.spec.context:
                self.delete(_context_name(collection), ids)

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
        context: bool = False,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        if context and not self.has_context(collection):
            return []
        query = qe.Query.Nearest([float(x) for x in vector], using=DENSE)
        name = _context_name(collection) if context else collection
        return self._query(name, query, limit, flt, check=vector, payload=payload)

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
        """BM25: documents carry term frequencies, the IDF modifier weights them at query time."""
        if not vector.indices or (context and not self.has_context(collection)):
            return []
        sparse = qe.SparseVector([int(i) for i in vector.indices], [float(v) for v in vector.values])
        name = _context_name(collection) if context else collection
        return self._query(name, qe.Query.Nearest(sparse, using=SPARSE), limit, flt, payload=payload)

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

    def optimize(self, collection: str) -> bool:
        """Merge segments and build HNSW (the context sibling too); True when something changed."""
        context = self._get(collection).spec.context
        changed = self._optimize_one(collection)
        with self._lock:
            closed = self._closed  # shutdown may have stopped the first build
        if context and not closed:
            changed = self._optimize_one(_context_name(collection)) or changed
        return changed

    def _optimize_one(self, collection: str) -> bool:
        """Merge segments and build HNSW; True when something changed.

        Small collections (dense vectors under the indexing threshold, so no HNSW) are optimised in
        place in milliseconds. Larger ones are copied (lock held for a flush and a copy), optimised by
        a niced child process while searches and writes go on here (writes are journalled), then
        swapped in under the lock with the journal replayed; a crash at any point leaves one complete
        shard (see :mod:`.qdrant_edge_optimize`). A second call while one runs returns False at once.
        """
        with self._use(collection, "optimize") as coll:
            if coll.journal is not None:
                return False
            if coll.shard.info().points_count * coll.spec.dense_dim * 4 < self._threshold_kb * 1024:
                return bool(coll.shard.optimize())
            work = self._shards.copy(coll)
        try:
            if not self._optimize_copy(coll, work):
                return False
            with _engine("optimize", collection):
                swapped = self._shards.swap(coll, work)
            if swapped:
                page_out(coll.path, _LOADED)
            return swapped
        finally:
            self._shards.finish(coll, work)

    def _optimize_copy(self, coll: EdgeCollection, work: Path) -> bool:
        """The child-process build, on its own so tests can act while it runs."""
        with _engine("optimize", coll.spec.name):
            return self._shards.build(coll, work)

    def size_bytes(self) -> int:
        """Allocated bytes (WAL files are sparse: 32 MB apparent, a few KB used)."""
        total = 0
        for folder, _, files in os.walk(self._root):
            for name in files:
                try:
                    total += os.stat(os.path.join(folder, name)).st_blocks * 512
                except FileNotFoundError:  # a swap or WAL rotation removed it meanwhile
                    continue
        return total

    def upkeep(self) -> bool:
        """Background upkeep of the collections written since the last call (housekeeping calls
        it every 2 s): page out the WAL written since (append-only: never read back but at load);
        flush the segments once writes are quiet for ``QUIET_SECONDS`` or unflushed for
        ``FLUSH_EVERY_SECONDS`` (the WAL made each write durable already: this bounds what a load
        replays); page out the payload index files once quiet for ``INDEX_QUIET_SECONDS``
        (searches do not read them). Returns whether writes went quiet (for
        ``RELEASE_QUIET_SECONDS``) since the last call."""
        now = time.monotonic()
        with self._lock:
            colls = [c for c in self._collections.values() if not c.closed]
        went_quiet = False
        for coll in colls:
            written, unflushed = coll.written_at, coll.unflushed_since
            if written is None:
                continue
            idle = now - written
            quiet = idle >= QUIET_SECONDS
            if unflushed is not None and (quiet or now - unflushed >= FLUSH_EVERY_SECONDS):
                with coll.lock, _engine("flush", coll.spec.name):
                    if not coll.closed and coll.unflushed_since is not None:
                        coll.unflushed_since = None
                        coll.shard.flush()
            if coll.wal_paged != written:
                coll.wal_paged = written
                page_out(coll.path, _WAL)
            if idle >= RELEASE_QUIET_SECONDS and coll.quiet_seen != written:
                coll.quiet_seen = written
                went_quiet = True
            if quiet and idle >= INDEX_QUIET_SECONDS:
                with coll.lock:  # writes set it under the lock: one that came meanwhile stays
                    if coll.written_at == written:
                        coll.written_at = None
                page_out(coll.path, _INDEX_FILES)  # the WAL went out above
        return went_quiet

    def checkpoint(self) -> None:
        """Flush every shard's segments and sync its WAL, each under its lock."""
        with self._lock:
            colls = [c for c in self._collections.values() if not c.closed]
        for coll in colls:
            with coll.lock, _engine("flush", coll.spec.name):
                if coll.closed:
                    continue
                coll.shard.flush()
                coll.unflushed_since = None
                _sync_wal(coll.path)

    def health(self) -> ComponentHealth:
        try:
            with self._lock:
                names = sorted(self._collections) if not self._closed else None
            if names is None:
                raise self._closed_error()
            counts = {name: self.count(name) for name in names}
        except MemoryServiceError as exc:
            return ComponentHealth("vectors", "unavailable", "qdrant-edge", detail=exc.message)
        optimizing = [n for n in names if self._collections[n].journal is not None]
        return ComponentHealth(
            "vectors", "ok", "qdrant-edge", extra={"collections": counts, "optimizing": optimizing}
        )

    def close(self) -> None:
        """Stop any optimizer child, then flush and close every shard; later calls raise."""
        with self._lock:
            self._closed = True
            colls = list(self._collections.values())
        failures: list[ServiceUnavailableError] = []
        for coll in colls:
            with coll.lock:
                self._shards.stop(coll)
                if coll.closed:
                    continue
                coll.closed = True
                try:
                    with _engine("close", coll.spec.name):
                        coll.shard.flush()
                        coll.shard.close()
                except ServiceUnavailableError as exc:  # close the others anyway
                    failures.append(exc)
        if failures:
            raise failures[0]


def _on_disk(index: Any) -> bool:
    """Whether an existing payload index (``ShardInfo.payload_schema``'s value) is kept on disk."""
    return getattr(getattr(index, "params", None), "on_disk", None) is True


def _dense_of(vector: Any) -> list[float] | None:
    """The dense vector of a retrieved point (named vectors come back as a dict), if it has one."""
    dense = vector.get(DENSE) if isinstance(vector, dict) else None
    return [float(x) for x in dense] if isinstance(dense, list) else None
