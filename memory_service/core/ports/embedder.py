"""The embedding ports: dense embeddings and sparse (BM25) encodings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory_service.core.ports.health import ComponentHealth
from memory_service.core.ports.vector import SparseVector


@runtime_checkable
class Embedder(Protocol):
    """Dense text embeddings. ``ready`` is False when no model could be loaded."""

    @property
    def model_name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def ready(self) -> bool: ...

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the model is loaded or failed; True when usable."""
        ...

    def embed_documents(self, texts: Sequence[str], *, remember: bool = True) -> list[list[float]]:
        """Vectors in input order. ``remember``: look the texts up in the shared cache and keep
        their vectors there; False for texts unlikely to come again (a memory's vectors are
        stored with it), which spares the cache's read and commit."""
        ...

    def embed_query(self, text: str) -> list[float]: ...

    def release_memory(self) -> None:
        """Give back buffers that earlier model runs left (housekeeping calls it once writes went
        quiet: a burst of long texts grows them)."""
        ...

    def health(self) -> ComponentHealth: ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Sparse lexical vectors (BM25); needs no model, so it always works."""

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]: ...

    def encode_query(self, text: str) -> SparseVector: ...
