"""Seed 002's link rule: a ``solution`` or ``failed_tactic`` must point at a ``problem``.

The link is ``metadata.problem_id`` (seed 002's ``links.problem_id``) or a relationship whose
target is a problem memory. Without it a fix or a dead end cannot be found from the problem it
belongs to, and utility votes (memory_feedback) have no context, so the write is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.memory.schemas import RelationshipInput
from memory_service.core.models import PROBLEM_LINKED_KINDS, MemoryStatus
from memory_service.core.records import MEMORIES, Stores

# The edge written from the solution / failed tactic to its problem when linked by metadata.
PROBLEM_EDGE = {"solution": "SOLVES", "failed_tactic": "FAILED_FOR"}
PROBLEM_KIND = "problem"


def check_problem_link(
    stores: Stores, memory_type: str, metadata: dict[str, Any], rels: Sequence[RelationshipInput], prefix: str
) -> str | None:
    """The problem id to link by an edge (from metadata), None when not needed or already linked.

    Raises:
        ValidationError: no link at all (VAL_PROBLEM_LINK_REQUIRED), or the target is not a problem
            memory (VAL_PROBLEM_LINK_INVALID).
        NotFoundError: metadata.problem_id names no active memory (NF_PROBLEM).
    """
    if memory_type not in PROBLEM_LINKED_KINDS:
        return None
    raw = metadata.get("problem_id")
    if raw is not None:
        field = f"{prefix}metadata.problem_id"
        pid = parse_uuid(str(raw), field=field)
        kind = _kinds(stores, [pid]).get(pid)
        if kind is None:
            raise NotFoundError(
                f"Problem '{pid}' not found",
                code="NF_PROBLEM",
                details={"field": field, "provided": raw},
                suggestion="Create the problem first (memory_add type='problem') and pass its memory_id, "
                "or find it with memory_search memory_types=['problem'].",
            )
        if kind != PROBLEM_KIND:
            raise _invalid(field, pid, kind, memory_type)
        metadata["problem_id"] = pid
        return None if any(r.target_id.lower() == pid for r in rels) else pid
    targets = _kinds(stores, [r.target_id for r in rels])
    if any(kind == PROBLEM_KIND for kind in targets.values()):
        return None
    raise ValidationError(
        f"A '{memory_type}' memory must be linked to the problem it addresses",
        code="VAL_PROBLEM_LINK_REQUIRED",
        details={"field": f"{prefix}metadata.problem_id", "type": memory_type},
        suggestion="Add metadata.problem_id with the memory_id of a 'problem' memory (create one with "
        "memory_add type='problem' first), or a relationship such as {'type': 'SOLVES', "
        "'target_id': '<problem id>'}.",
    )


def _kinds(stores: Stores, ids: Sequence[str]) -> dict[str, str]:
    """Active memories among ids -> their type."""
    if not ids:
        return {}
    found = stores.vectors.retrieve(MEMORIES, list(ids))
    return {p.id: str(p.payload.get("type")) for p in found if p.payload.get("status") == MemoryStatus.ACTIVE}


def _invalid(field: str, pid: str, kind: str, memory_type: str) -> ValidationError:
    return ValidationError(
        f"Memory '{pid}' is a '{kind}' memory, not a problem",
        code="VAL_PROBLEM_LINK_INVALID",
        details={"field": field, "provided": pid, "found_type": kind, "expected_type": PROBLEM_KIND},
        suggestion=f"Point the {memory_type} at a memory of type 'problem' (memory_add type='problem').",
    )
