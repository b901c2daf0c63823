"""Collections on a Qdrant server (used by :mod:`.server`): layout, indexes, size.

The layout is :mod:`.edge`'s, so the two adapters hold the same data the same way: a
``dense`` cosine vector, a ``sparse`` BM25 vector whose IDF the engine applies at query time, and
keyword/float payload indexes. The names are repeated here, not imported: importing the embedded
adapter would load its engine in a process that talks to a server.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from memory_service.core.errors import ValidationError
from memory_service.core.ports import CollectionSpec

DENSE, SPARSE = "dense", "sparse"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # as edge: no dots, no slashes


def check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValidationError(
            f"Invalid collection name '{name}'",
            code="VAL_COLLECTION_NAME",
            details={"provided": name, "pattern": _NAME.pattern},
            suggestion="Use 1-64 letters, digits, '_' or '-', starting with a letter or digit.",
        )


def check_dim(spec: CollectionSpec, vector: Sequence[float]) -> None:
    if len(vector) != spec.dense_dim:
        raise ValidationError(
            f"Dense vector has {len(vector)} dimensions, collection '{spec.name}' expects {spec.dense_dim}",
            code="VAL_VECTOR_DIM",
            details={"collection": spec.name, "provided": len(vector), "expected": spec.dense_dim},
            suggestion="Embed with the model the collection was created with.",
        )


def layout_error(name: str, prefix: str) -> ValidationError:
    return ValidationError(
        f"Collection '{name}' already exists with another vector layout",
        code="VAL_COLLECTION_SPEC",
        details={"collection": name, "prefix": prefix},
        suggestion="Use one CollectionSpec per collection (one embedding model per store), or "
        "another collection prefix.",
    )


def ensure(client: QdrantClient, prefix: str, spec: CollectionSpec, indexing_threshold_kb: int) -> None:
    """Create ``prefix + spec.name`` if absent, check its vectors match, add missing indexes."""
    full = prefix + spec.name
    if not client.collection_exists(full):
        _create(client, full, spec, indexing_threshold_kb)
    info = client.get_collection(full)
    vectors = info.config.params.vectors
    dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
    has_sparse = SPARSE in (info.config.params.sparse_vectors or {})
    if (
        dense is None
        or (dense.size, dense.distance) != (spec.dense_dim, models.Distance.COSINE)
        or has_sparse != spec.sparse
    ):
        raise layout_error(spec.name, prefix)
    existing = set(info.payload_schema)  # local mode keeps none: it asks for them each time
    wanted = [(k, models.PayloadSchemaType.KEYWORD) for k in spec.keyword_indexes]
    wanted += [(k, models.PayloadSchemaType.FLOAT) for k in spec.float_indexes]
    with warnings.catch_warnings():  # local mode warns that it ignores them (a server uses them)
        warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
        for key, schema in wanted:
            if key not in existing:
                client.create_payload_index(full, key, field_schema=schema, wait=True)


def _create(client: QdrantClient, full: str, spec: CollectionSpec, indexing_threshold_kb: int) -> None:
    sparse = {SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)} if spec.sparse else None
    try:
        client.create_collection(
            full,
            vectors_config={DENSE: models.VectorParams(size=spec.dense_dim, distance=models.Distance.COSINE)},
            sparse_vectors_config=sparse,
            hnsw_config=models.HnswConfigDiff(m=16, ef_construct=100, full_scan_threshold=10_000),
            optimizers_config=models.OptimizersConfigDiff(indexing_threshold=indexing_threshold_kb),
        )
    except UnexpectedResponse as exc:
        if exc.status_code != 409:  # 409: another process created it meanwhile
            raise


def disk_bytes(root: str) -> int:
    """Allocated bytes under ``root`` (local mode's SQLite files)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_blocks * 512
            except FileNotFoundError:  # rewritten meanwhile
                continue
    return total


def telemetry_bytes(client: QdrantClient, names: set[str]) -> int:
    """Vectors + payloads of the ``names`` collections by the server's own estimate.

    From its telemetry (detail level 3 lists shards): the shards held by the node that answers,
    so in a cluster this is that node's part.
    """
    data = client.http.service_api.telemetry(details_level=3).result
    total = 0
    for coll in (data.collections.collections or []) if data and data.collections else []:
        if isinstance(coll, models.CollectionTelemetry) and coll.id in names:
            for shard in coll.shards or []:
                if shard.local is not None:
                    total += (shard.local.vectors_size_bytes or 0) + (shard.local.payloads_size_bytes or 0)
    return total


def estimated_bytes(client: QdrantClient, dims: dict[str, int]) -> int:
    """Dense vectors only, from approximate point counts: the fallback when telemetry is refused."""
    return sum(4 * dim * client.count(name, exact=False).count for name, dim in dims.items())
