"""What a write may change of an existing record: its version, its fact chain, its kind's record.

Seed 002: records are immutable in meaning; a fact stops holding only through memory_supersede,
which writes the change, the new fact and the links between them. The chain keys below are set by
that route alone, so no update can hide a live fact or bring a superseded one back while its
SUPERSEDES edges remain. ``expected_version`` gives callers an optimistic check on top of the
per-record write locks.

The rules of a kind (:data:`KIND_RULES`) hold whichever tool touches a record: MemoryService's
update and delete check them, and every profile's update and delete (seed 001's memory_update /
memory_delete, seed 003's, seed 004's store under a known key) goes through those two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_service.core.errors import ConflictError, ValidationError
from memory_service.core.models import SEED_002_KINDS, MemoryRecord, MemoryType

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


# ------------------------------------------------------------------ the kinds' rules (seed 002)


@dataclass(frozen=True)
class KindRule:
    """What memory_update and memory_delete may do to a record of one kind, whichever tool calls.

    ``fixed_keys``: metadata written with the record and part of it like its text. Archiving
    (memory_update ``archived``, seed 002's archive_state) is always allowed: it hides a record
    without changing or removing it, and a restore brings it back as it was.
    """

    content: bool = True  # its content may change
    fixed_keys: tuple[str, ...] = ()
    deletable: bool = True
    retire: str = ""  # how such a record stops holding instead (the refusals' suggestion)


# Seed 002: "write creates immutable memory records and immutable link/evidence records"; its
# update is lifecycle and feedback only. What memory.write records besides the text: the
# write-time confidence, the rationale, the evidence, the links and the repository.
RECORD_KEYS = ("confidence", "rationale", "evidence_refs", "problem_id", "related_memory_ids", "repo_id")
ARCHIVE_ROUTE = (
    "memory_update {'archived': true} (seed 002: memory.update archive_state), which hides it and "
    "keeps it restorable"
)
_RECORD = KindRule(
    content=False,
    fixed_keys=RECORD_KEYS,
    deletable=False,
    retire=f"write a new record (linked to this one if it helps) and retire this one with {ARCHIVE_ROUTE}",
)
KIND_RULES: dict[str, KindRule] = {kind: _RECORD for kind in SEED_002_KINDS}
KIND_RULES[MemoryType.FACT.value] = KindRule(
    content=False,
    fixed_keys=RECORD_KEYS,
    deletable=False,
    retire=f"when it no longer holds, record its replacement and the change with {SUPERSEDE_ROUTE}; "
    f"to hide it, {ARCHIVE_ROUTE}",
)
_FREE = KindRule()


def rule_of(record: MemoryRecord) -> KindRule:
    return KIND_RULES.get(str(record.type), _FREE)


def check_kind_update(record: MemoryRecord, content: str | None, metadata: dict[str, Any] | None) -> None:
    """Refuse an update the record's kind does not take: new content, or a changed fixed key
    (giving the same value again is a no-op, allowed)."""
    rule = rule_of(record)
    if not rule.content and content is not None and content != record.content:
        raise immutable_content(record, rule)
    for key in rule.fixed_keys:
        if metadata is not None and key in metadata and metadata[key] != record.metadata.get(key):
            raise ValidationError(
                f"Field 'metadata.{key}' of {record.type} '{record.id}' is part of the record and "
                "cannot be changed",
                code="VAL_IMMUTABLE_FIELD",
                details={
                    "field": f"metadata.{key}",
                    "memory_id": record.id,
                    "type": record.type,
                    "provided": metadata[key],
                    "current": record.metadata.get(key),
                },
                suggestion=f"Leave '{key}' out of the update (a {record.type} is an immutable record, "
                f"seed 002; its tags and other metadata may change). To change what it records, "
                f"{rule.retire}.",
            )


def check_kind_delete(record: MemoryRecord) -> None:
    """Refuse deleting a record its kind keeps (seed 002's records are archived, never deleted)."""
    rule = rule_of(record)
    if rule.deletable:
        return
    raise ValidationError(
        f"A {record.type} memory is an immutable record: '{record.id}' cannot be deleted",
        code="VAL_IMMUTABLE_RECORD",
        details={"field": "memory_id", "memory_id": record.id, "type": record.type},
        suggestion=f"Seed 002's records are kept (their votes, links and chains point at them): "
        f"{rule.retire}.",
    )


def immutable_content(record: MemoryRecord, rule: KindRule | None = None) -> ValidationError:
    rule = rule or rule_of(record)
    if record.type == MemoryType.FACT:
        how = (
            "A fact's statement never changes in place (seed 002): when it no longer holds, write the "
            f"new statement and the change that made it with {SUPERSEDE_ROUTE}, e.g. "
            f"old_fact_id='{record.id}', new_fact={{'content': ...}}, change={{'content': ...}}."
        )
    else:
        how = f"A {record.type} is an immutable record (seed 002): {rule.retire}."
    return ValidationError(
        f"The content of {record.type} '{record.id}' is immutable",
        code="VAL_IMMUTABLE_CONTENT",
        details={"field": "content", "memory_id": record.id, "type": record.type},
        suggestion=f"{how} Its tags and metadata (except {', '.join(rule.fixed_keys)} and the chain "
        "keys) can still be updated.",
    )


# ------------------------------------------------------------------ governance (seed 004 FR-036/037)

DECISION_EXITS = ("deprecated", "superseded")
LOCKED_SPEC_STATUSES = ("approved", "implemented", "verified")
SPEC_VERSION_KEY = "spec_version"
_FREE_KEYS = ("tags",)  # bookkeeping an update may always change
# How a specification is tracked, not what it says: an approved spec's status, priority and tags
# change without a version bump (seed 001's own memory_update example re-prioritises a requirement).
SPEC_TRACKING_KEYS = ("status", "priority", *_FREE_KEYS)


def is_accepted_decision(record: MemoryRecord) -> bool:
    """A design memory (an ADR or any decision) whose status is accepted: read-only content."""
    return record.type == MemoryType.DESIGN and str(record.metadata.get("status", "")).lower() == "accepted"


# What a specification is: a requirement, or a documentation section (seed 004) given a status.
SPEC_TYPES = (MemoryType.REQUIREMENTS, MemoryType.SECTION)


def is_locked_spec(record: MemoryRecord) -> bool:
    """An approved (or later: implemented, verified) requirement or section: write-locked."""
    return (
        record.type in SPEC_TYPES and str(record.metadata.get("status", "")).lower() in LOCKED_SPEC_STATUSES
    )


def check_governed_update(
    record: MemoryRecord, content: str | None, metadata: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Refuse what an accepted decision or an approved spec may not take; returns the metadata to
    apply (an approved spec's version bump also sends it back to Draft)."""
    changed_content = content is not None and content != record.content
    changes = {k: v for k, v in (metadata or {}).items() if record.metadata.get(k) != v}
    if is_accepted_decision(record):
        status = str(changes.get("status", "")).lower()
        others = sorted(k for k in changes if k not in ("status", *_FREE_KEYS))
        if changed_content or others or ("status" in changes and status not in DECISION_EXITS):
            raise _immutable_decision(record, "content" if changed_content else (others or ["status"])[0])
        return metadata
    if is_locked_spec(record):
        if not changed_content and set(changes) <= set(SPEC_TRACKING_KEYS):
            return metadata
        bumped = changes.get(SPEC_VERSION_KEY)
        current = record.metadata.get(SPEC_VERSION_KEY, "1")
        if bumped is None or not _newer(bumped, current):
            raise _locked_spec(record, current, bumped)
        return {**(metadata or {}), "status": "Draft"}
    return metadata


def _version(value: Any) -> tuple[int, ...] | None:
    text = str(value).strip().lstrip("vV")
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return None


def _newer(new: Any, current: Any) -> bool:
    a, b = _version(new), _version(current)
    return a is not None and (b is None or a > b)


def _immutable_decision(record: MemoryRecord, field: str) -> ConflictError:
    return ConflictError(
        f"Decision '{record.id}' is accepted: its {field} cannot be changed",
        code="CON_IMMUTABLE_DECISION",
        details={
            "field": field if field == "content" else f"metadata.{field}",
            "memory_id": record.id,
            "status": record.metadata.get("status"),
        },
        suggestion="An accepted decision is read-only (seed 004). Record the new decision as a new design "
        "memory (memory_add with a relationship {type: 'SUPERSEDES', target_id: this id}), then retire "
        "this one with memory_update metadata {'status': 'superseded'} (or 'deprecated' when nothing "
        "replaces it); its tags may still change.",
    )


def _locked_spec(record: MemoryRecord, current: Any, given: Any) -> ConflictError:
    return ConflictError(
        f"Specification '{record.id}' is {record.metadata.get('status')}: it is write-locked",
        code="CON_SPEC_LOCKED",
        details={
            "field": f"metadata.{SPEC_VERSION_KEY}",
            "memory_id": record.id,
            "current_version": current,
            "provided": given,
        },
        suggestion=f"Change an approved specification with a version bump: include metadata "
        f"{{'{SPEC_VERSION_KEY}': a version above {current!r}}} in the same memory_update; the change "
        "is stored and the specification returns to Draft for re-approval. Changes of status (e.g. "
        "to Implemented or Deprecated), priority or tags alone need no bump.",
    )
