"""Embedded cache, outbox queue and audit log in one SQLite file (``data_dir/local.sqlite3``).

Why SQLite: it is in the standard library, crash-safe, and one file per data directory is easy to
back up. Choices that matter:

* **WAL + ``synchronous=FULL``.** The outbox and the audit log are part of "nothing is acknowledged
  that is not durable". In WAL mode ``NORMAL`` survives an application crash but may roll back the
  last commits on power loss or an OS crash; ``FULL`` fsyncs the WAL at every commit, so a returned
  ``enqueue``/``append`` is on disk. Writes are batched (``set_many``, ``enqueue`` of a list, ``append``
  of a list), so the price is one fsync per batch, not per row.
* **One connection behind a lock** (``check_same_thread=False``). Every operation is a short
  statement (tens of microseconds, plus the fsync of a commit), so serialising them costs little,
  while connection-per-thread would leave connections of finished worker threads open and make
  ``close()`` unable to close them (a connection may only be closed by its own thread).
* ``isolation_level=None`` (autocommit) with explicit ``BEGIN IMMEDIATE`` for multi-statement writes,
  so a transaction never starts implicitly and stays open.

Every ``sqlite3.Error`` becomes :class:`ServiceUnavailableError` with code ``SVC_LOCAL_STORE``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import AuditEvent, ComponentHealth, QueueMessage

DB_FILENAME = "local.sqlite3"
# Stay far below SQLITE_MAX_VARIABLE_NUMBER (32766 since 3.32, 999 before) in ``IN (...)`` lists.
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, expires_at REAL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cache_expiry ON cache(expires_at) WHERE expires_at IS NOT NULL;

-- AUTOINCREMENT: ids of acked (deleted) messages are never reused, so a late ack or fail from a
-- stale worker can never hit a newer message.
CREATE TABLE IF NOT EXISTS queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'inflight', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    enqueued_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS queue_claim ON queue(topic, state, id);

CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    timestamp TEXT NOT NULL,
    operation TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    actor TEXT NOT NULL,
    details TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_entity ON audit(entity_id, seq);
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only: UPDATE is forbidden'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit log is append-only: DELETE is forbidden'); END;
"""


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


class LocalDB:
    """Owns the SQLite connection and the schema; shared by the cache, queue and audit log.

    Each store retains the database and releases it on ``close()``; the connection closes when the
    last one lets go, so closing the cache does not break the queue that shares the file.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._users = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(self.path), check_same_thread=False, isolation_level=None, timeout=30.0
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._conn.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise self._error("open", exc) from exc

    @classmethod
    def in_dir(cls, data_dir: Path) -> LocalDB:
        """The service's database: ``data_dir/local.sqlite3``."""
        return cls(Path(data_dir) / DB_FILENAME)

    def _error(self, operation: str, exc: BaseException) -> ServiceUnavailableError:
        return ServiceUnavailableError(
            f"Local store failed during {operation}: {exc}",
            code="SVC_LOCAL_STORE",
            details={"path": str(self.path), "operation": operation, "error": str(exc)},
            suggestion="Check that the data directory is writable and the disk is not full; "
            "if the file is corrupt, restore it from a backup (memory-cli restore).",
        )

    @contextmanager
    def cursor(self, operation: str) -> Iterator[sqlite3.Connection]:
        """The connection, held under the lock, with sqlite errors translated."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._error(operation, exc) from exc

    @contextmanager
    def transaction(self, operation: str) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error), under the lock."""
        with self.cursor(operation) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
            conn.execute("COMMIT")

    def retain(self) -> None:
        with self._lock:
            self._users += 1

    def release(self) -> None:
        """Drop one user; the connection closes when nobody uses it any more."""
        with self._lock:
            self._users = max(0, self._users - 1)
            if self._users == 0:
                self.close()

    def size_bytes(self) -> int:
        """Bytes on disk: the database file plus its WAL."""
        wal = self.path.with_name(self.path.name + "-wal")
        return sum(p.stat().st_size for p in (self.path, wal) if p.exists())

    def close(self) -> None:
        with self._lock:
            self._conn.close()  # idempotent in sqlite3


class _Store:
    """Common part of the three stores: a retained :class:`LocalDB`, closed once."""

    def __init__(self, db: LocalDB) -> None:
        self._db = db
        self._closed = False
        db.retain()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._db.release()


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
        with self._db.transaction("cache.set_many") as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO cache(namespace, key, value, expires_at) VALUES (?, ?, ?, ?)", rows
            )

    def delete_namespace(self, namespace: str) -> int:
        with self._db.transaction("cache.delete_namespace") as conn:
            return conn.execute("DELETE FROM cache WHERE namespace = ?", (namespace,)).rowcount

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


class LocalQueue(_Store):
    """Durable at-least-once outbox: pending -> inflight -> (acked = deleted | pending | dead)."""

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[int]:
        now = time.time()
        ids: list[int] = []
        with self._db.transaction("queue.enqueue") as conn:
            for payload in payloads:
                cur = conn.execute(
                    "INSERT INTO queue(topic, payload, enqueued_at, updated_at) VALUES (?, ?, ?, ?)",
                    (topic, json.dumps(payload), now, now),
                )
                ids.append(int(cur.lastrowid or 0))
        return ids

    def claim(self, topic: str, limit: int = 100) -> list[QueueMessage]:
        with self._db.transaction("queue.claim") as conn:
            rows = conn.execute(
                "SELECT id, topic, payload, attempts, last_error FROM queue"
                " WHERE topic = ? AND state = 'pending' ORDER BY id LIMIT ?",
                (topic, limit),
            ).fetchall()
            now = time.time()
            for part in _chunks([r[0] for r in rows]):
                conn.execute(
                    f"UPDATE queue SET state = 'inflight', updated_at = ? WHERE id IN ({_marks(len(part))})",
                    (now, *part),
                )
        return [QueueMessage(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]

    def ack(self, ids: Sequence[int]) -> None:
        with self._db.transaction("queue.ack") as conn:
            for part in _chunks(list(ids)):
                conn.execute(f"DELETE FROM queue WHERE id IN ({_marks(len(part))})", tuple(part))

    def fail(self, message_id: int, error: str, *, max_attempts: int = 5) -> None:
        with self._db.transaction("queue.fail") as conn:
            conn.execute(
                "UPDATE queue SET attempts = attempts + 1, last_error = ?, updated_at = ?,"
                " state = CASE WHEN attempts + 1 >= ? THEN 'dead' ELSE 'pending' END"
                " WHERE id = ? AND state != 'dead'",
                (error, time.time(), max_attempts, message_id),
            )

    def release_inflight(self) -> int:
        with self._db.transaction("queue.release_inflight") as conn:
            return conn.execute(
                "UPDATE queue SET state = 'pending', updated_at = ? WHERE state = 'inflight'", (time.time(),)
            ).rowcount

    def dead(self, topic: str | None = None, limit: int = 100) -> list[QueueMessage]:
        """Dead letters (for statistics and repair), oldest first."""
        where, args = ("AND topic = ?", (topic,)) if topic is not None else ("", ())
        with self._db.cursor("queue.dead") as conn:
            rows = conn.execute(
                "SELECT id, topic, payload, attempts, last_error FROM queue"
                f" WHERE state = 'dead' {where} ORDER BY id LIMIT ?",
                (*args, limit),
            ).fetchall()
        return [QueueMessage(r[0], r[1], json.loads(r[2]), r[3], r[4]) for r in rows]

    def retry_dead(self, topic: str | None = None) -> int:
        """Give dead letters another round of attempts (after the cause was fixed)."""
        where, args = ("AND topic = ?", (topic,)) if topic is not None else ("", ())
        with self._db.transaction("queue.retry_dead") as conn:
            return conn.execute(
                "UPDATE queue SET state = 'pending', attempts = 0, updated_at = ?"
                f" WHERE state = 'dead' {where}",
                (time.time(), *args),
            ).rowcount

    def counts(self, topic: str | None = None) -> dict[str, int]:
        """``pending``, ``inflight`` and ``failed`` (messages in the dead state)."""
        where, args = ("WHERE topic = ?", (topic,)) if topic is not None else ("", ())
        with self._db.cursor("queue.counts") as conn:
            rows = conn.execute(f"SELECT state, COUNT(*) FROM queue {where} GROUP BY state", args).fetchall()
        by_state = dict(rows)
        return {
            "pending": by_state.get("pending", 0),
            "inflight": by_state.get("inflight", 0),
            "failed": by_state.get("dead", 0),
        }

    def health(self) -> ComponentHealth:
        try:
            counts = self.counts()
        except ServiceUnavailableError as exc:
            return ComponentHealth("queue", "unavailable", "sqlite", exc.message)
        if counts["failed"]:
            detail = f"{counts['failed']} dead message(s): see dead() and retry_dead()"
            return ComponentHealth("queue", "degraded", "sqlite", detail, extra=dict(counts))
        return ComponentHealth("queue", "ok", "sqlite", str(self._db.path), extra=dict(counts))


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
                "SELECT operation, entity_type, entity_id, actor, details, timestamp FROM audit"
                f" {where} ORDER BY seq DESC LIMIT ?",
                (*args, limit),
            ).fetchall()
        return [AuditEvent(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]
