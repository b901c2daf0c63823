"""The embedded cache, a table of the local SQLite file.

The connection, schema and durability settings are :class:`~.db.LocalDB`'s; the store retains it
and releases it on ``close()``. Every ``sqlite3.Error`` becomes :class:`ServiceUnavailableError`
with code ``SVC_LOCAL_STORE``.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Sequence

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth
from memory_service.stores.local.db import LocalDB, _chunks, _marks, _Store


class LocalCache(_Store):
    """Key/value cache with optional TTL; expired rows read as misses and are purged on open."""

    def __init__(self, db: LocalDB) -> None:
        super().__init__(db)
        self._hits = 0
        self._misses = 0
        self._counter_lock = threading.Lock()
        self.purge_expired()

    def _count(self, hits: int, misses: int) -> None:
        with self._counter_lock:
            self._hits += hits
            self._misses += misses

    def get(self, namespace: str, key: str) -> bytes | None:
        return self.get_many(namespace, [key]).get(key)

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        now = time.time()
        with self._db.cursor("cache.get_many") as conn:
            for part in _chunks(wanted):
                rows = conn.execute(
                    f"SELECT key, value FROM cache WHERE namespace = ? AND key IN ({_marks(len(part))})"
                    " AND (expires_at IS NULL OR expires_at > ?)",
                    (namespace, *part, now),
                )
                found.update((k, bytes(v)) for k, v in rows)
        self._count(len(found), len(wanted) - len(found))
        return found

    def set(self, namespace: str, key: str, value: bytes, ttl_seconds: float | None = None) -> None:
        self.set_many(namespace, {key: value}, ttl_seconds)

    def set_many(self, namespace: str, items: dict[str, bytes], ttl_seconds: float | None = None) -> None:
        if not items:
            return
        expires = None if ttl_seconds is None else time.time() + ttl_seconds
        rows = [(namespace, k, sqlite3.Binary(v), expires) for k, v in items.items()]
        with self._db.transaction("cache.set_many", durable=False) as conn:  # a lost row is a miss
            conn.executemany(
                "INSERT OR REPLACE INTO cache(namespace, key, value, expires_at) VALUES (?, ?, ?, ?)", rows
            )

    def delete_namespace(self, namespace: str) -> int:
        with self._db.transaction("cache.delete_namespace") as conn:
            return conn.execute("DELETE FROM cache WHERE namespace = ?", (namespace,)).rowcount

    def incr(self, namespace: str, key: str) -> int:
        with self._db.transaction("cache.incr") as conn:
            row = conn.execute(
                "INSERT INTO cache(namespace, key, value, expires_at) VALUES (?, ?, CAST('1' AS BLOB), NULL)"
                " ON CONFLICT(namespace, key) DO UPDATE SET expires_at = NULL, value = CAST(CAST("
                "CAST(CAST(value AS TEXT) AS INTEGER) + 1 AS TEXT) AS BLOB) RETURNING value",
                (namespace, key),
            ).fetchone()
        return int(bytes(row[0]))

    def purge_expired(self) -> int:
        """Delete expired entries (reads already ignore them); returns how many went."""
        with self._db.transaction("cache.purge_expired") as conn:
            return conn.execute("DELETE FROM cache WHERE expires_at <= ?", (time.time(),)).rowcount

    def _entries(self) -> int:
        with self._db.cursor("cache.stats") as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM cache WHERE expires_at IS NULL OR expires_at > ?", (time.time(),)
            ).fetchone()
        return int(row[0])

    def stats(self) -> dict[str, float]:
        """Hits and misses count keys since this process opened the cache (not persisted)."""
        with self._counter_lock:
            hits, misses = self._hits, self._misses
        total = hits + misses
        return {
            "hits": float(hits),
            "misses": float(misses),
            "hit_rate": hits / total if total else 0.0,
            "entries": float(self._entries()),
        }

    def size_bytes(self) -> int:
        """Bytes held by cache rows (the file is shared; see :meth:`LocalDB.size_bytes`)."""
        with self._db.cursor("cache.size_bytes") as conn:
            row = conn.execute(
                "SELECT COALESCE(SUM(LENGTH(value) + LENGTH(key) + LENGTH(namespace)), 0) FROM cache"
            ).fetchone()
        return int(row[0])

    def health(self) -> ComponentHealth:
        try:
            stats = self.stats()
        except ServiceUnavailableError as exc:
            return ComponentHealth("cache", "unavailable", "sqlite", exc.message)
        return ComponentHealth("cache", "ok", "sqlite", str(self._db.path), extra=stats)
