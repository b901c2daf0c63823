"""Embedded cache and audit log, as tables of the local SQLite file (the outbox queue, re-exported
here, is in :mod:`.local_queue`).

The connection, schema and durability settings are :class:`~.local_db.LocalDB`'s; each store here
retains it and releases it on ``close()``. Every ``sqlite3.Error`` becomes
:class:`ServiceUnavailableError` with code ``SVC_LOCAL_STORE``.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import AuditEvent, AuditQuery, ComponentHealth
from memory_service.core.records import RECORD_LOST
from memory_service.stores.local.db import LocalDB, _chunks, _marks, _Store
from memory_service.stores.local.queue import LocalQueue

__all__ = ["LocalAuditLog", "LocalCache", "LocalQueue"]


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


class LocalAuditLog(_Store):
    """Append-only audit table; triggers abort any UPDATE or DELETE, whoever issues it."""

    def append(self, events: Sequence[AuditEvent]) -> None:
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        rows = [
            (
                e.timestamp or now,
                e.operation,
                e.entity_type,
                e.entity_id,
                e.actor,
                json.dumps(e.details, sort_keys=True, default=str),
            )
            for e in events
        ]
        with self._db.transaction("audit.append") as conn:
            conn.executemany(
                "INSERT INTO audit(timestamp, operation, entity_type, entity_id, actor, details)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def count(self, entity_id: str | None = None) -> int:
        where, args = ("WHERE entity_id = ?", (entity_id,)) if entity_id is not None else ("", ())
        with self._db.cursor("audit.count") as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM audit {where}", args).fetchone()[0])

    def list(self, entity_id: str | None = None, limit: int = 100) -> list[AuditEvent]:
        """The most recent ``limit`` events, newest first."""
        where, args = ("WHERE entity_id = ?", (entity_id,)) if entity_id is not None else ("", ())
        with self._db.cursor("audit.list") as conn:
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM audit {where} ORDER BY seq DESC LIMIT ?", (*args, limit)
            ).fetchall()
        return [_event(r) for r in rows]

    def query(self, q: AuditQuery) -> tuple[builtins.list[AuditEvent], int]:
        conditions: list[str] = []
        args: list[Any] = []
        for column, value in (
            ("entity_id", q.entity_id),
            ("entity_type", q.entity_type),
            ("operation", q.operation),
            ("actor", q.actor),
        ):
            if value is not None:
                conditions.append(f"{column} = ?")
                args.append(value)
        if q.since is not None:
            conditions.append("timestamp >= ?")
            args.append(q.since)
        if q.until is not None:
            conditions.append("timestamp <= ?")
            args.append(q.until)
        where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        page_where = where
        page_args = list(args)
        if q.before_seq is not None:
            page_where = f"{where} AND seq < ?" if where else "WHERE seq < ?"
            page_args.append(q.before_seq)
        with self._db.cursor("audit.query") as conn:
            total = int(conn.execute(f"SELECT COUNT(*) FROM audit {where}", args).fetchone()[0])
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS}, seq FROM audit {page_where} ORDER BY seq DESC LIMIT ?",
                (*page_args, q.limit),
            ).fetchall()
        return [_event(r) for r in rows], total

    def memory_ids(self) -> set[str]:
        with self._db.cursor("audit.memory_ids") as conn:
            rows = conn.execute(
                "SELECT DISTINCT entity_id FROM audit WHERE entity_type = 'memory'"
                " EXCEPT SELECT entity_id FROM audit WHERE operation = ? AND entity_type = 'memory'",
                (RECORD_LOST,),
            ).fetchall()
        return {str(r[0]) for r in rows}

    def created_with_edges(self) -> builtins.list[tuple[str, dict[str, Any]]]:
        with self._db.cursor("audit.created_with_edges") as conn:
            rows = conn.execute(
                "SELECT entity_id, details FROM audit WHERE operation = 'create'"
                " AND entity_type = 'memory' AND details LIKE '%\"edges\"%' ORDER BY seq"
            ).fetchall()
        return [(str(r[0]), json.loads(r[1])) for r in rows]


_EVENT_COLUMNS = "operation, entity_type, entity_id, actor, details, timestamp"


def _event(row: Sequence[Any]) -> AuditEvent:
    """An audit row, selected as _EVENT_COLUMNS (then optionally ``seq``), as an event."""
    seq = int(row[6]) if len(row) > 6 else None
    return audit_event(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], seq)
