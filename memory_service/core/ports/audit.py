"""The audit log port: append-only mutation events and their queries."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class AuditEvent:
    """One mutation: who did what to which entity, when, with what change. A plain record: core
    makes its events with :func:`memory_service.core.audit_event.audit_event`, which masks
    secrets, resolves the actor and clips the details."""

    operation: str
    entity_type: str
    entity_id: str
    actor: str
    details: dict[str, Any] = field(default_factory=dict)
    timestamp: str | None = None
    seq: int | None = None  # its place in the log (set when read back): newer events have higher

    def at(self, timestamp: str) -> AuditEvent:
        """This event with its time set (its details as they are)."""
        return replace(self, timestamp=timestamp)


@dataclass(frozen=True)
class AuditQuery:
    """Which audit events to read: every given condition holds (``since``/``until`` are ISO-8601
    UTC timestamps, inclusive); ``before_seq`` pages back from an earlier page's last ``seq``."""

    entity_id: str | None = None
    entity_type: str | None = None
    operation: str | None = None
    actor: str | None = None
    since: str | None = None
    until: str | None = None
    before_seq: int | None = None
    limit: int = 100


@runtime_checkable
class AuditLog(Protocol):
    """Append-only log of every mutation."""

    def append(self, events: Sequence[AuditEvent]) -> None: ...

    def count(self, entity_id: str | None = None) -> int: ...

    def list(self, entity_id: str | None = None, limit: int = 100) -> list[AuditEvent]: ...

    def query(self, q: AuditQuery) -> tuple[builtins.list[AuditEvent], int]:
        """Matching events newest first (at most ``q.limit``, each with its ``seq``), and how many
        match in all (``before_seq`` aside)."""
        ...

    def memory_ids(self) -> set[str]:
        """Every memory the log has an event of, less those a ``record_lost`` event wrote off:
        each should have a record (deleted ones keep theirs)."""
        ...

    def created_with_edges(self) -> builtins.list[tuple[str, dict[str, Any]]]:
        """(memory id, details) of each ``create`` event that lists the memory's edges."""
        ...

    def close(self) -> None: ...
