"""The embedded audit log, an append-only table of the local SQLite file.

The connection, schema and durability settings are :class:`~.db.LocalDB`'s; the store retains it
and releases it on ``close()``. Every ``sqlite3.Error`` becomes :class:`ServiceUnavailableError`
with code ``SVC_LOCAL_STORE``.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.ports import AuditEvent, AuditQuery
from memory_service.core.records import RECORD_LOST
from memory_service.stores.local.db import _Store


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
