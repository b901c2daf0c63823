"""core/audit_event.py: events core makes are masked, attributed and clipped; the port's
event is a plain record."""

from __future__ import annotations

from memory_service.core import actor
from memory_service.core.audit_event import audit_event
from memory_service.core.limits import AUDIT_TEXT_CHARS
from memory_service.core.ports import AuditEvent

SECRET = "ghp_" + "a1B2" * 9  # a GitHub token shape
DETAILS = {"note": SECRET, "blob": "b" * 10_000}


def test_the_port_event_is_a_plain_record() -> None:
    event = AuditEvent("create", "memory", "m1", actor.DEFAULT_ACTOR, DETAILS)
    assert event.details == DETAILS and event.actor == actor.DEFAULT_ACTOR


def test_a_new_event_is_masked_attributed_and_clipped() -> None:
    with actor.client("claude-code"):
        event = audit_event("create", "memory", "m1", actor.DEFAULT_ACTOR, DETAILS)
    assert SECRET not in str(event.details) and event.details["redacted"]
    assert len(event.details["blob"]) == AUDIT_TEXT_CHARS
    assert event.actor == "claude-code" and event.seq is None and event.timestamp is None


def test_an_event_read_back_is_clipped_only() -> None:
    with actor.client("claude-code"):
        event = audit_event("create", "memory", "m1", actor.DEFAULT_ACTOR, DETAILS, "t", 7)
    assert event.details["note"] == SECRET and "redacted" not in event.details
    assert len(event.details["blob"]) == AUDIT_TEXT_CHARS
    assert (event.actor, event.timestamp, event.seq) == (actor.DEFAULT_ACTOR, "t", 7)


def test_details_default_to_empty() -> None:
    assert audit_event("accept_empty", "store", "memories", "cli").details == {}
