"""The write journal: a table of the data directory's SQLite file, whatever the queue backend.

The file is local and fsync'd at every commit (``synchronous=FULL``, :mod:`.local_db`), so an
intent is on disk before the vector store is touched. ``commit`` runs the outbox enqueue, the
audit append, the caller's local bookkeeping and the entry's deletion in one transaction: the
SQLite queue and audit log join it (:meth:`LocalDB.transaction` nests). A Redis queue cannot
join; its enqueue runs last inside the transaction, so a failed enqueue rolls everything back,
and a crash after it but before the commit leaves the entry to be replayed (at-least-once).

``applied_requests`` holds the request keys of committed writes (core/write/request_key.py), each
recorded in its write's commit transaction (or its replay's), with the answer the tool gave, so
that a re-sent tool call skips the write and answers as the first attempt did. Keys older than
:data:`KEEP_KEYS_SECONDS` are pruned when the journal opens: a re-send comes seconds later.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from memory_service.core.ports import AuditEvent, AuditLog, JournalEntry, Queue
from memory_service.stores.local.db import LocalDB, _Store

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS write_journal (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    created_at REAL NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS applied_requests (
    key TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    answer TEXT
)""",
)
KEEP_KEYS_SECONDS = 7 * 24 * 3600


class LocalWriteJournal(_Store):
    """Durable write intents; see :class:`~memory_service.core.ports.WriteJournal`."""

    def __init__(self, db: LocalDB, queue: Queue, audit: AuditLog) -> None:
        super().__init__(db)
        self._queue = queue
        self._audit = audit
        with db.transaction("journal schema") as conn:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(
                "DELETE FROM applied_requests WHERE created_at < ?", (time.time() - KEEP_KEYS_SECONDS,)
            )

    def begin(self, body: dict[str, Any]) -> str:
        with self._db.transaction("journal.begin") as conn:
            cur = conn.execute(
                "INSERT INTO write_journal(body, created_at) VALUES (?, ?)",
                (_dumps(body), time.time()),
            )
        return str(cur.lastrowid)

    def commit(
        self,
        entry_id: str | None,
        topic: str,
        ops: Sequence[dict[str, Any]],
        audit: Sequence[AuditEvent],
        also: Callable[[], None] | None = None,
        *,
        request_key: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> None:
        if entry_id is None and not (ops or audit or also or request_key):
            return
        with self._db.transaction("journal.commit") as conn:
            if audit:
                self._audit.append(audit)
            if also is not None:
                also()
            if request_key:
                conn.execute(
                    "INSERT OR IGNORE INTO applied_requests(key, created_at, answer) VALUES (?, ?, ?)",
                    (request_key, time.time(), None if answer is None else _dumps(answer)),
                )
            if entry_id is not None:
                conn.execute("DELETE FROM write_journal WHERE id = ?", (int(entry_id),))
            if ops:  # last: a queue outside this file that fails rolls the rest back
                self._queue.enqueue(topic, ops)

    def applied(self, request_key: str) -> bool:
        return self._applied_row(request_key) is not None

    def answer(self, request_key: str) -> dict[str, Any] | None:
        row = self._applied_row(request_key)
        return json.loads(row[0]) if row is not None and row[0] is not None else None

    def _applied_row(self, request_key: str) -> tuple[Any, ...] | None:
        with self._db.cursor("journal.applied") as conn:
            row = conn.execute("SELECT answer FROM applied_requests WHERE key = ?", (request_key,)).fetchone()
        return None if row is None else tuple(row)

    def pending(self) -> list[JournalEntry]:
        with self._db.cursor("journal.pending") as conn:
            rows = conn.execute("SELECT id, body FROM write_journal ORDER BY id").fetchall()
        return [JournalEntry(str(r[0]), json.loads(r[1])) for r in rows]

    def discard(self, entry_id: str) -> None:
        with self._db.transaction("journal.discard") as conn:
            conn.execute("DELETE FROM write_journal WHERE id = ?", (int(entry_id),))

    def count(self) -> int:
        with self._db.cursor("journal.count") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM write_journal").fetchone()[0])


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))
