"""memory_audit: filter and page through the append-only audit log, newest first.

The log is only ever appended to (SQLite triggers refuse UPDATE and DELETE); this reads it.
Pages are keyed by ``seq`` (the cursor is the last seq of a page), so events appended while a
client pages never shift what it has still to read.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memory_service.core.errors import ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.memory.audit_schemas import AuditEntry, MemoryAuditInput, MemoryAuditOutput
from memory_service.core.ports import AuditLog, AuditQuery


def _stamp(value: datetime | None) -> str | None:
    """The log's timestamp format (UTC ISO-8601 with microseconds), so strings compare as times."""
    if value is None:
        return None
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)  # naive: read as UTC
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


class AuditQueryService:
    def __init__(self, audit: AuditLog) -> None:
        self._audit = audit

    def query(self, req: MemoryAuditInput) -> MemoryAuditOutput:
        entity_id = req.entity_id
        if req.memory_id is not None:
            memory_id = parse_uuid(req.memory_id, field="memory_id")
            if entity_id is not None and entity_id != memory_id:
                raise ValidationError(
                    "memory_id and entity_id name different entities",
                    code="VAL_CONFLICTING_FILTERS",
                    details={"field": "entity_id", "provided": entity_id[:100], "memory_id": memory_id},
                    suggestion="Give one of them: memory_id for a memory, entity_id for any entity.",
                )
            entity_id = memory_id
        if req.since is not None and req.until is not None and req.since > req.until:
            raise ValidationError(
                "since is later than until",
                code="VAL_INVALID_RANGE",
                details={"field": "since", "since": req.since.isoformat(), "until": req.until.isoformat()},
                suggestion="Give since <= until (ISO-8601 times, e.g. 2026-01-01T00:00:00Z).",
            )
        events, total = self._audit.query(
            AuditQuery(
                entity_id=entity_id,
                entity_type=req.entity_type,
                operation=req.operation,
                actor=req.actor,
                since=_stamp(req.since),
                until=_stamp(req.until),
                before_seq=_cursor(req.cursor),
                limit=req.limit + 1,  # one more tells whether an older page exists
            )
        )
        page = events[: req.limit]
        more = len(events) > req.limit
        entries = [
            AuditEntry(
                seq=e.seq or 0,
                timestamp=e.timestamp or "",
                operation=e.operation,
                entity_type=e.entity_type,
                entity_id=e.entity_id,
                actor=e.actor,
                details=e.details,
            )
            for e in page
        ]
        next_cursor = str(entries[-1].seq) if more and entries else None
        return MemoryAuditOutput(events=entries, total=total, next_cursor=next_cursor)


def _cursor(raw: str | None) -> int | None:
    if raw is None:
        return None
    text = raw.strip()
    if not text.isdigit():
        raise ValidationError(
            f"'{raw[:32]}' is not a cursor this tool returned",
            code="VAL_INVALID_CURSOR",
            details={"field": "cursor", "provided": raw[:32], "expected": "a next_cursor value"},
            suggestion="Pass next_cursor from the previous memory_audit answer unchanged, "
            "or leave cursor out to start from the newest event.",
        )
    return int(text)
