"""What a write may change of an existing record: its version, its fact chain, a fact's content.

Seed 002: records are immutable in meaning; a fact stops holding only through memory_supersede,
which writes the change, the new fact and the links between them. The chain keys below are set by
that route alone, so no update can hide a live fact or bring a superseded one back while its
SUPERSEDES edges remain. ``expected_version`` gives callers an optimistic check on top of the
per-record write locks.
"""

from __future__ import annotations

from typing import Any

from memory_service.core.errors import ConflictError, ValidationError
from memory_service.core.models import MemoryRecord, MemoryType

# Written only by memory_supersede: together with the SUPERSEDES edges they are the fact chain.
CHAIN_KEYS = ("superseded", "superseded_by", "superseded_by_change")
SUPERSEDE_ROUTE = (
    "memory_supersede (old_fact_id = the fact that no longer holds, new_fact or new_fact_id = its "
    "replacement, change or change_id = what changed)"
)


def refuse_chain_keys(metadata: dict[str, Any], *, field: str) -> None:
    """A new record (or supersede's new fact and change) may not carry chain keys."""
    for key in CHAIN_KEYS:
        if metadata.get(key) is not None:
            raise ValidationError(
                f"Field '{field}.{key}' is set only by memory_supersede",
                code="VAL_IMMUTABLE_FIELD",
                details={"field": f"{field}.{key}", "provided": metadata[key]},
                suggestion=f"Remove '{key}' from metadata. A fact stops holding only through "
                f"{SUPERSEDE_ROUTE}.",
            )


def check_version(record: MemoryRecord, expected: int | None) -> None:
    """Optimistic concurrency: refuse when the caller's copy is not the current version."""
    if expected is not None and expected != record.version:
        raise ConflictError(
            f"Memory '{record.id}' is at version {record.version}, not the expected {expected}",
            code="CON_VERSION_MISMATCH",
            details={
                "field": "expected_version",
                "memory_id": record.id,
                "expected": expected,
                "current": record.version,
            },
            suggestion="It changed since you read it: re-read it with memory_get, redo your change "
            "on what it holds now, and retry with expected_version set to its current version.",
        )


def check_chain_keys_kept(record: MemoryRecord, updates: dict[str, Any]) -> None:
    """Refuse setting or clearing a chain key by hand (the same value again is a no-op, allowed)."""
    for key in CHAIN_KEYS:
        if key not in updates or updates[key] == record.metadata.get(key):
            continue
        if record.metadata.get("superseded"):
            how = (
                "to make its statement hold again, supersede the chain's current fact (superseded_by "
                f"'{record.metadata.get('superseded_by')}') with a new fact of that content using "
            )
        elif record.type == MemoryType.FACT:
            how = "to retire this fact, record its replacement and the change with "
        else:
            how = f"only facts form chains (a '{record.type}' memory does not); facts are retired with "
        raise ValidationError(
            f"Field 'metadata.{key}' of memory '{record.id}' is part of its fact-update chain and "
            "cannot be changed by memory_update",
            code="VAL_IMMUTABLE_FIELD",
            details={
                "field": f"metadata.{key}",
                "provided": updates[key],
                "current": record.metadata.get(key),
            },
            suggestion=f"Leave '{key}' out of the update; {how}{SUPERSEDE_ROUTE}.",
        )


def immutable_content(record: MemoryRecord) -> ValidationError:
    return ValidationError(
        f"The content of fact '{record.id}' is immutable",
        code="VAL_IMMUTABLE_CONTENT",
        details={"field": "content", "memory_id": record.id, "type": record.type},
        suggestion="A fact's statement never changes in place (seed 002): when it no longer holds, "
        f"write the new statement and the change that made it with {SUPERSEDE_ROUTE}, e.g. "
        f"old_fact_id='{record.id}', new_fact={{'content': ...}}, change={{'content': ...}}. "
        "Its metadata (except the chain keys) can still be updated.",
    )
