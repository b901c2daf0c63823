"""Seed 002's semantic rules that every operation shares (checked before anything is written, in
dry runs too; profiles/interface_v1/mapping.py lists them all), and the services' errors told in
the request's field names and seed-002 operations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory_service.core.errors import MemoryServiceError, NotFoundError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.models import PROBLEM_LINKED_KINDS, MemoryStatus, MemoryType
from memory_service.core.records import MEMORIES
from memory_service.core.scopes import GLOBAL_PROJECT
from memory_service.core.write.kinds import PROBLEM_KIND
from memory_service.profiles.interface_v1.schemas import (
    FactUpdateLink,
    WriteLinks,
    WriteMemory,
)
from memory_service.profiles.services import ProfileServices

EVIDENCE_KINDS = frozenset({"change"})  # rule 3: kinds written with at least one evidence_ref


def check_evidence(memory: WriteMemory) -> None:
    """Rule 3: a ``change`` names what changed."""
    if memory.kind in EVIDENCE_KINDS and not memory.evidence_refs:
        raise ValidationError(
            f"A '{memory.kind}' memory needs at least one evidence reference",
            code="VAL_EVIDENCE_REQUIRED",
            details={"field": "memory.evidence_refs", "kind": memory.kind, "rule": "change_needs_evidence"},
            suggestion="Add memory.evidence_refs with what shows the change, e.g. ['commit:3f2a91c', "
            "'pr:1234', 'src/payments/retry.py'].",
        )


def check_write_links(services: ProfileServices, repo_id: str, kind: str, links: WriteLinks) -> None:
    """Rules 1 and 2 for a write's links. The problem link of a solution or failed tactic is
    checked by MemoryService.add (the shared rule); here: the repository of every linked memory,
    and the problem link of the other kinds."""
    named = {"memory.links.problem_id": links.problem_id} if links.problem_id else {}
    for i, mid in enumerate(links.related_memory_ids or []):
        named[f"memory.links.related_memory_ids[{i}]"] = mid
    found = in_repository(services, repo_id, named)
    if links.problem_id is None or kind in PROBLEM_LINKED_KINDS:
        return
    problem = found.get("memory.links.problem_id")
    if problem is None or problem.get("status") != MemoryStatus.ACTIVE:
        raise _problem_not_found(links.problem_id)
    if problem.get("type") != PROBLEM_KIND:
        raise _not_a_problem(links.problem_id, str(problem.get("type")), kind)


def check_link_evidence(services: ProfileServices, change_id: str, body: FactUpdateLink) -> None:
    """Rule 3 for a fact_update_link: evidence on the link, or on the change it links. A memory
    that is not a change is left to SupersedeService, which refuses it."""
    if body.evidence_refs:
        return
    change = services.memory.load(change_id, field="memory_id")
    if change.type != MemoryType.CHANGE or strings(change.metadata.get("evidence_refs")):
        return
    raise ValidationError(
        "A fact_update_link needs evidence: the change it links has none, and the update gives none",
        code="VAL_EVIDENCE_REQUIRED",
        details={
            "field": "update.evidence_refs",
            "change_id": change.id,
            "rule": "fact_update_needs_evidence",
        },
        suggestion="Add update.evidence_refs with what shows the change invalidated the fact, e.g. "
        "['commit:3f2a91c', 'src/config.py'].",
    )


def strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


# --------------------------------------------------------------------------- shared rules


def in_repository(
    services: ProfileServices, repo_id: str, named: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Rule 2: the memories a request names (field -> id) that exist must be the repository's own
    or global; returns their payloads by field. Unknown ids are left to the services, which say
    which kind of memory was not found.

    Raises:
        ValidationError: an id is not a UUID (VAL_INVALID_UUID).
        NotFoundError: an id names another repository's memory (NF_MEMORY, like an unknown id).
    """
    ids = {field: parse_uuid(mid, field=field) for field, mid in named.items()}
    if not ids:
        return {}
    stored = {p.id: p.payload for p in services.stores.vectors.retrieve(MEMORIES, list(set(ids.values())))}
    found: dict[str, dict[str, Any]] = {}
    for field, mid in ids.items():
        payload = stored.get(mid)
        if payload is None or payload.get("status") == MemoryStatus.DELETED:
            continue
        if payload.get("project") not in (repo_id, GLOBAL_PROJECT):
            raise NotFoundError(
                f"Memory '{mid}' not found in repository '{repo_id}'",
                code="NF_MEMORY",
                details={"field": field, "provided": named[field], "repo_id": repo_id},
                suggestion="Use an id memory.read returns for this repo_id (a repository's memories are "
                "its own; memories written with scope 'global' are shared).",
            )
        found[field] = payload
    return found


def _problem_not_found(problem_id: str) -> NotFoundError:
    return NotFoundError(
        f"Problem '{problem_id}' not found",
        code="NF_PROBLEM",
        details={"field": "memory.links.problem_id", "provided": problem_id},
        suggestion=SUGGESTIONS["NF_PROBLEM"],
    )


def _not_a_problem(problem_id: str, found: str, kind: str) -> ValidationError:
    return ValidationError(
        f"Memory '{problem_id}' is a '{found}' memory, not a problem",
        code="VAL_PROBLEM_LINK_INVALID",
        details={
            "field": "memory.links.problem_id",
            "provided": problem_id,
            "found_type": found,
            "expected_type": PROBLEM_KIND,
            "kind": kind,
        },
        suggestion=SUGGESTIONS["VAL_PROBLEM_LINK_INVALID"],
    )


# --------------------------------------------------------------------------- errors in seed terms

SUGGESTIONS = {
    "VAL_PROBLEM_LINK_REQUIRED": "Give memory.links.problem_id: the memory_id of a 'problem' memory (write "
    "one with memory.write kind='problem' first, or find it with memory.read kinds=['problem']).",
    "VAL_PROBLEM_LINK_INVALID": "Point links.problem_id (or update.problem_id) at a memory of kind "
    "'problem' (memory.read kinds=['problem'] finds them).",
    "NF_PROBLEM": "Write the problem first (memory.write kind='problem') and pass its memory_id, or find "
    "it with memory.read kinds=['problem'].",
}
# The services' words for their own tools, as seed-002 operations (longest first).
_TOOLS = (
    ("memory_search memory_types=['problem']", "memory.read kinds=['problem']"),
    ("memory_add type='problem'", "memory.write kind='problem'"),
    ("memory_search", "memory.read"),
    ("memory_add", "memory.write"),
    ("memory_get", "memory.read"),
    ("memory_feedback", "memory.update utility_vote"),
    ("memory_supersede", "memory.update fact_update_link"),
    ("include_superseded=true", "expand.include_fact_update_links"),
)
_RELATIONSHIP_FIELD = re.compile(r"^relationships\[(\d+)\]\.target_id$")


def in_seed_terms(exc: MemoryServiceError, fields: Mapping[str, str]) -> MemoryServiceError:
    """The same error (code, message, category) with the request's field names and seed-002
    operations in its details and suggestion."""
    field = exc.details.get("field")
    if isinstance(field, str):
        exc.details = {**exc.details, "field": _rename(field, fields)}
    exc.suggestion = SUGGESTIONS.get(exc.code) or retool(exc.suggestion)
    return exc


def _rename(field: str, fields: Mapping[str, str]) -> str:
    if match := _RELATIONSHIP_FIELD.match(field):
        return f"memory.links.related_memory_ids[{match.group(1)}]"
    for ours in sorted(fields, key=len, reverse=True):
        if field == ours or field.startswith((f"{ours}.", f"{ours}[")):
            return fields[ours] + field[len(ours) :]
    return field


def retool(text: str) -> str:
    for ours, theirs in _TOOLS:
        text = text.replace(ours, theirs)
    return text
