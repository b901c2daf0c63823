"""The vector store port: collections of dense + sparse points with a payload."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory_service.core.ports.health import ComponentHealth


@dataclass(frozen=True)
class SparseVector:
    """A sparse lexical vector (BM25-style term weights)."""

    indices: list[int]
    values: list[float]


@dataclass
class VectorPoint:
    """A point to upsert: id, optional dense vector, optional sparse vector, JSON payload."""

    id: str
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: SparseVector | None = None


@dataclass
class ScoredPoint:
    """A search hit: id, raw engine score (cosine for dense, BM25 dot for sparse) and payload."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class PayloadFilter:
    """A conjunction of payload conditions, translated by each adapter.

    ``equals``: field == value; ``any_of``: field in values; ``ranges``: field within
    [gte, lte] (numbers; None = open); ``not_equals``: field != value; ``also_any``: more
    (field, values) conditions, each of which holds (several on one list field). On a field that
    holds a list, == and "in" hold when an element does.
    """

    equals: dict[str, Any] = field(default_factory=dict)
    any_of: dict[str, Sequence[Any]] = field(default_factory=dict)
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    not_equals: dict[str, Any] = field(default_factory=dict)
    also_any: tuple[tuple[str, Sequence[Any]], ...] = ()


@dataclass(frozen=True)
class CollectionSpec:
    """A collection: dense dimension, whether it has a sparse vector, payload fields to index."""

    name: str
    dense_dim: int
    sparse: bool = True
    keyword_indexes: tuple[str, ...] = ()
    float_indexes: tuple[str, ...] = ()
    # Keyword fields (of keyword_indexes) whose values are mostly distinct (hashes, keys, threads):
    # an engine that can keeps their index on disk, read through the page cache, instead of in
    # memory (qdrant-edge: ~70 MB for three such fields at 100k memories).
    disk_indexes: tuple[str, ...] = ()


@runtime_checkable
class VectorStore(Protocol):
    """Records and their vectors (source of truth for memory records).

    An embedded engine also builds its indexes and keeps itself in shape from this process: it
    implements :class:`~memory_service.core.ports.maintenance.Maintainable` too. A record's
    vectors read in its thread's context are the core's business (core/context_vectors.py):
    ordinary points of a sibling collection.
    """

    def ensure_collection(self, spec: CollectionSpec) -> None: ...

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None: ...

    def overwrite_payload(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Replace the payload of existing points, keeping their vectors (metadata-only changes)."""
        ...

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_dense: bool = False, payload: bool = True
    ) -> list[VectorPoint]:
        """Points by id with payload; unknown ids are left out. ``with_dense`` also fills ``dense``
        (as stored: cosine collections keep it normalised; None for a point without one); without
        ``payload`` the points carry ``{}`` (which ids exist, for the price of an id lookup)."""
        ...

    def delete(self, collection: str, ids: Sequence[str]) -> None: ...

    def search_dense(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        """Nearest by cosine; without ``payload`` the hits carry ``{}`` (read them by id: cheaper
        for many lists)."""
        ...

    def search_sparse(
        self,
        collection: str,
        vector: SparseVector,
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        payload: bool = True,
    ) -> list[ScoredPoint]: ...

    def scroll(
        self, collection: str, flt: PayloadFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[VectorPoint], str | None]:
        """A page of points (payload only) and the offset of the next page (None at the end)."""
        ...

    def latest(
        self, collection: str, flt: PayloadFilter | None, order_key: str, limit: int
    ) -> list[VectorPoint]:
        """Up to ``limit`` points (payload only) with the highest ``order_key`` (an indexed number),
        highest first."""
        ...

    def count(self, collection: str, flt: PayloadFilter | None = None) -> int: ...

    def size_bytes(self) -> int: ...

    def checkpoint(self) -> None:
        """Make every write so far whole in the store's files (an embedded engine flushes its
        segments and syncs its log), so that a copy of them taken before the next write opens as
        this state (an online backup, with writes paused). Nothing for a server."""
        ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...
