"""The maintenance port: background work an embedded vector engine needs from its host process.

A server builds its indexes and persists its files itself, so only embedded engines implement it
(qdrant-edge: :class:`~memory_service.stores.qdrant.edge.EdgeVectorStore`); housekeeping checks
for it (``isinstance(vectors, Maintainable)``) and skips this work otherwise.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Maintainable(Protocol):
    """Index builds and upkeep that run in this process, called from background work only."""

    def optimize(self, collection: str) -> bool:
        """Build indexes (HNSW). Slow: call it from background work only. True when something
        changed."""
        ...

    def upkeep(self) -> bool:
        """Background upkeep after writes, called by housekeeping every few seconds (cheap when
        nothing was written): the engine persists what its log holds and gives back memory it
        holds in this process and does not read on the search path. Returns whether writes went
        quiet since the last call: the time to give back other memory too."""
        ...
