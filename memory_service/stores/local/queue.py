"""The embedded outbox queue: a table of the local SQLite file, consumer-aware.

A row is ``pending`` (``available_at`` says when a failed one may be retried), ``inflight`` (held
by ``consumer`` since ``claimed_at``) or ``dead``; an ack deletes it. Every operation is one
``BEGIN IMMEDIATE`` transaction, so claims are atomic across threads and across processes that
open the same file. Ids are the row ids as strings; AUTOINCREMENT never reuses the id of an acked
message, so a late ack or fail from a stale consumer can never hit a newer one.

Data directories written before consumers existed get the three columns added on open, and
their in-flight rows (a run of that version released them at every start anyway) go back to
pending.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from itertools import takewhile
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, QueueMessage
from memory_service.stores.local.db import LocalDB, _chunks, _marks, _Store

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'inflight', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    enqueued_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    consumer TEXT,
    claimed_at REAL,
    available_at REAL NOT NULL DEFAULT 0
)""",
    "CREATE INDEX IF NOT EXISTS queue_claim ON queue(topic, state, id)",
)
# Columns added since the first version, with their definitions (ALTER TABLE ADD COLUMN).
_ADDED = {"consumer": "TEXT", "claimed_at": "REAL", "available_at": "REAL NOT NULL DEFAULT 0"}
_COLUMNS = "id, topic, payload, attempts, last_error"


def backoff_seconds(attempts: int, base: float, cap: float) -> float:
    """Wait before retry number ``attempts`` (1, 2, ...): base, 2*base, 4*base... at most ``cap``."""
    return min(cap, base * 2 ** max(0, attempts - 1))


class LocalQueue(_Store):
    """Durable at-least-once outbox with the Queue port's ordering (see its docstring).

    Args:
        db: the shared local database.
        visibility_timeout: seconds after which a hold counts as a dead consumer's.
        backoff_base, backoff_max: retry backoff after a failure (doubling from base, capped).
    """

    def __init__(
        self,
        db: LocalDB,
        *,
        visibility_timeout: float = 300.0,
        backoff_base: float = 1.0,
        backoff_max: float = 300.0,
    ) -> None:
        super().__init__(db)
        self._visibility = visibility_timeout
        self._backoff = (backoff_base, backoff_max)
        with db.transaction("queue schema") as conn:
            for statement in _SCHEMA:
                conn.execute(statement)
            present = {row[1] for row in conn.execute("PRAGMA table_info(queue)")}
            for column, definition in _ADDED.items():
                if column not in present:
                    conn.execute(f"ALTER TABLE queue ADD COLUMN {column} {definition}")
            if "consumer" not in present:
                conn.execute("UPDATE queue SET state = 'pending' WHERE state = 'inflight'")

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[str]:
        now = time.time()
        ids: list[str] = []
        with self._db.transaction("queue.enqueue") as conn:
            for payload in payloads:
                cur = conn.execute(
                    "INSERT INTO queue(topic, payload, enqueued_at, updated_at) VALUES (?, ?, ?, ?)",
                    (topic, json.dumps(payload), now, now),
                )
                ids.append(str(cur.lastrowid))
        return ids

    def claim(self, topic: str, consumer: str, limit: int = 100) -> list[QueueMessage]:
        now = time.time()
        with self._db.transaction("queue.claim") as conn:
            self._reclaim(conn, topic, now - self._visibility, now)
            held_by_other = conn.execute(
                "SELECT 1 FROM queue WHERE topic = ? AND state = 'inflight' AND consumer IS NOT ? LIMIT 1",
                (topic, consumer),
            ).fetchone()
            if held_by_other:
                return []
            rows = conn.execute(
                f"SELECT {_COLUMNS}, available_at FROM queue WHERE topic = ? AND state = 'pending'"
                " ORDER BY id LIMIT ?",
                (topic, limit),
            ).fetchall()
            ready = list(takewhile(lambda r: r[5] <= now, rows))  # head of line: stop at a backoff
            for part in _chunks([r[0] for r in ready]):
                conn.execute(
                    "UPDATE queue SET state = 'inflight', consumer = ?, claimed_at = ?, updated_at = ?"
                    f" WHERE id IN ({_marks(len(part))})",
                    (consumer, now, now, *part),
                )
        return [_message(r) for r in ready]

    def ack(self, topic: str, ids: Sequence[str]) -> int:
        done = 0
        with self._db.transaction("queue.ack") as conn:
            for part in _chunks(_row_ids(ids)):
                done += conn.execute(
                    f"DELETE FROM queue WHERE topic = ? AND state != 'dead' AND id IN ({_marks(len(part))})",
                    (topic, *part),
                ).rowcount
        return done

    def fail(self, topic: str, message_id: str, error: str, *, max_attempts: int = 5) -> bool:
        row_id = next(iter(_row_ids([message_id])), None)
        now = time.time()
        with self._db.transaction("queue.fail") as conn:
            row = conn.execute(
                "SELECT attempts FROM queue WHERE id = ? AND topic = ? AND state = 'inflight'",
                (row_id, topic),
            ).fetchone()
            if row is None:
                return False
            attempts = int(row[0]) + 1
            dead = attempts >= max_attempts
            conn.execute(
                "UPDATE queue SET attempts = ?, last_error = ?, state = ?, consumer = NULL,"
                " claimed_at = NULL, available_at = ?, updated_at = ? WHERE id = ?",
                (
                    attempts,
                    error,
                    "dead" if dead else "pending",
                    now + backoff_seconds(attempts, *self._backoff),
                    now,
                    row_id,
                ),
            )
        return dead

    def release(self, topic: str, consumer: str) -> int:
        with self._db.transaction("queue.release") as conn:
            return conn.execute(
                "UPDATE queue SET state = 'pending', consumer = NULL, claimed_at = NULL, updated_at = ?"
                " WHERE topic = ? AND state = 'inflight' AND consumer = ?",
                (time.time(), topic, consumer),
            ).rowcount

    def reclaim(self, topic: str, min_idle_seconds: float | None = None) -> int:
        idle = self._visibility if min_idle_seconds is None else min_idle_seconds
        now = time.time()
        with self._db.transaction("queue.reclaim") as conn:
            return self._reclaim(conn, topic, now - idle, now)

    @staticmethod
    def _reclaim(conn: sqlite3.Connection, topic: str, claimed_before: float, now: float) -> int:
        """Holds taken at or before ``claimed_before`` go back to the head of the line."""
        return conn.execute(
            "UPDATE queue SET state = 'pending', consumer = NULL, claimed_at = NULL, updated_at = ?"
            " WHERE topic = ? AND state = 'inflight' AND COALESCE(claimed_at, 0) <= ?",
            (now, topic, claimed_before),
        ).rowcount

    def dead(self, topic: str, limit: int = 100) -> list[QueueMessage]:
        with self._db.cursor("queue.dead") as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM queue WHERE topic = ? AND state = 'dead' ORDER BY id LIMIT ?",
                (topic, limit),
            ).fetchall()
        return [_message(r) for r in rows]

    def replay_dead(self, topic: str, ids: Sequence[str] | None = None) -> int:
        """Dead rows are re-inserted at the tail (new ids, attempts 0) and the old rows deleted."""
        now = time.time()
        with self._db.transaction("queue.replay_dead") as conn:
            rows = conn.execute(
                "SELECT id, payload FROM queue WHERE topic = ? AND state = 'dead' ORDER BY id", (topic,)
            ).fetchall()
            if ids is not None:
                wanted = set(_row_ids(ids))
                rows = [r for r in rows if r[0] in wanted]
            conn.executemany(
                "INSERT INTO queue(topic, payload, enqueued_at, updated_at) VALUES (?, ?, ?, ?)",
                [(topic, payload, now, now) for _, payload in rows],
            )
            for part in _chunks([r[0] for r in rows]):
                conn.execute(f"DELETE FROM queue WHERE id IN ({_marks(len(part))})", tuple(part))
        return len(rows)

    def counts(self, topic: str | None = None) -> dict[str, int]:
        """``pending``, ``inflight`` and ``failed`` (dead); every topic when ``topic`` is None."""
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
            detail = f"{counts['failed']} dead message(s): see dead() and replay_dead()"
            return ComponentHealth("queue", "degraded", "sqlite", detail, extra=dict(counts))
        return ComponentHealth("queue", "ok", "sqlite", str(self._db.path), extra=dict(counts))


def _row_ids(ids: Sequence[str]) -> list[int]:
    """Our ids are row ids as decimal strings; anything else names no row."""
    return [int(i) for i in ids if str(i).isdigit()]


def _message(row: Sequence[Any]) -> QueueMessage:
    return QueueMessage(str(row[0]), row[1], json.loads(row[2]), row[3], row[4])
