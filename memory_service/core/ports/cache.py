"""The cache port: namespaced bytes with a time to live."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memory_service.core.ports.health import ComponentHealth


@runtime_checkable
class Cache(Protocol):
    """A key/value cache with optional TTL (embeddings by content hash, search results)."""

    def get(self, namespace: str, key: str) -> bytes | None: ...

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]: ...

    def set(self, namespace: str, key: str, value: bytes, ttl_seconds: float | None = None) -> None: ...

    def set_many(self, namespace: str, items: dict[str, bytes], ttl_seconds: float | None = None) -> None: ...

    def delete_namespace(self, namespace: str) -> int: ...

    def incr(self, namespace: str, key: str) -> int:
        """Add one to a counter (atomically, for every process sharing the cache) and return it;
        a missing counter starts from 0. ``get`` reads it as ASCII digits."""
        ...

    def stats(self) -> dict[str, float]:
        """hits, misses, hit_rate, entries."""
        ...

    def size_bytes(self) -> int: ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...
