"""Making an audit event: secrets masked, the actor resolved, the details clipped.

What a mutation says of itself may repeat its input, so every event core makes goes through
:func:`audit_event` rather than the plain :class:`~memory_service.core.ports.AuditEvent`: secrets
never reach the audit (masked, and the event notes how many of which kind), a default actor
names the client that asked (:func:`memory_service.core.actor.effective`), and the details are
bounded (the record says what changed; the memory itself holds the full text).

An event read back from the log (it has its ``seq``) was checked when it was made: it is only
clipped again, as the log has always returned it.
"""

from __future__ import annotations

from typing import Any

from memory_service.core import actor as actors
from memory_service.core.limits import AUDIT_ITEMS, AUDIT_TEXT_CHARS, clip_value
from memory_service.core.ports.audit import AuditEvent
from memory_service.core.redaction.sanitize import kinds_note, scrub_value


def audit_event(
    operation: str,
    entity_type: str,
    entity_id: str,
    actor: str,
    details: dict[str, Any] | None = None,
    timestamp: str | None = None,
    seq: int | None = None,
) -> AuditEvent:
    """An event with its details scrubbed and clipped (``seq`` given: one read back from the log,
    clipped only; without it: a new event, whose actor is also resolved)."""
    details = {} if details is None else details
    if seq is None:  # a new event (one read back has its seq): as the rules stand now
        details, kinds = scrub_value(details)
        if kinds:
            details = {**details, "redacted": kinds_note(kinds)}
        actor = actors.effective(actor)
    details = clip_value(details, AUDIT_TEXT_CHARS, items=AUDIT_ITEMS)
    return AuditEvent(operation, entity_type, entity_id, actor, details, timestamp, seq)
