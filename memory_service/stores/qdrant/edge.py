"""The embedded VectorStore: one qdrant-edge ``EdgeShard`` per collection under ``root/<collection>/``.

Facts measured on qdrant-edge-py 0.9.0 (2 cores) that shape this module:

* The binding holds the GIL for every call, ``optimize()`` included: an in-process HNSW build
  (4.7 s at 12k x 384) froze every Python thread, the MCP event loop too. Large collections are
  therefore optimised in a child process on a copy of the shard; writes made meanwhile are journalled
  and replayed onto the optimised copy, which is then swapped in (see :mod:`.edge_optimize`).
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

import logging
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import CollectionSpec, ComponentHealth, SparseVector, VectorPoint
from memory_service.resident import page_out
from memory_service.stores.qdrant.edge_optimize import EdgeCollection
from memory_service.stores.qdrant.edge_reads import EdgeReads
from memory_service.stores.qdrant.edge_shard import (
    DENSE,
    INDEX_FILES,
    LOADED,
    SPARSE,
    WAL,
    engine,
    index_on_disk,
    sync_wal,
)
from memory_service.stores.qdrant.ids import point_id

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # no dots: ".<name>.*" dirs are ours

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


class EdgeVectorStore(EdgeReads):
    """VectorStore on qdrant-edge, and :class:`~memory_service.core.ports.Maintainable`: thread-safe;
    one instance per data directory per process. Built with ``root`` and the options of
    :class:`.edge_shard.EdgeShards`; its reads are :class:`.edge_reads.EdgeReads`."""

    # ------------------------------------------------------------------ collections
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
                with engine("open", spec.name):
                    self._shards.recover(spec.name)
                    if (path / "edge_config.json").exists():
                        shard = qe.EdgeShard.load(str(path), self._config(spec, path))
                    else:
                        shard = qe.EdgeShard.create(str(path), self._config(spec, path))
                coll = self._collections[spec.name] = EdgeCollection(spec, path, shard)
                page_out(path, LOADED)
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
            if key in existing and index_on_disk(info.payload_schema[key]) != (key in on_disk):
                # Made before the spec moved it (a store of an earlier version): made again, once;
                # about 1.5 s per index at 100k memories.
                logger.info("vector collection %s: index %s moved %s", coll.spec.name, key,
                            "to disk" if key in on_disk else "to memory")  # fmt: skip
                self._update(coll, qe.UpdateOperation.delete_field_index(key))
                existing.discard(key)
            if key not in existing:
                self._update(coll, qe.UpdateOperation.create_field_index(key, schema))
        coll.indexed = True

    # ------------------------------------------------------------------ writes
    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        with self._use(collection, "upsert") as coll:
            batch = [self._point(coll, p.id, p.payload, p.dense, p.sparse) for p in points]
            if batch:
                self._update(coll, qe.UpdateOperation.upsert_points(batch))
                if not coll.indexed:
                    self._index(coll)  # the first points: now the indexes

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
                sync_wal(coll.path)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        wanted: list[qe.PointId] = [point_id(i) for i in ids]
        if wanted:
            with self._use(collection, "delete") as coll:
                self._update(coll, qe.UpdateOperation.delete_points(wanted))

    # ------------------------------------------------------------------ upkeep
    def optimize(self, collection: str) -> bool:
        """Merge segments and build HNSW; True when something changed.

        Small collections (dense vectors under the indexing threshold, so no HNSW) are optimised in
        place in milliseconds. Larger ones are copied (lock held for a flush and a copy), optimised by
        a niced child process while searches and writes go on here (writes are journalled), then
        swapped in under the lock with the journal replayed; a crash at any point leaves one complete
        shard (see :mod:`.edge_optimize`). A second call while one runs returns False at once.
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
            with engine("optimize", collection):
                swapped = self._shards.swap(coll, work)
            if swapped:
                page_out(coll.path, LOADED)
            return swapped
        finally:
            self._shards.finish(coll, work)

    def _optimize_copy(self, coll: EdgeCollection, work: Path) -> bool:
        """The child-process build, on its own so tests can act while it runs."""
        with engine("optimize", coll.spec.name):
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
                with coll.lock, engine("flush", coll.spec.name):
                    if not coll.closed and coll.unflushed_since is not None:
                        coll.unflushed_since = None
                        coll.shard.flush()
            if coll.wal_paged != written:
                coll.wal_paged = written
                page_out(coll.path, WAL)
            if idle >= RELEASE_QUIET_SECONDS and coll.quiet_seen != written:
                coll.quiet_seen = written
                went_quiet = True
            if quiet and idle >= INDEX_QUIET_SECONDS:
                with coll.lock:  # writes set it under the lock: one that came meanwhile stays
                    if coll.written_at == written:
                        coll.written_at = None
                page_out(coll.path, INDEX_FILES)  # the WAL went out above
        return went_quiet

    def checkpoint(self) -> None:
        """Flush every shard's segments and sync its WAL, each under its lock."""
        with self._lock:
            colls = [c for c in self._collections.values() if not c.closed]
        for coll in colls:
            with coll.lock, engine("flush", coll.spec.name):
                if coll.closed:
                    continue
                coll.shard.flush()
                coll.unflushed_since = None
                sync_wal(coll.path)

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
                    with engine("close", coll.spec.name):
                        coll.shard.flush()
                        coll.shard.close()
                except ServiceUnavailableError as exc:  # close the others anyway
                    failures.append(exc)
        if failures:
            raise failures[0]
