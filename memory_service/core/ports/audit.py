"""The audit log port: append-only mutation events and their queries."""

from __future__ import annotations

import builtins
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memory_service.core import actor
from memory_service.core.limits import AUDIT_ITEMS, AUDIT_TEXT_CHARS, clip_value
from memory_service.core.redaction.sanitize import kinds_note, scrub_value


@dataclass(frozen=True)
class AuditEvent:
    """One mutation: who did what to which entity, when, with what change."""

    operation: str
    entity_type: str
    entity_id: str
    actor: str
    details: dict[str, Any] = field(default_factory=dict)
    timestamp: str | None = None
    seq: int | None = None  # its place in the log (set when read back): newer events have higher

    def __post_init__(self) -> None:
        details = self.details
        if self.seq is None:  # a new event (one read back has its seq): as the rules stand now
            # Secrets never reach the audit: masked, and the event notes how many of which kind.
            details, kinds = scrub_value(details)
            if kinds:
                details = {**details, "redacted": kinds_note(kinds)}
            object.__setattr__(self, "actor", actor.effective(self.actor))  # frozen
        # What a mutation repeats of its input is bounded: the record says what changed, and
        # the memory itself holds the full text (ids, hashes and field names are short anyway).
        object.__setattr__(self, "details", clip_value(details, AUDIT_TEXT_CHARS, items=AUDIT_ITEMS))

    def at(self, timestamp: str) -> AuditEvent:
        """This event with its time set: a copy whose details are not checked again (they were,
        when it was made; ``dataclasses.replace`` would mask and clip them a second time)."""
        event = copy.copy(self)
        object.__setattr__(event, "timestamp", timestamp)  # frozen
        return event


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
