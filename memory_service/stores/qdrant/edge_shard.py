"""qdrant-edge shards as :mod:`.edge` keeps them: configuration, engine errors, the WAL's sync,
the files paged out, and the base of the store (one lock per open collection, see :mod:`.edge`).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import CollectionSpec
from memory_service.stores.qdrant.edge_optimize import EdgeCollection, ShardOptimizer

DENSE, SPARSE = "dense", "sparse"
_CODE = "SVC_VECTOR_STORE"


@contextmanager
def engine(op: str, collection: str) -> Iterator[None]:
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
# Files of a shard that searches do not read (see edge.py's docstring), paged out after writes:
# the WAL, and the storage of the payload indexes of an appendable segment (the engine's blob
# store: page_N, tracker, bitmask, gaps), whose contents searches read from memory. After a load,
# also every payload index (an on-disk one, spec.disk_indexes, faults back the pages searches read)
# and an appendable segment's vector chunks.
INDEX_FILES = re.compile(r"/payload_index/[^/]+/(page_\d+|tracker|bitmask|gaps)\.dat$")
WAL = re.compile(r"/wal/")
LOADED = re.compile(r"/(payload_index|wal)/|/vector_storage[^/]*/vectors/chunk_")


def sync_wal(shard: Path) -> None:
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


class EdgeShards:
    """The open shards of a data directory and their locks: what the store's reads and writes use."""

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
        with coll.lock, engine(op, name):
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
            sync_wal(coll.path)

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


def index_on_disk(index: Any) -> bool:
    """Whether an existing payload index (``ShardInfo.payload_schema``'s value) is kept on disk."""
    return getattr(getattr(index, "params", None), "on_disk", None) is True


def dense_of(vector: Any) -> list[float] | None:
    """The dense vector of a retrieved point (named vectors come back as a dict), if it has one."""
    dense = vector.get(DENSE) if isinstance(vector, dict) else None
    return [float(x) for x in dense] if isinstance(dense, list) else None
