"""The local SQLite file (``data_dir/local.sqlite3``): connection, schema, transactions, errors.

It holds the embedded cache and audit log (:mod:`.local`), the outbox queue (:mod:`.local_queue`,
which owns its table's schema and migration) and the index state (:mod:`.local_index`);
:class:`LocalDB` is the one connection they share.

Why SQLite: it is in the standard library, crash-safe, and one file per data directory is easy to
back up. Choices that matter:

* **WAL + ``synchronous=FULL``.** The outbox and the audit log are part of "nothing is acknowledged
  that is not durable". In WAL mode ``NORMAL`` survives an application crash but may roll back the
  last commits on power loss or an OS crash; ``FULL`` fsyncs the WAL at every commit, so a returned
  ``enqueue``/``append`` is on disk. Writes are batched (``set_many``, ``enqueue`` of a list, ``append``
  of a list), so the price is one fsync per batch, not per row. Cache writes are the exception
  (``transaction(durable=False)``): a cached search result or vector lost to a power cut is a
  miss, so they commit without the fsync (``synchronous=NORMAL`` for that transaction). The
  WAL is appended in order, so the next durable commit's fsync covers them too, and a power cut
  keeps a prefix of the commits: nothing durable is ever lost behind a cache write.
* **One connection behind a lock** (``check_same_thread=False``). Every operation is a short
  statement (tens of microseconds, plus the fsync of a commit), so serialising them costs little,
  while connection-per-thread would leave connections of finished worker threads open and make
  ``close()`` unable to close them (a connection may only be closed by its own thread).
* ``isolation_level=None`` (autocommit) with explicit ``BEGIN IMMEDIATE`` for multi-statement writes,
  so a transaction never starts implicitly and stays open.

Every ``sqlite3.Error`` becomes :class:`ServiceUnavailableError` with code ``SVC_LOCAL_STORE``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_service.core.errors import ServiceUnavailableError

DB_FILENAME = "local.sqlite3"
# Stay far below SQLITE_MAX_VARIABLE_NUMBER (32766 since 3.32, 999 before) in ``IN (...)`` lists.
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, expires_at REAL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cache_expiry ON cache(expires_at) WHERE expires_at IS NOT NULL;

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
CREATE INDEX IF NOT EXISTS audit_operation ON audit(operation, seq);
CREATE INDEX IF NOT EXISTS audit_actor ON audit(actor, seq);
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
        self._depth = 0  # open transactions on the thread holding the lock (nested ones join)
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
            "if the file is corrupt, stop the server and replace it with a backup copy "
            "(memory-cli health shows the state of each store).",
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
    def transaction(self, operation: str, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error), under the lock.

        A transaction opened inside another one on the same thread joins it (the lock is
        reentrant, so no other thread can be in between): the write journal's commit enqueues,
        appends audit events and forgets its entry through the stores' own methods, atomically.
        ``durable=False`` (cache rows only): committed without the fsync; one that joins an outer
        transaction is as durable as that one.
        """
        with self.cursor(operation) as conn:
            if self._depth:
                self._depth += 1
                try:
                    yield conn
                finally:
                    self._depth -= 1
                return
            if not durable:
                conn.execute("PRAGMA synchronous=NORMAL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                self._depth = 1
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.rollback()
                    raise
                finally:
                    self._depth = 0
                conn.execute("COMMIT")
            finally:
                if not durable:
                    conn.execute("PRAGMA synchronous=FULL")

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
